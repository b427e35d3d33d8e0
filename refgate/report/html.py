"""The self-contained HTML report (Jinja2, autoescape on; templates beside this module).

One file with its CSS, its small script and its charts inline: it makes no network request, reads
without JavaScript, and shows every string that came from a model, a document or a web page as
text (escaped; URLs linked only when http(s)). A Content-Security-Policy meta tag allows only the
report's own style and script (by hash) and ``data:`` images.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import DictLoader, Environment, StrictUndefined
from markupsafe import Markup

from refgate.report import cards as cardlib
from refgate.report.answer import answer_html, strip_unmet_section
from refgate.report.cards import is_http
from refgate.report.links import allowed_urls, research_urls
from refgate.report.run import header_facts
from refgate.report.shape import clean_research, clean_run

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _env() -> Environment:
    """The Jinja environment, every template read once per process: a long-running process (a
    server, a benchmark) renders with the templates of the code it loaded, as the markdown and
    terminal renderers (code) do, even when the files on disk change under it (an upgrade, a
    checkout or rebase of the tree). With a file loader Jinja re-reads a template whose file
    changed: a benchmark once rendered cards without the "computed after reading" label from an
    older template checked out mid-run, while its markdown (code) kept the label."""
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(TEMPLATES.glob("*.j2"))}
    env = Environment(
        loader=DictLoader(sources),
        auto_reload=False,
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.tests["http_url"] = is_http
    return env


def _digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


@cache
def _assets() -> dict[str, str]:
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    csp = (
        "default-src 'none'; img-src data:; "
        f"style-src '{_digest(css)}'; script-src '{_digest(js)}'; "
        "base-uri 'none'; form-action 'none'"
    )
    return {"css": css, "js": js, "csp": csp}


def _page(template: str, **context: Any) -> str:
    assets = _assets()
    return (
        _env()
        .get_template(template)
        .render(css=Markup(assets["css"]), js=Markup(assets["js"]), csp=assets["csp"], **context)
    )


def render_run_html(
    record: Mapping[str, object], charts: Sequence[Mapping[str, object]] = ()
) -> str:
    """The HTML report of a workbench run (``record`` from ``run_record``; ``charts`` from
    ``collect_charts``)."""
    record = clean_run(record)
    refs = record["refs"]
    gate = record.get("gate") or {}
    answer = str(record.get("answer") or "")
    cited, other = cardlib.build_cards(answer, refs, gate)
    by_id: dict[object, cardlib.Card] = {c["id"]: c for c in cited + other}
    charts = [dict(chart, anchor=f"chart-{n}") for n, chart in enumerate(charts, 1)]
    for chart in charts:  # a card links to the chart of its table (each chart is embedded once)
        for key in ("source_ref", "ref_id"):
            target = by_id.get(chart.get(key))
            if target is not None and target["chart"] is None:
                target["chart"] = {"anchor": chart["anchor"], "title": chart["title"]}
    body = strip_unmet_section(answer) if not gate.get("passed") else answer
    allowed = allowed_urls(refs, [record["question"]])
    numbers = cardlib.citation_numbers(
        answer, *(t["answer"] for t in record["earlier_turns"]), refs=refs
    )
    for c in cited + other:
        c["number"] = numbers.get(c["id"])
    earlier = [
        {
            **turn,
            "html": Markup(
                answer_html(strip_unmet_section(turn["answer"]), refs, allowed, numbers)
            ),
        }
        for turn in record["earlier_turns"]
    ]
    return _page(
        "run.html.j2",
        record=record,
        facts=header_facts(record),
        verdict=cardlib.verdict(gate),
        answer=Markup(answer_html(body, refs, allowed, numbers)),
        earlier=earlier,
        cited=cited,
        other=other,
        charts=charts,
        unmet=cardlib.unmet_claims(gate),
        warnings=cardlib.warnings(gate),
        conclusions=[cardlib.clip(c, 2000) for c in gate.get("conclusions") or []],
        conclusions_note=cardlib.CONCLUSIONS_NOTE,
        outbound=[cardlib.clip(x, 2000) for x in cardlib.sent_lines(record.get("outbound") or [])],
        critiques=[cardlib.clip(c, 2000) for c in record.get("critiques") or []],
        caveats=[cardlib.clip(c, 2000) for c in record.get("caveats") or []],
    )


def render_research_html(report: Mapping[str, object]) -> str:
    """The HTML report of a deep-research run (``report`` as ``build_report`` returns it)."""
    allowed = research_urls(report)
    report = clean_research(report)
    return _page(
        "research.html.j2",
        report=report,
        allowed=allowed,
        groups=[
            ("verified", "Verified claims", report["confirmed"]),
            ("refuted", "Refuted claims", report["refuted"]),
            ("unverified", "Unverified claims", report["unverified"]),
        ],
        findings=report["findings"],
        sources=report["sources"],
        sent=[cardlib.clip(x, 2000) for x in cardlib.sent_lines(report["sent"])],
    )

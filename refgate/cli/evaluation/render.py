"""Eval reports: ``.json`` (the machine document), ``.md`` and ``.html`` (for people).

Every format leads with false acceptance (wrong answers the GATE passed), then false blocks.
The HTML is one self-contained file rendered by Jinja2 with autoescape: answers and questions are
data, never markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from typing_extensions import TypedDict

from refgate.cli.evaluation.compare import Comparison
from refgate.cli.evaluation.metrics import CELLS, Summary, summarize
from refgate.cli.evaluation.questions import EvalError
from refgate.cli.evaluation.store import EvalResult
from refgate.report.output import ReportError, write_atomic

FORMATS = (".json", ".md", ".html")
_CELL_TITLES = {
    "wrong_passed": "wrong but passed (false acceptance)",
    "correct_blocked": "correct but blocked (false block)",
    "correct_passed": "correct and passed",
    "wrong_blocked": "wrong and blocked",
    "failed": "run failed",
}


class EvalDocument(TypedDict):
    """An eval run's report (``report_document``), whatever its format."""

    run_id: str
    meta: Mapping[str, object]
    summary: Summary
    questions: Sequence[EvalResult]


def report_document(
    run_id: str, meta: Mapping[str, object], results: Sequence[EvalResult]
) -> EvalDocument:
    """The JSON document: ``run_id``, ``meta``, ``summary``, ``questions``."""
    return {"run_id": run_id, "meta": meta, "summary": summarize(results), "questions": results}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def summary_rows(summary: Summary) -> list[tuple[str, str]]:
    """(label, value) rows of a summary, false acceptance first."""
    n = summary["n"]
    rows = [(_CELL_TITLES[c], f"{summary[c]} of {n}") for c in (*CELLS, "failed")]
    rows += [
        ("false acceptance rate (of passed)", _pct(summary["false_acceptance_rate"])),
        ("false block rate (of correct)", _pct(summary["false_block_rate"])),
        ("exact numeric match", _pct(summary["exact_numeric"])),
        ("text match", _pct(summary["text_match"])),
        ("refusals correct", f"{summary['refused_correct']} of {summary['refusals_expected']}"),
        (
            "tokens (in / out)",
            f"{summary['tokens'].get('input_tokens', 0)} / "
            f"{summary['tokens'].get('output_tokens', 0)}",
        ),
        (
            "estimated cost",
            "unknown"
            if summary["cost_usd"] is None
            else f"${summary['cost_usd']:.4f} ({summary['cost_known_for']} priced)",
        ),
        ("time (sum over questions)", f"{summary['seconds']:.1f} s"),
        ("tool calls / WORK retries", f"{summary['tool_calls']} / {summary['retries']}"),
    ]
    return rows


#: Questions are listed worst first: false acceptance, false block, failed, then the rest.
_REVIEW_ORDER = {
    "wrong_passed": 0,
    "correct_blocked": 1,
    "failed": 2,
    "wrong_blocked": 3,
    "correct_passed": 4,
}


def _review_order(questions: Sequence[EvalResult]) -> list[EvalResult]:
    return sorted(questions, key=lambda r: _REVIEW_ORDER.get(r.get("cell", ""), 9))


def _md_cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")[:300]


def to_markdown(doc: EvalDocument) -> str:
    lines = [f"# refgate eval {doc['run_id']}", ""]
    meta = doc.get("meta") or {}
    for key in ("questions_file", "workspace", "model", "started"):
        if meta.get(key):
            lines.append(f"- {key.replace('_', ' ')}: `{_md_cell(meta[key])}`")
    lines += ["", "| metric | value |", "| --- | --- |"]
    lines += [f"| {a} | {b} |" for a, b in summary_rows(doc["summary"])]
    lines += [
        "",
        "| id | cell | exit | why | tokens | s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in _review_order(doc["questions"]):
        tok = (r.get("tokens") or {}).get("total_tokens", 0)
        lines.append(
            f"| {_md_cell(r['id'])} | {r.get('cell')} | {r.get('exit')} | "
            f"{_md_cell(r.get('why') or '')} | {tok} | {r.get('seconds', 0):.1f} |"
        )
    return "\n".join(lines) + "\n"


def to_html(doc: EvalDocument) -> str:
    env = Environment(
        loader=FileSystemLoader(str(Path(__file__).parent)),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    questions = _review_order(doc["questions"])
    return env.get_template("eval_report.html.j2").render(
        doc=doc, rows=summary_rows(doc["summary"]), questions=questions, titles=_CELL_TITLES
    )


def write_report(path: Path, doc: EvalDocument) -> None:
    """Write ``doc`` in the format its extension names."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise EvalError(f"--output {path}: use a .json, .md or .html file")
    if suffix == ".json":
        text = json.dumps(doc, indent=2, ensure_ascii=False, default=str)
    elif suffix == ".md":
        text = to_markdown(doc)
    else:
        text = to_html(doc)

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(path, text)  # whole or not at all, as every refgate report file
    except ReportError as exc:
        raise EvalError(f"--output {path}: {exc}") from None


def compare_markdown(cmp: Comparison, a: str, b: str) -> str:
    """The comparison as a markdown table of changed questions plus the cell deltas."""
    lines = [
        f"# eval {a} -> {b}",
        "",
        "| cell | " + a + " | " + b + " | change |",
        "| --- | --- | --- | --- |",
    ]
    for key in (*CELLS, "failed"):
        lines.append(
            f"| {key} | {cmp['summary_a'][key]} | {cmp['summary_b'][key]} | "
            f"{cmp['delta'][key]:+d} |"
        )
    lines += ["", "| id | " + a + " | " + b + " | change |", "| --- | --- | --- | --- |"]
    for c in cmp["changes"]:
        lines.append(f"| {_md_cell(c['id'])} | {c['a']} | {c['b']} | {c['change']} |")
    if not cmp["changes"]:
        lines.append("| (no question changed cell) | | | |")
    for side, ids in (("only in " + a, cmp["only_a"]), ("only in " + b, cmp["only_b"])):
        if ids:
            lines += ["", f"{side}: " + ", ".join(ids)]
    return "\n".join(lines) + "\n"

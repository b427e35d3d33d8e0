"""Writing a report file: the format follows the extension (.md, .html, .pdf, .docx, .json).

The format is checked before a run starts (``output_format``), and the file is written whole or
not at all (a temporary file beside it, then renamed), so a failure never leaves half a report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from refgate import files
from refgate.errors import InputError
from refgate.report.charts import chart_roots, collect_charts
from refgate.report.controls import visible_controls
from refgate.report.html import render_research_html, render_run_html
from refgate.report.markdown import render_run_markdown
from refgate.report.pdf import PdfError, html_to_pdf
from refgate.report.word import render_run_docx, render_text_docx

FORMATS = {
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".json": "json",
    ".pdf": "pdf",
    ".docx": "docx",
}


class ReportError(InputError, ValueError):
    """A report that cannot be written (unknown extension, unwritable folder)."""


def output_format(path: str | Path) -> str:
    """``md``, ``html`` or ``json`` from the file's extension; ``ReportError`` otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ReportError(
            f"cannot tell the report format of {str(path)!r}: use a file ending in .md, .html, "
            ".pdf, .docx or .json"
        )
    folder = Path(path).expanduser().resolve().parent
    if not folder.is_dir():
        raise ReportError(f"the folder {str(folder)!r} does not exist")
    return FORMATS[suffix]


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (``refgate.files.write_atomic``); an
    unwritable target is a ``ReportError`` naming it."""
    target = Path(path).expanduser()
    try:
        return files.write_atomic(target, data)
    except OSError as exc:
        raise ReportError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None


def to_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n"


def write_run_report(
    path: str | Path, record: Mapping[str, object], workspace: str | Path | None = None
) -> Path:
    """Write a workbench run's report in the format of ``path``. The HTML and PDF reports embed
    the run's charts, read from the artifacts folder of ``workspace`` (its root) only."""

    def html() -> str:
        refs = record.get("refs")
        charts = collect_charts(refs if isinstance(refs, Mapping) else {}, chart_roots(workspace))
        return render_run_html(record, charts)

    renderers: dict[str, Callable[[], str | bytes]] = {
        "md": lambda: render_run_markdown(record),
        "html": html,
        "json": lambda: to_json(record),
        "pdf": lambda: _pdf(html()),
        "docx": lambda: render_run_docx(record),
    }
    return write_atomic(path, renderers[output_format(path)]())


def _pdf(html: str) -> bytes:
    try:
        return html_to_pdf(html)
    except PdfError as exc:
        raise ReportError(str(exc)) from None


def write_research_report(
    path: str | Path, report: Mapping[str, object], markdown: Callable[[Mapping[str, Any]], str]
) -> Path:
    """Write a deep-research report; ``markdown`` is the research graph's own markdown renderer."""

    renderers: dict[str, Callable[[], str | bytes]] = {
        "md": lambda: visible_controls(markdown(report)),
        "html": lambda: render_research_html(report),
        "json": lambda: to_json(report),
        "pdf": lambda: _pdf(render_research_html(report)),
        "docx": lambda: render_text_docx(str(report.get("question") or ""), markdown(report)),
    }
    return write_atomic(path, renderers[output_format(path)]())

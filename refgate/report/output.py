"""Writing a report file: the format follows the extension (.md, .html, .json).

The format is checked before a run starts (``output_format``), and the file is written whole or
not at all (a temporary file beside it, then renamed), so a failure never leaves half a report.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from refgate.report.controls import visible_controls
from refgate.report.html import render_research_html, render_run_html
from refgate.report.markdown import render_run_markdown

FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


class ReportError(ValueError):
    """A report that cannot be written (unknown extension, unwritable folder)."""


def output_format(path: str | Path) -> str:
    """``md``, ``html`` or ``json`` from the file's extension; ``ReportError`` otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ReportError(
            f"cannot tell the report format of {str(path)!r}: use a file ending in .md, .html "
            "or .json"
        )
    folder = Path(path).expanduser().resolve().parent
    if not folder.is_dir():
        raise ReportError(f"the folder {str(folder)!r} does not exist")
    return FORMATS[suffix]


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder."""
    target = Path(path).expanduser()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise ReportError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ReportError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
    return target


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n"


def write_run_report(
    path: str | Path, record: Mapping[str, Any], charts: Sequence[Mapping[str, Any]] = ()
) -> Path:
    """Write a workbench run's report in the format of ``path``."""

    renderers: dict[str, Callable[[], str]] = {
        "md": lambda: render_run_markdown(record),
        "html": lambda: render_run_html(record, charts),
        "json": lambda: to_json(record),
    }
    return write_atomic(path, renderers[output_format(path)]())


def write_research_report(
    path: str | Path, report: Mapping[str, Any], markdown: Callable[[Mapping[str, Any]], str]
) -> Path:
    """Write a deep-research report; ``markdown`` is the research graph's own markdown renderer."""

    renderers: dict[str, Callable[[], str]] = {
        "md": lambda: visible_controls(markdown(report)),
        "html": lambda: render_research_html(report),
        "json": lambda: to_json(report),
    }
    return write_atomic(path, renderers[output_format(path)]())

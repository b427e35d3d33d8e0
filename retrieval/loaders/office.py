"""Word (python-docx) and Excel (openpyxl) files.

A DOCX is one ``Part``: paragraphs in document order, headings (``Title``, ``Heading N``) as
markdown ``#`` lines, tables as markdown tables (also kept as structured ``tables``). An XLSX is
one ``Part`` per non-empty sheet (``key`` ``sheet-<name>``, ``meta`` ``sheet``): the sheet as a
markdown table whose first non-empty row is the header, and the same table in ``tables``. Cells
are read with ``data_only=True``: a formula contributes the value Excel last saved with it (none
when the file was written by a program that never computed it).
"""

from __future__ import annotations

import re
import zipfile
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from refgate.retrieval.loaders.base import Part, Unreadable, markdown_table, table_from_rows

#: Rows read from one sheet at most (a sheet beyond it is cut and says so in ``meta``).
MAX_SHEET_ROWS = 20_000
_HEADING = re.compile(r"^heading\s*(\d)$", re.I)


def _check_zip(path: Path, kind: str) -> None:
    if path.stat().st_size == 0:
        raise Unreadable("empty file (0 bytes)")
    if not zipfile.is_zipfile(path):
        raise Unreadable(
            f"not a readable {kind} (encrypted, or corrupt: not an Office zip package)"
        )


def read_docx(path: Path) -> list[Part]:
    """A Word document as one part."""
    _check_zip(path, "DOCX")
    try:
        # deferred: optional dependency (python-docx)
        import docx
        from docx.table import Table
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise Unreadable(f"python-docx is not installed ({exc})") from None
    try:
        document = docx.Document(str(path))
    except Exception as exc:
        raise Unreadable(f"corrupt DOCX ({type(exc).__name__}: {exc})") from None
    blocks: list[str] = []
    tables: list[dict[str, Any]] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            table = table_from_rows([[cell.text for cell in row.cells] for row in item.rows])
            if table is not None:
                tables.append(table)
                blocks.append(markdown_table(table))
            continue
        text = " ".join(item.text.split())
        if not text:
            continue
        style = (item.style.name if item.style is not None else "") or ""
        m = _HEADING.match(style)
        if style.lower() == "title":
            blocks.append(f"# {text}")
        elif m:
            blocks.append(f"{'#' * min(max(int(m.group(1)), 1), 6)} {text}")
        else:
            blocks.append(text)
    return [Part("\n\n".join(blocks), tables=tables)]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def read_xlsx(path: Path) -> list[Part]:
    """One part per non-empty sheet of a workbook."""
    _check_zip(path, "XLSX")
    try:
        # deferred: optional dependency (openpyxl)
        import openpyxl
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise Unreadable(f"openpyxl is not installed ({exc})") from None
    try:
        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    except Exception as exc:
        raise Unreadable(f"corrupt XLSX ({type(exc).__name__}: {exc})") from None
    parts: list[Part] = []
    try:
        for sheet in book.worksheets:
            rows: list[list[str]] = []
            cut = False
            for n, row in enumerate(sheet.iter_rows(values_only=True)):
                if n >= MAX_SHEET_ROWS:
                    cut = True
                    break
                rows.append([_cell(v) for v in row])
            table = table_from_rows(rows)
            if table is None:
                continue
            meta: dict[str, Any] = {"sheet": sheet.title}
            if cut:
                meta["rows_cut_at"] = MAX_SHEET_ROWS
            parts.append(
                Part(
                    f"# {sheet.title}\n\n{markdown_table(table)}",
                    key=f"sheet-{sheet.title}",
                    meta=meta,
                    tables=[table],
                )
            )
    finally:
        book.close()
    if not parts:
        raise Unreadable("the workbook has no non-empty sheet")
    return parts

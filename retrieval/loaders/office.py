"""Word (python-docx) and Excel (openpyxl) files.

A DOCX is one ``Part``: paragraphs in document order, headings (``Title``, ``Heading N``) as
markdown ``#`` lines, tables as markdown tables (also kept as structured ``tables``). An XLSX is
one ``Part`` per non-empty sheet (``key`` ``sheet-<name>``, ``meta`` ``sheet``): the sheet as a
markdown table whose first non-empty row is the header, and the same table in ``tables``. Cells
are read with ``data_only=True``: a formula contributes the value Excel last saved with it (none
when the file was written by a program that never computed it).

Both are ZIP packages, checked before they are opened (``_check_zip``: total and per-part
uncompressed size, compression ratio); a workbook's sheets' declared dimensions must stay within
a cell bound, and its cells stream, capped (``IngestLimits``).
"""

from __future__ import annotations

import re
import zipfile
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from refgate.retrieval.loaders.base import (
    Part,
    TableRecord,
    Unreadable,
    markdown_table,
    table_from_rows,
)
from refgate.retrieval.loaders.bounded import IngestLimits

#: Rows read from one sheet at most (a sheet beyond it is cut and says so in ``meta``).
MAX_SHEET_ROWS = 20_000
_HEADING = re.compile(r"^heading\s*(\d)$", re.I)


_DIMENSION = re.compile(rb"<(?:\w+:)?dimension\s+ref=\"([A-Z]{1,3})(\d+)(?::([A-Z]{1,3})(\d+))?\"")
_SHEET_MEMBER = re.compile(r"^xl/worksheets/[^/]+\.xml$")
_MB = 1024 * 1024


def _column_number(letters: bytes) -> int:
    n = 0
    for c in letters.decode():
        n = n * 26 + ord(c) - 64
    return n


def _check_zip(path: Path, kind: str, limits: IngestLimits) -> zipfile.ZipFile:
    """The package, opened, once its central directory shows sizes within ``limits``: total and
    per-member uncompressed size, and compression ratio (a small file inflating to hundreds of
    MB). Nothing is decompressed here."""
    if path.stat().st_size == 0:
        raise Unreadable("empty file (0 bytes)")
    if not zipfile.is_zipfile(path):
        raise Unreadable(
            f"not a readable {kind} (encrypted, or corrupt: not an Office zip package)"
        )
    try:
        package = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise Unreadable(f"corrupt {kind} ({exc})") from None
    total = 0
    for info in package.infolist():
        total += info.file_size
        size_mb = info.file_size / _MB
        if size_mb > limits.max_member_mb:
            package.close()
            raise Unreadable(
                f"{info.filename} inflates to {size_mb:,.0f} MB, over the "
                f"{limits.max_member_mb:,} MB bound for one part (REFGATE_INGEST_MAX_MEMBER_MB); "
                "not opened"
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > _MB and ratio > limits.max_ratio:
            package.close()
            raise Unreadable(
                f"{info.filename} is compressed {ratio:,.0f} to 1, over the {limits.max_ratio} "
                "to 1 bound (REFGATE_INGEST_MAX_RATIO: a ZIP bomb?); not opened"
            )
    if total / _MB > limits.max_unzipped_mb:
        package.close()
        raise Unreadable(
            f"inflates to {total / _MB:,.0f} MB, over the {limits.max_unzipped_mb:,} MB bound "
            "(REFGATE_INGEST_MAX_UNZIPPED_MB); not opened"
        )
    return package


def declared_cells(package: zipfile.ZipFile) -> int:
    """The cells a workbook's sheets declare (each sheet's ``<dimension ref=...>``, read from the
    first 64 KB of the sheet, where Excel writes it); a sheet without one counts 0."""
    cells = 0
    for name in package.namelist():
        if not _SHEET_MEMBER.match(name):
            continue
        with package.open(name) as fh:
            head = fh.read(64 * 1024)
        m = _DIMENSION.search(head)
        if not m:
            continue
        if m.group(3) is None:
            cells += 1
            continue
        rows = abs(int(m.group(4)) - int(m.group(2))) + 1
        cols = abs(_column_number(m.group(3)) - _column_number(m.group(1))) + 1
        cells += rows * cols
    return cells


def read_docx(path: Path, *, limits: IngestLimits | None = None) -> list[Part]:
    """A Word document as one part (its package checked against ``limits`` first)."""
    _check_zip(path, "DOCX", limits or IngestLimits()).close()
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
    tables: list[TableRecord] = []
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


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def read_xlsx(path: Path, *, limits: IngestLimits | None = None) -> list[Part]:
    """One part per non-empty sheet of a workbook. Before it is opened, its package is checked
    and the cells its sheets declare must be within ``limits.max_cells``; sheets then stream
    (read-only mode), and cells past that cap are summarised in the text, not loaded."""
    limits = limits or IngestLimits()
    with _check_zip(path, "XLSX", limits) as package:
        declared = declared_cells(package)
    if declared > limits.max_cells:
        raise Unreadable(
            f"its sheets declare {declared:,} cells, over the {limits.max_cells:,}-cell bound "
            "(REFGATE_INGEST_MAX_CELLS); not opened"
        )
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
    budget = limits.max_cells
    try:
        for sheet in book.worksheets:
            rows: list[list[str]] = []
            cut = ""
            for n, row in enumerate(sheet.iter_rows(values_only=True)):
                if n >= MAX_SHEET_ROWS:
                    cut = f"rows after {MAX_SHEET_ROWS:,} not indexed (row cap)"
                    break
                if len(row) > budget:
                    cut = (
                        f"rows after {n:,} not indexed: the workbook reached the "
                        f"{limits.max_cells:,}-cell cap (REFGATE_INGEST_MAX_CELLS)"
                    )
                    break
                budget -= len(row)
                rows.append([_cell(v) for v in row])
            table = table_from_rows(rows)
            if table is None:
                continue
            meta: dict[str, Any] = {"sheet": sheet.title}
            text = f"# {sheet.title}\n\n{markdown_table(table)}"
            if cut:
                meta["rows_cut"] = cut
                text += f"\n\n({cut}; the sheet declares {sheet.max_row or 'unknown'} rows)"
            parts.append(Part(text, key=f"sheet-{sheet.title}", meta=meta, tables=[table]))
    finally:
        book.close()
    if not parts:
        raise Unreadable("the workbook has no non-empty sheet")
    return parts

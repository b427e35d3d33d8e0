"""Ruled tables laid out in rows: a page whose table grid pdfplumber finds reads row by row.

PDFium's text of a table follows the drawing order, which for many tables is column by column:
a directors table gave "Name Name Name ... Age Age ..." with the values far from their labels.
On a page that draws at least ``RULED_MIN_PATHS`` line or rectangle objects, pdfplumber's table
finder (ruling lines) locates the tables; the page text is then pdfplumber's text outside the
tables with each table in its place as markdown rows (``| Director | Age | Since |``), which the
chunker keeps whole. The tables are kept as the page's tables (tableRefs). A page on which
pdfplumber finds no table, or fails, keeps PDFium's text.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, SupportsFloat

from refgate.retrieval.loaders.base import TableRecord, markdown_table, table_from_rows

if TYPE_CHECKING:
    from pdfplumber.page import Page as PlumberPage
    from pypdfium2 import PdfPage

log = logging.getLogger(__name__)

#: Path objects (lines, rectangles) a page must draw before its tables are looked for: a grid of
#: two rows and two columns draws at least four; a page with an underline or a logo draws fewer.
RULED_MIN_PATHS = 4


def path_count(page: PdfPage, limit: int) -> int:
    """How many path objects (lines, rectangles) a PDFium page draws, counted up to ``limit``."""
    # deferred: optional dependency (pypdfium2)
    import pypdfium2.raw as raw

    n = 0
    for _ in page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH], max_depth=2):
        n += 1
        if n >= limit:
            break
    return n


def _inside(obj: Mapping[str, SupportsFloat], box: tuple[float, float, float, float]) -> bool:
    x0, top, x1, bottom = box
    cx = (float(obj["x0"]) + float(obj["x1"])) / 2
    cy = (float(obj["top"]) + float(obj["bottom"])) / 2
    return x0 <= cx <= x1 and top <= cy <= bottom


def _page_layout(page: PlumberPage) -> tuple[str, list[TableRecord]] | None:
    """(text with tables as rows, tables) of a pdfplumber page, or None without a table."""
    found: list[tuple[tuple[float, float, float, float], TableRecord]] = []
    for table in sorted(page.find_tables(), key=lambda t: t.bbox[1]):
        kept = table_from_rows(table.extract())
        if kept is not None and len(kept["columns"]) >= 2:
            found.append((table.bbox, kept))
    if not found:
        return None
    boxes = [box for box, _ in found]
    prose = page.filter(
        lambda obj: not any(_inside(obj, b) for b in boxes) if "x0" in obj else True
    )
    pieces: list[str] = []
    top = 0.0
    for (_, t_top, _, t_bottom), kept_table in found:
        if t_top > top:
            pieces.append(prose.within_bbox((0, top, page.width, t_top)).extract_text() or "")
        pieces.append(markdown_table(kept_table))
        top = max(top, t_bottom)
    if top < page.height:
        pieces.append(prose.within_bbox((0, top, page.width, page.height)).extract_text() or "")
    text = "\n".join(p.strip() for p in pieces if p and p.strip())
    return text, [kept_table for _, kept_table in found]


def ruled_layouts(path: Path, pages: list[int]) -> dict[int, tuple[str, list[TableRecord]]]:
    """For each 1-based page of ``pages`` on which pdfplumber finds a table: its text with the
    tables as rows, and the tables."""
    if not pages:
        return {}
    # deferred: optional dependency (pdfplumber)
    import pdfplumber

    out: dict[int, tuple[str, list[TableRecord]]] = {}
    try:
        with pdfplumber.open(str(path), pages=pages) as pdf:
            for page in pdf.pages:
                try:
                    laid = _page_layout(page)
                except Exception as exc:  # pdfminer fails on some pages pdfium reads: keep pdfium's
                    log.warning(
                        "%s p. %d: table layout failed (%s)", path.name, page.page_number, exc
                    )
                    laid = None
                if laid is not None and laid[0].strip():
                    out[page.page_number] = laid
                page.close()
    except Exception as exc:  # a file pdfminer cannot open at all: PDFium's text stands
        log.warning("%s: table layout failed (%s: %s)", path.name, type(exc).__name__, exc)
    return out

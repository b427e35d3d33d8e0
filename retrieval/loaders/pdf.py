"""PDF: text per page with pypdfium2 (Apache-2.0/BSD), tables with pdfplumber (MIT).

One ``Part`` per page that has text, ``key`` ``p<n>`` and ``meta`` ``page`` (1-based, the
physical page, as a viewer numbers it), ``pages`` and ``page_label`` (the label printed in the
PDF's page tree, when it has one). A page without a text layer (a scan, a slide saved as an image)
is read by OCR (``ocr.py``, several pages at once: ``ocr_pages.py``; ``meta`` ``ocr: True`` and ``ocr_confidence``); a file on which
neither finds text is ``Unreadable``, and so are encrypted and corrupt files.

Page furniture (running headers and footers, page labels: ``furniture.py``) is dropped from the
text and kept in ``meta["furniture"]``. A page whose drawing has the ruling lines of a table is
laid out by pdfplumber (``ruled.py``): its tables stand in the text row by row, each value beside
its label, and are kept as the page's tables. Other pages' tables are read on demand
(``page_tables``): pdfplumber parses every character of a page (about 0.6 s for a 10-K page), so
pages that draw no table grid are not parsed at indexing time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refgate.retrieval.loaders.base import Part, TableRecord, Unreadable, table_from_rows
from refgate.retrieval.loaders.furniture import furniture_keys, strip_furniture
from refgate.retrieval.loaders.ocr import OcrUnavailable, check_available
from refgate.retrieval.loaders.ocr_pages import read_pages
from refgate.retrieval.loaders.ruled import RULED_MIN_PATHS, path_count, ruled_layouts

if TYPE_CHECKING:
    from pypdfium2 import PdfDocument

log = logging.getLogger(__name__)

NO_TEXT = "no text layer, and OCR found no text"
#: Characters pdfium puts in extracted text that are not text (soft hyphen marks, NULs).
_JUNK = str.maketrans({"\ufffe": "", "\x02": "", "\x00": "", "\r": ""})


def _open(path: Path) -> PdfDocument:
    # deferred: optional dependency (pypdfium2)
    import pypdfium2 as pdfium

    if path.stat().st_size == 0:
        raise Unreadable("empty file (0 bytes)")
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc).lower()
        if "password" in msg:
            raise Unreadable("encrypted (a password is required to open it)") from None
        if "format" in msg or "file" in msg:
            raise Unreadable("corrupt or not a PDF (PDFium could not parse it)") from None
        raise Unreadable(f"unreadable PDF ({exc})") from None


def _has_lines(page: object) -> bool:
    return path_count(page, 1) > 0


def page_tables(path: Path, page: int) -> list[TableRecord]:
    """The ruled tables pdfplumber finds on 1-based ``page`` of ``path`` (``{"columns",
    "rows"}``, at least 2 columns and 1 data row each); [] when there are none or on failure."""
    try:
        doc = _open(path)
    except (Unreadable, OSError):
        return []
    try:
        if not 1 <= page <= len(doc):
            return []
        pdf_page = doc[page - 1]
        ruled = _has_lines(pdf_page)
        pdf_page.close()
    finally:
        doc.close()
    if not ruled:
        return []
    # deferred: optional dependency (pdfplumber)
    import pdfplumber

    try:
        with pdfplumber.open(str(path), pages=[page]) as pdf:
            raw = pdf.pages[0].extract_tables()
    except Exception as exc:  # pdfminer fails on some files pdfium reads: no tables, say so
        log.warning(
            "%s p. %d: table extraction failed (%s: %s)", path.name, page, type(exc).__name__, exc
        )
        return []
    tables = [table_from_rows(t) for t in raw]
    return [t for t in tables if t is not None and len(t["columns"]) >= 2]


#: ``progress(done, total)``: pages read by OCR so far, of those that need it.
OcrProgress = Callable[[int, int], None]


@dataclass
class _Page:
    """One page as read: its text, where it came from, and its layout hints."""

    text: str = ""
    label: str = ""
    ocr_confidence: float | None = None
    ruled: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    tables: list[TableRecord] = field(default_factory=list)


def _read_layer(doc: PdfDocument, pages: dict[int, _Page]) -> list[int]:
    """Each page's text layer, label and ruling hint; the 1-based pages with no text."""
    empty = []
    for i in range(len(doc)):
        page = doc[i]
        entry = pages.setdefault(i + 1, _Page())
        try:
            textpage = page.get_textpage()
            entry.text = textpage.get_text_range().translate(_JUNK).strip()
            textpage.close()
            if not entry.text:
                empty.append(i + 1)
            else:
                entry.ruled = path_count(page, RULED_MIN_PATHS) >= RULED_MIN_PATHS
            try:
                entry.label = str(doc.get_page_label(i) or "")
            except Exception:
                entry.label = ""
        finally:
            page.close()
    return empty


def _read_ocr(
    path: Path, doc: PdfDocument, wanted: list[int], pages: dict[int, _Page], progress: OcrProgress
) -> None:
    """OCR of the ``wanted`` pages; a page over its time bound stays empty (logged)."""
    try:
        check_available()
    except OcrUnavailable as exc:
        log.info("%s: %d page(s) without a text layer not read (%s)", path.name, len(wanted), exc)
        return
    progress(0, len(wanted))
    for done, (n, read, error) in enumerate(read_pages(doc, wanted), start=1):
        if isinstance(error, TimeoutError):
            log.warning("%s p. %d: OCR over its time bound; page left out", path.name, n)
        elif isinstance(error, (OSError, RuntimeError, ValueError)):
            log.warning("%s p. %d: OCR failed (%s: %s)", path.name, n, type(error).__name__, error)
        elif error is not None:
            raise error
        if read is not None and read.text.text.strip():
            pages[n].text = read.text.text.strip()
            pages[n].ocr_confidence = read.text.confidence
        progress(done, len(wanted))


def read_pdf(path: Path, *, progress: OcrProgress | None = None) -> list[Part]:
    """The pages of a PDF that carry text (from its text layer, else OCR), one ``Part`` each."""
    doc = _open(path)
    pages: dict[int, _Page] = {}
    try:
        count = len(doc)
        if count == 0:
            raise Unreadable("the PDF has no pages")
        empty = _read_layer(doc, pages)
        if empty:
            _read_ocr(path, doc, empty, pages, progress or (lambda done, total: None))
    finally:
        doc.close()
    ruled = [n for n, p in pages.items() if p.ruled]
    for n, (text, tables) in ruled_layouts(path, ruled).items():
        pages[n].text, pages[n].tables = text, tables
    keys = furniture_keys([p.text for p in pages.values() if p.text])
    parts = []
    for n, entry in sorted(pages.items()):
        text, dropped = strip_furniture(entry.text, keys)
        if not text:
            continue
        meta: dict[str, Any] = {"page": n, "pages": count, "page_label": entry.label or None}
        if dropped:
            meta["furniture"] = dropped
        if entry.ocr_confidence is not None:
            meta["ocr"] = True
            meta["ocr_confidence"] = entry.ocr_confidence
        parts.append(Part(text=text, key=f"p{n}", meta=meta, tables=entry.tables))
    if not parts:
        raise Unreadable(NO_TEXT if _ocr_reason() is None else f"no text layer; {_ocr_reason()}")
    return parts


def _ocr_reason() -> str | None:
    """Why OCR could not run here, or None when it can."""
    try:
        check_available()
    except OcrUnavailable as exc:
        return str(exc)
    return None

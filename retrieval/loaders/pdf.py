"""PDF: text per page with pypdfium2 (Apache-2.0/BSD), tables with pdfplumber (MIT).

One ``Part`` per page that has a text layer, ``key`` ``p<n>`` and ``meta`` ``page`` (1-based,
the physical page, as a viewer numbers it), ``pages`` and ``page_label`` (the label printed in
the PDF's page tree, when it has one). A file without text on any page is ``Unreadable`` ("no
text layer; OCR is not supported"), and so are encrypted and corrupt files.

Tables are read on demand, for one page (``page_tables``): pdfplumber parses every character of
a page (about 0.6 s for a 10-K page here), which over a whole filing costs minutes while a search
returns ten pages. Pages that draw no lines or rectangles are not parsed (pdfplumber's table
finder needs ruling lines).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from refgate.retrieval.loaders.base import Part, Unreadable, table_from_rows

log = logging.getLogger(__name__)

NO_TEXT = "no text layer; OCR is not supported"
#: Characters pdfium puts in extracted text that are not text (soft hyphen marks, NULs).
_JUNK = str.maketrans({"\ufffe": "", "\x02": "", "\x00": "", "\r": ""})


def _open(path: Path) -> Any:
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


def _has_lines(page: Any) -> bool:
    # deferred: optional dependency (pypdfium2)
    import pypdfium2.raw as raw

    return (
        next(iter(page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH], max_depth=2)), None) is not None
    )


def page_tables(path: Path, page: int) -> list[dict[str, Any]]:
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


def read_pdf(path: Path) -> list[Part]:
    """The pages of a PDF that carry text, one ``Part`` each."""
    doc = _open(path)
    try:
        count = len(doc)
        if count == 0:
            raise Unreadable("the PDF has no pages")
        texts: dict[int, str] = {}
        labels: dict[int, str] = {}
        for i in range(count):
            page = doc[i]
            try:
                textpage = page.get_textpage()
                text = textpage.get_text_range().translate(_JUNK).strip()
                textpage.close()
                if text:
                    texts[i + 1] = text
                try:
                    label = doc.get_page_label(i)
                except Exception:
                    label = ""
                if label:
                    labels[i + 1] = str(label)
            finally:
                page.close()
    finally:
        doc.close()
    if not texts:
        raise Unreadable(NO_TEXT)
    return [
        Part(text=text, key=f"p{n}", meta={"page": n, "pages": count, "page_label": labels.get(n)})
        for n, text in texts.items()
    ]

"""Readers of the document formats analysts have: one function per format family.

Each reader takes a file path and returns ``Part``s (text plus its own metadata: ``page`` for a
PDF page, ``sheet`` for a workbook sheet, ``tables`` as JSON) or raises ``Unreadable`` with a
reason a person can act on ("encrypted", "no text layer; OCR is not supported", ...).
``refgate.retrieval.documents.load_documents`` walks a folder, reads each file in a child
process under memory and time bounds (``bounded.py``: ``read_document`` picks the reader by
suffix) and turns parts into LangChain ``Document``s.
"""

from collections.abc import Callable
from pathlib import Path

from refgate.retrieval.loaders.base import Part, Unreadable
from refgate.retrieval.loaders.bounded import BoundedChild, IngestLimits, Progress
from refgate.retrieval.loaders.dart import read_dart
from refgate.retrieval.loaders.office import read_docx, read_xlsx
from refgate.retrieval.loaders.pdf import read_pdf
from refgate.retrieval.loaders.text import read_html, read_text

#: suffix -> reader
READERS: dict[str, Callable[..., list[Part]]] = {
    ".txt": read_text,
    ".md": read_text,
    ".markdown": read_text,
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".xlsx": read_xlsx,
    ".xlsm": read_xlsx,
    # a filing stored by `refgate dart sync`: one part per table-of-contents section
    ".dart": read_dart,
}
SUFFIXES = tuple(READERS)
#: Readers that take the ingestion bounds (ZIP packages).
_BOUNDED = {".docx", ".xlsx", ".xlsm"}


def read_document(
    path: Path, limits: IngestLimits, *, progress: Progress | None = None
) -> list[Part]:
    """The file's parts by its suffix's reader: what ``BoundedChild`` runs for each document
    (PDF OCR reports ``progress``; Office packages get ``limits``)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return read_pdf(path, progress=progress)
    if suffix in _BOUNDED:
        return READERS[suffix](path, limits=limits)
    return READERS[suffix](path)


__all__ = [
    "READERS",
    "SUFFIXES",
    "BoundedChild",
    "IngestLimits",
    "Part",
    "Unreadable",
    "read_document",
    "read_dart",
    "read_docx",
    "read_html",
    "read_pdf",
    "read_text",
    "read_xlsx",
]

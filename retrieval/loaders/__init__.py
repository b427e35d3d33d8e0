"""Readers of the document formats analysts have: one function per format family.

Each reader takes a file path and returns ``Part``s (text plus its own metadata: ``page`` for a
PDF page, ``sheet`` for a workbook sheet, ``tables`` as JSON) or raises ``Unreadable`` with a
reason a person can act on ("encrypted", "no text layer; OCR is not supported", ...).
``refgate.retrieval.documents.load_documents`` walks a folder, picks the reader by suffix and
turns parts into LangChain ``Document``s.
"""

from refgate.retrieval.loaders.base import Part, Unreadable
from refgate.retrieval.loaders.dart import read_dart
from refgate.retrieval.loaders.office import read_docx, read_xlsx
from refgate.retrieval.loaders.pdf import read_pdf
from refgate.retrieval.loaders.text import read_html, read_text

#: suffix -> reader
READERS = {
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

__all__ = [
    "READERS",
    "SUFFIXES",
    "Part",
    "Unreadable",
    "read_dart",
    "read_docx",
    "read_html",
    "read_pdf",
    "read_text",
    "read_xlsx",
]

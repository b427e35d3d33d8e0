"""A cited PDF page as an image, and where on it the quoted sentence is.

The docRef names the file (``source``), the page and the text it quotes; the boxes are found by
searching that text on the page's own text layer (pypdfium2), sentence by sentence and, across
line breaks, a few words at a time. Boxes are fractions of the page, so the browser draws them
over the image at any size. Only PDF files inside the workspace's folders are read.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Mapping
from pathlib import Path

import pypdfium2 as pdfium
from typing_extensions import TypedDict

from refgate.workspace import Workspace

#: Pixels per PDF point of the page image (1.5 = 108 dpi: a sentence stays readable).
SCALE = 1.5
#: Sentences (and word runs) searched per quote.
MAX_PIECES = 12
WORDS_PER_PIECE = 5

#: pdfium is not thread-safe: one page is opened at a time.
_PDFIUM = threading.Lock()


class PageError(ValueError):
    """The page cannot be shown (not a PDF in the workspace, no such page)."""


class Box(TypedDict):
    x: float
    y: float
    w: float
    h: float


class PageInfo(TypedDict):
    page: int
    pages: int
    boxes: list[Box]
    found: bool
    quote: str


def pdf_of(ws: Workspace, source: str) -> Path:
    """The workspace PDF a docRef's ``source`` names; ``PageError`` for anything else."""
    if not source.lower().endswith(".pdf"):
        raise PageError("the cited document is not a PDF")
    name = Path(source)
    bases = [ws.documents_path, ws.root / "documents", ws.root]
    for base in [b for b in bases if b is not None]:
        path = (name if name.is_absolute() else base / name).resolve()
        if path.is_file() and any(_inside(path, r) for r in ws.roots):
            return path
    raise PageError(f"no PDF {source!r} in the workspace")


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return False
    return True


def render_png(path: Path, page: int) -> bytes:
    """Page ``page`` (1-based) of ``path`` as a PNG."""
    with _PDFIUM:
        doc = pdfium.PdfDocument(str(path))
        try:
            if not 1 <= page <= len(doc):
                raise PageError(f"the document has {len(doc)} page(s), not page {page}")
            image = doc[page - 1].render(scale=SCALE).to_pil()
        finally:
            doc.close()
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def pieces(quote: str) -> list[str]:
    """What to search for: each sentence of ``quote``, then runs of a few words (a sentence
    broken across lines is not found whole)."""
    flat = " ".join(quote.split())
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。])\s+", flat) if len(s.strip()) >= 12]
    out: list[str] = []
    for s in sentences[:MAX_PIECES]:
        out.append(s)
    return out


def _runs(sentence: str) -> list[str]:
    words = sentence.split()
    return [
        " ".join(words[i : i + WORDS_PER_PIECE])
        for i in range(0, len(words), WORDS_PER_PIECE)
        if len(" ".join(words[i : i + WORDS_PER_PIECE])) >= 8
    ]


def locate(path: Path, page: int, quote: str) -> PageInfo:
    """Where ``quote`` is on page ``page`` (boxes as fractions of the page)."""
    with _PDFIUM:
        doc = pdfium.PdfDocument(str(path))
        try:
            count = len(doc)
            if not 1 <= page <= count:
                raise PageError(f"the document has {count} page(s), not page {page}")
            pdf_page = doc[page - 1]
            width, height = pdf_page.get_size()
            text = pdf_page.get_textpage()
            boxes: list[tuple[float, float, float, float]] = []
            for sentence in pieces(quote):
                found = _search(text, sentence)
                if not found:
                    for run in _runs(sentence):
                        found += _search(text, run)
                boxes += found
        finally:
            doc.close()
    shown = [
        {
            "x": round(left / width, 5),
            "y": round((height - top) / height, 5),
            "w": round((right - left) / width, 5),
            "h": round((top - bottom) / height, 5),
        }
        for left, bottom, right, top in boxes
    ]
    return {
        "page": page,
        "pages": count,
        "boxes": shown[:200],  # type: ignore[typeddict-item]
        "found": bool(shown),
        "quote": quote[:1000],
    }


def _search(text: object, needle: str) -> list[tuple[float, float, float, float]]:
    searcher = text.search(needle, match_case=False, match_whole_word=False)  # type: ignore[attr-defined]
    out: list[tuple[float, float, float, float]] = []
    try:
        hit = searcher.get_next()
        if hit:
            index, n = hit
            for i in range(text.count_rects(index, n)):  # type: ignore[attr-defined]
                out.append(tuple(text.get_rect(i)))  # type: ignore[attr-defined]
    finally:
        searcher.close()
    return out


def doc_quote(ref: Mapping[str, object]) -> str:
    """The text a docRef quotes: its ``quote``, else its excerpt."""
    payload = ref.get("payload")
    p = payload if isinstance(payload, Mapping) else {}
    for key in ("quote", "excerpt", "text"):
        value = p.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""

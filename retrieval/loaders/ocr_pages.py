"""OCR of a PDF's image-only pages: several pages at once, each in one script's languages.

Pages are rendered one at a time by PDFium (not thread-safe) and read by a small pool of
threads, each with its own Tesseract engine (``ocr_workers()``, the cores this process may use;
``REFGATE_OCR_WORKERS`` sets it), at most that many pages rendered and waiting at once (a bounded
window: memory stays a few page images whatever the PDF's length). Tesseract releases the GIL
while it reads and runs one thread of its own, so the pool uses the cores.

Script choice (a per-document guess checked on every page): a page is read first with the
document's current guess. Until a page is read there is none, and a page is read as
``FIRST_READING`` says: ``kor+eng`` at 150 dpi as one block, which reads a Latin page about as
well as ``eng`` and a Hangul one well, so no first page is read twice (a Latin document reads
as it did before Hangul pages got their own reading). A page with Hangul then turns the guess
to ``HANGUL``, a page without to ``LATIN``. A Latin read whose words Tesseract is unsure of on
average (``LATIN_MIN_CONFIDENCE``; ``eng`` reading Hangul gives about 30 of 100, a clear Latin
page above 90) is read again as Hangul, and a Hangul read with almost no Hangul (under
``HANGUL_MIN_SHARE`` of its letters) again as Latin when its languages cannot read Latin
(``kor`` alone); the more confident read is kept. A Latin document so costs one ``eng`` pass
per page after its first.

Each script is read its own way (``READING``). A Latin page: ``eng`` at 200 dpi with
Tesseract's automatic layout (``--psm 3``). A Hangul page: ``kor`` alone at 120 dpi as one
block of text (``--psm 6``), then its doubtful words (misread Latin) read again with ``eng``
from the 200-dpi image (``ocr_latin.py``) instead of a ``kor+eng`` pass, which recognised most
lines twice. Tesseract scales each text line to its network's height, so at 120 dpi the
layout analysis costs less and the recognition no more, and one block keeps body lines whole
where the automatic layout split them (docs/benchmarks.md, "Korean OCR at one second a page"). A page is rendered once,
for the guess it is read with, at the finest resolution that reading uses; a reading at a
coarser one reads a downscaled copy.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refgate.retrieval.loaders.ocr import (
    DPI,
    OcrText,
    installed_languages,
    read_lines,
    tesseract_words,
)
from refgate.retrieval.loaders.ocr_latin import Columns, reread_latin

#: The scripts a page is read in, named by the Tesseract languages that end up reading it:
#: Latin, and Hangul (Korean first, English for the Latin words on the page).
LATIN = ("eng",)
HANGUL = ("kor", "eng")


@dataclass(frozen=True)
class Reading:
    """How a page of one script is read: Tesseract's ``languages`` at ``dpi`` with page
    segmentation mode ``psm`` (``--psm``); with ``latin_dpi``, the read's doubtful words are
    read again with ``eng`` from an image of that resolution (``ocr_latin.py``)."""

    dpi: int
    psm: int
    languages: tuple[str, ...]
    latin_dpi: int | None = None

    @property
    def render_dpi(self) -> int:
        """The resolution a page read this way is rendered at: the finest it uses."""
        return max(self.dpi, self.latin_dpi or 0)


#: How a page is read while its document's script is not known yet (no page read).
FIRST_READING = Reading(dpi=150, psm=6, languages=HANGUL)
#: Each script's reading (see the module docstring for the figures behind them).
READING = {
    LATIN: Reading(dpi=DPI, psm=3, languages=LATIN),
    HANGUL: Reading(dpi=120, psm=6, languages=("kor",), latin_dpi=DPI),
}
#: A Latin read whose words' mean confidence (all words, 0-100) is under this is read again.
LATIN_MIN_CONFIDENCE = 60.0
#: Share of a read's letters that are Hangul above which the page is a Hangul page.
HANGUL_MIN_SHARE = 0.05
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LETTER = re.compile(r"[^\W\d_]")


def ocr_workers() -> int:
    """Tesseract processes run at once: ``REFGATE_OCR_WORKERS``, else the usable cores."""
    try:
        value = int(os.environ.get("REFGATE_OCR_WORKERS", "0"))
    except ValueError:
        value = 0
    if value > 0:
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class PageRead:
    """One page's OCR: what was read, and the languages that read it."""

    text: OcrText
    languages: tuple[str, ...]


def hangul_share(text: str) -> float:
    """Share of ``text``'s letters that are Hangul (0 without letters)."""
    letters = len(_LETTER.findall(text))
    return len(_HANGUL.findall(text)) / letters if letters else 0.0


def _mean_word_confidence(data: Columns) -> float:
    """Mean confidence (0-100) of every word Tesseract read, kept or not."""
    confs = [float(c) for c, w in zip(data["conf"], data["text"], strict=False) if str(w).strip()]
    return sum(confs) / len(confs) if confs else 0.0


class _Guess:
    """The document's current script guess (shared by the pool's threads)."""

    def __init__(self) -> None:
        self.languages: tuple[str, ...] | None = None


@dataclass(frozen=True)
class PageImage:
    """A rendered page: its image file (grey PGM) and the resolution it was rendered at."""

    path: Path
    dpi: int


def _at_dpi(image: PageImage, dpi: int) -> Path:
    """``image``'s file, or a copy downscaled to ``dpi`` beside it when it is finer."""
    if image.dpi <= dpi:
        return image.path
    # deferred: Pillow is loaded only when a page needs OCR
    from PIL import Image

    copy = image.path.with_name(f"{image.path.stem}-{dpi}.pgm")
    with Image.open(image.path) as page:
        size = (round(page.width * dpi / image.dpi), round(page.height * dpi / image.dpi))
        page.resize(size, Image.Resampling.BOX).save(copy, format="PPM")
    return copy


def _reading(script: tuple[str, ...] | None) -> Reading:
    """How a page of ``script`` is read (None: no page of its document read yet)."""
    return FIRST_READING if script is None else READING[script]


def _words(image: PageImage, reading: Reading, timeout_s: float | None) -> Columns:
    """Tesseract's words of ``image`` read as ``reading`` says (boxes in the pixels of its
    resolution)."""
    path = _at_dpi(image, reading.dpi)
    try:
        data = tesseract_words(
            str(path), timeout_s=timeout_s, languages=reading.languages, psm=reading.psm
        )
    finally:
        if path != image.path:
            path.unlink(missing_ok=True)
    if reading.latin_dpi is None or not set(LATIN) <= set(installed_languages()):
        return data
    if hangul_share(read_lines(data)[0]) < HANGUL_MIN_SHARE:
        return data  # a page without Hangul is read again as Latin, not word by word

    def read_latin(sheet: Path) -> Columns:
        return tesseract_words(str(sheet), timeout_s=timeout_s, languages=LATIN, psm=6)

    scale = image.dpi / min(image.dpi, reading.dpi)  # image pixels per pixel of ``data``
    return reread_latin(data, image.path, scale, read_latin)


def _other_script(
    script: tuple[str, ...] | None, data: Columns, text: str
) -> tuple[str, ...] | None:
    """The script a page read as ``script`` is read again in, when the read does not fit it."""
    if script == LATIN and _mean_word_confidence(data) < LATIN_MIN_CONFIDENCE:
        return HANGUL
    reads_latin = set(LATIN) <= set(_reading(script).languages)
    if script == HANGUL and not reads_latin and hangul_share(text) < HANGUL_MIN_SHARE:
        return LATIN
    return None


def read_page_image(
    image: PageImage, guess: _Guess, script: tuple[str, ...] | None, timeout_s: float | None
) -> PageRead:
    """OCR of one rendered page in ``script`` (None: ``FIRST_READING``), read again in the
    other script when the read does not fit it (see the module docstring); updates
    ``guess``."""
    data = _words(image, _reading(script), timeout_s)
    text, confidence = read_lines(data)
    other = _other_script(script, data, text)
    if other is not None:
        other_data = _words(image, READING[other], timeout_s)
        if _mean_word_confidence(other_data) > _mean_word_confidence(data):
            data, script = other_data, other
            text, confidence = read_lines(data)
    hangul = hangul_share(text) >= HANGUL_MIN_SHARE
    guess.languages = HANGUL if hangul else LATIN
    read = OcrText(text=text, confidence=round(confidence, 3))
    return PageRead(read, script or guess.languages)


#: What ``read_pages`` yields per page: its number and its read, or the error that stopped it.
PageOutcome = tuple[int, PageRead | None, BaseException | None]


def read_pages(
    doc: Any,
    numbers: list[int],
    *,
    workers: int | None = None,
    timeout_s: float | None = None,
) -> Iterator[PageOutcome]:
    """OCR of the 1-based ``numbers`` pages of PDFium document ``doc``, ``workers`` pages at
    once (``ocr_workers()`` when None); yields each page's ``(number, read, error)`` as it
    finishes (any order)."""
    workers = workers or ocr_workers()
    guess = _Guess()
    with (
        tempfile.TemporaryDirectory(prefix="refgate-ocr-") as tmp,
        ThreadPoolExecutor(max_workers=workers) as pool,
    ):
        running: dict[Future[PageRead], tuple[int, Path]] = {}

        def settle(block: bool) -> Iterator[PageOutcome]:
            done, _ = wait(running, return_when=FIRST_COMPLETED) if block else (set(), None)
            for future in done:
                n, image = running.pop(future)
                image.unlink(missing_ok=True)
                error = future.exception()
                yield n, (None if error else future.result()), error

        for n in numbers:
            while len(running) >= workers:
                yield from settle(True)
            script = guess.languages
            image = PageImage(Path(tmp) / f"p{n}.pgm", _reading(script).render_dpi)
            _render(doc, n, image.dpi, image.path)
            job = pool.submit(read_page_image, image, guess, script, timeout_s)
            running[job] = (n, image.path)
        while running:
            yield from settle(True)


def _render(doc: Any, n: int, dpi: int, image: Path) -> None:
    """Page ``n`` (1-based) of PDFium document ``doc`` at ``dpi``, grey, into ``image`` (PGM:
    uncompressed, so no PNG cost)."""
    page = doc[n - 1]
    try:
        bitmap = page.render(scale=dpi / 72, grayscale=True)
        try:
            bitmap.to_pil().save(image, format="PPM")
        finally:
            bitmap.close()
    finally:
        page.close()

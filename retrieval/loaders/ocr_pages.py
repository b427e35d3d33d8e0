"""OCR of a PDF's image-only pages: several pages at once, each in one script's languages.

Pages are rendered one at a time by PDFium (not thread-safe) and read by a small pool of
Tesseract processes (``ocr_workers()``, the cores this process may use; ``REFGATE_OCR_WORKERS``
sets it), at most that many pages rendered and waiting at once (a bounded window: memory stays a
few page images whatever the PDF's length). Each Tesseract runs one thread
(``OMP_THREAD_LIMIT=1`` while the pool runs): the pool, not OpenMP, uses the cores.

Script choice (a per-document guess checked on every page): a page is read first with the
document's current guess. Until a page is read the guess is ``HANGUL`` (``kor+eng``: it reads a
Latin page as ``eng`` does, for about 5% more time, so no first page is read twice); a page
without Hangul turns it to ``LATIN`` (``eng``). A Latin read whose words
Tesseract is unsure of on average (``LATIN_MIN_CONFIDENCE``; ``eng`` reading Hangul gives about
30 of 100, a clear Latin page above 90) is read again with ``HANGUL`` (``kor+eng``) and the more
confident read is kept; a page found Hangul turns the guess back to ``HANGUL``. A Latin document
so costs one ``eng`` pass per page after its first, a Korean one one ``kor+eng`` pass per page.

Each script is also rendered and segmented its own way (``READING``): a Latin page at 200 dpi
with Tesseract's automatic layout (``--psm 3``); a Hangul page at 150 dpi as one block of text
(``--psm 6``). Tesseract scales each text line to its network's height, so a Hangul page's
recognition costs about the same at 150 dpi as at 200 while its layout analysis costs less,
and on real DART pages the automatic layout split body lines into stray fragments that one
block does not (docs/benchmarks.md, "OCR speed, parallel documents and resume": Tesseract CPU
per Korean page 2.3 → 2.0 s on held-out pages, CER halved). A page is rendered for the guess
it is read with.
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

from refgate.retrieval.loaders.ocr import DPI, OcrText, read_lines, tesseract_words

#: Tesseract languages of a page in Latin script, and of a page with Hangul (Korean first).
LATIN = ("eng",)
HANGUL = ("kor", "eng")


@dataclass(frozen=True)
class Reading:
    """How a page of one script is read: the render resolution and Tesseract's page
    segmentation mode (``--psm``)."""

    dpi: int
    psm: int


#: Each script's reading (see the module docstring for the figures behind them).
READING = {LATIN: Reading(dpi=DPI, psm=3), HANGUL: Reading(dpi=150, psm=6)}
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


def _mean_word_confidence(data: dict[str, list[Any]]) -> float:
    """Mean confidence (0-100) of every word Tesseract read, kept or not."""
    confs = [float(c) for c, w in zip(data["conf"], data["text"], strict=False) if str(w).strip()]
    return sum(confs) / len(confs) if confs else 0.0


class _Guess:
    """The document's current script guess (shared by the pool's threads)."""

    def __init__(self) -> None:
        self.languages: tuple[str, ...] = HANGUL


def _words(
    image: str | Path, languages: tuple[str, ...], timeout_s: float | None
) -> dict[str, list[object]]:
    """Tesseract's words of ``image`` in ``languages``, segmented as their script is."""
    psm = READING[languages].psm
    return tesseract_words(str(image), timeout_s=timeout_s, languages=languages, psm=psm)


def read_page_image(
    image: str | Path,
    guess: _Guess,
    timeout_s: float | None = None,
    first: tuple[str, ...] | None = None,
) -> PageRead:
    """OCR of one page image file in the script ``first`` (default: the one ``guess`` names),
    read again in the other script when the first read does not fit it (see the module
    docstring); updates ``guess``."""
    first = first or guess.languages
    data = _words(image, first, timeout_s)
    text, confidence = read_lines(data)
    if first == LATIN and _mean_word_confidence(data) < LATIN_MIN_CONFIDENCE:
        other = _words(image, HANGUL, timeout_s)
        other_text, other_confidence = read_lines(other)
        if _mean_word_confidence(other) > _mean_word_confidence(data):
            text, confidence, first = other_text, other_confidence, HANGUL
    hangul = hangul_share(text) >= HANGUL_MIN_SHARE
    guess.languages = HANGUL if hangul else LATIN
    return PageRead(OcrText(text=text, confidence=round(confidence, 3)), first)


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
    once; yields each page's ``(number, read, error)`` as it finishes (any order)."""
    workers = workers or ocr_workers()
    # one thread per Tesseract (the pool uses the cores); pytesseract passes os.environ on, so it
    # is set for the pool's run and taken back after it, when the caller had not set it
    own_limit = "OMP_THREAD_LIMIT" not in os.environ
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    try:
        yield from _read_pages(doc, numbers, workers, timeout_s)
    finally:
        if own_limit:
            os.environ.pop("OMP_THREAD_LIMIT", None)


def _read_pages(
    doc: Any, numbers: list[int], workers: int, timeout_s: float | None
) -> Iterator[PageOutcome]:
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
            image = Path(tmp) / f"p{n}.pgm"
            script = guess.languages
            _render(doc, n, READING[script].dpi, image)
            job = pool.submit(read_page_image, image, guess, timeout_s, script)
            running[job] = (n, image)
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

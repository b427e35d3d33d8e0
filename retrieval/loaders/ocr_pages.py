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


def read_page_image(image: str | Path, guess: _Guess, timeout_s: float | None = None) -> PageRead:
    """OCR of one page image file in the script ``guess`` names, read again in the other script
    when the first read does not fit it (see the module docstring); updates ``guess``."""
    first = guess.languages
    data = tesseract_words(str(image), timeout_s=timeout_s, languages=first)
    text, confidence = read_lines(data)
    if first == LATIN and _mean_word_confidence(data) < LATIN_MIN_CONFIDENCE:
        other = tesseract_words(str(image), timeout_s=timeout_s, languages=HANGUL)
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
            page = doc[n - 1]
            try:
                bitmap = page.render(scale=DPI / 72, grayscale=True)
                try:
                    bitmap.to_pil().save(image, format="PPM")  # uncompressed: no PNG cost
                finally:
                    bitmap.close()
            finally:
                page.close()
            running[pool.submit(read_page_image, image, guess, timeout_s)] = (n, image)
        while running:
            yield from settle(True)

"""OCR of PDF pages without a text layer (scans, slides saved as images): Tesseract.

Tesseract runs inside this process through ``tesserocr`` (MIT; its wheel carries Tesseract 5.5
and Leptonica, built without OpenMP); the language models come from the system's packages
(``apt-get install tesseract-ocr-eng tesseract-ocr-kor``; ``scripts/setup.sh`` installs them),
found through ``TESSDATA_PREFIX`` or the usual folders (``TESSDATA_DIRS``). An engine is loaded
once per language and kept (``_ENGINES``): no process is started and no model loaded per page,
and a recognition releases the GIL, so a pool of threads reads several pages at once.
A page is rendered with PDFium at ``DPI`` and read in one script's languages
(``ocr_pages.py`` picks them page by page: ``eng`` for Latin pages, ``kor`` for Hangul ones with
their Latin words read again by ``eng``, ``ocr_latin.py``);
the text keeps Tesseract's lines, and the page's confidence is the mean of its
words' confidences (0-1). Each page is bounded in time (``REFGATE_OCR_TIMEOUT``, seconds): a page
over it is left out and reported, never waited on. ``REFGATE_OCR=off`` turns OCR off.
"""

from __future__ import annotations

import functools
import os
import re
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refgate.errors import RefgateError

if TYPE_CHECKING:
    from tesserocr import PyTessBaseAPI

#: Render resolution for OCR: Tesseract reads body text best at 300 dpi; 200 halves the time
#: and loses little on printed pages (docs/benchmarks.md, "OCR").
DPI = 200
#: Languages read when installed (Tesseract codes).
LANGUAGES = ("eng", "kor")
#: Where the language models are looked for when ``TESSDATA_PREFIX`` is not set: Debian and
#: Ubuntu (Tesseract 5 and 4), Fedora, a source build, Homebrew.
TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tesseract/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
)
#: Seconds one page may take by default.
DEFAULT_TIMEOUT_S = 120.0
#: Words Tesseract is less sure of than this (0-100) are left out of the text.
MIN_WORD_CONFIDENCE = 30
#: Korean spacing: two words of a line whose gap is under this share of the line's median word
#: height are one word when the gap has Hangul on either side. Tesseract's Korean model boxes
#: syllables one by one ("회 사 의" for "회사의"); a printed space is wider. Chosen on half the
#: Korean benchmark pages (docs/benchmarks.md, "OCR"); text without Hangul is never joined.
HANGUL_JOIN_GAP = 0.3
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
#: Tesseract's TSV columns, in order (the last two are the confidence and the text).
_TSV_INTS = (
    "level",
    "page_num",
    "block_num",
    "par_num",
    "line_num",
    "word_num",
    "left",
    "top",
    "width",
    "height",
)
INSTALL_HINT = "apt-get install tesseract-ocr-eng tesseract-ocr-kor, or set TESSDATA_PREFIX"


class OcrUnavailable(RefgateError, RuntimeError):
    """OCR cannot run here (no Tesseract, no language models, or OCR turned off); the reason
    says which."""


@dataclass(frozen=True)
class OcrText:
    """What OCR read on one page: its text and the mean word confidence (0-1)."""

    text: str
    confidence: float


def ocr_enabled() -> bool:
    """False when ``REFGATE_OCR`` is ``off``/``0``/``false``."""
    return os.environ.get("REFGATE_OCR", "auto").strip().lower() not in {"off", "0", "false", "no"}


def page_timeout_s() -> float:
    """Seconds one page may take (``REFGATE_OCR_TIMEOUT``; a bad value is the default)."""
    try:
        value = float(os.environ.get("REFGATE_OCR_TIMEOUT", DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


@functools.cache
def tessdata_dir() -> str:
    """The folder of Tesseract's language models: ``TESSDATA_PREFIX`` when set, else the first
    of ``TESSDATA_DIRS`` that holds one of ``LANGUAGES``; raises ``OcrUnavailable`` without."""
    prefix = os.environ.get("TESSDATA_PREFIX", "").strip()
    candidates = (prefix,) if prefix else TESSDATA_DIRS
    for folder in candidates:
        if any((Path(folder) / f"{lang}.traineddata").is_file() for lang in LANGUAGES):
            return str(Path(folder)) + os.sep
    where = f"TESSDATA_PREFIX={prefix}" if prefix else ", ".join(TESSDATA_DIRS)
    raise OcrUnavailable(f"no Tesseract language model ({', '.join(LANGUAGES)}) in {where}")


@functools.cache
def installed_languages() -> tuple[str, ...]:
    """The ``LANGUAGES`` this machine's Tesseract can read; raises ``OcrUnavailable`` when
    there is no Tesseract or none of them."""
    try:
        # deferred: optional at run time (a wheel with a native library; OCR is off without it)
        import tesserocr
    except ImportError as exc:
        raise OcrUnavailable(f"OCR needs the tesserocr package ({exc})") from None
    folder = tessdata_dir()
    have = set(tesserocr.get_languages(folder)[1])
    langs = tuple(lang for lang in LANGUAGES if lang in have)
    if not langs:
        raise OcrUnavailable(f"Tesseract has none of the languages {', '.join(LANGUAGES)}")
    return langs


def check_available() -> None:
    """Raise ``OcrUnavailable`` when OCR cannot run (turned off, or no Tesseract)."""
    if not ocr_enabled():
        raise OcrUnavailable("OCR is turned off (REFGATE_OCR=off)")
    installed_languages()


#: One word of a line: its box's left edge, width and height (pixels), and its text.
Box = tuple[int, int, int, str]


def read_lines(data: dict[str, list[Any]], join_gap: float = HANGUL_JOIN_GAP) -> tuple[str, float]:
    """Text by Tesseract's lines (``tesseract_words``' columns), and the mean confidence of the
    words kept; ``join_gap`` is ``HANGUL_JOIN_GAP`` (0 keeps every box a word of its own, as
    Tesseract boxed it)."""
    lines: dict[tuple[int, int, int], list[Box]] = {}
    confs: list[float] = []
    for i, word in enumerate(data["text"]):
        conf = float(data["conf"][i])
        word = str(word).strip()
        if not word or conf < MIN_WORD_CONFIDENCE:
            continue
        key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
        box = (int(data["left"][i]), int(data["width"][i]), int(data["height"][i]), word)
        lines.setdefault(key, []).append(box)
        confs.append(conf)
    text = "\n".join(_line_text(words, join_gap) for _, words in sorted(lines.items()))
    return text, (sum(confs) / len(confs) / 100.0 if confs else 0.0)


def _line_text(words: list[Box], join_gap: float) -> str:
    """A line's words joined by spaces, except across a gap narrower than ``join_gap`` of the
    line's word height with Hangul on either side (one Korean word boxed in pieces)."""
    height = statistics.median(h for _, _, h, _ in words)
    text = words[0][3]
    for (left, width, _, before), (next_left, _, _, word) in zip(words, words[1:], strict=False):
        narrow = join_gap > 0 and next_left - (left + width) < join_gap * height
        hangul = _HANGUL.match(before[-1]) or _HANGUL.match(word[0])
        text += ("" if narrow and hangul else " ") + word
    return text


def language_spec(wanted: tuple[str, ...] | None = None) -> str:
    """Tesseract's ``-l`` argument: the ``wanted`` languages (all of ``LANGUAGES`` when None)
    that are installed, in the order given (the first is tried first on each word)."""
    have = installed_languages()
    langs = [lang for lang in (wanted or LANGUAGES) if lang in have]
    return "+".join(langs or have)


#: Loaded engines not in use, by language spec (``"kor"``, ``"kor+eng"``): one per thread that
#: reads at once, kept for the next page (loading ``eng`` costs about 0.1 CPU s).
_ENGINES: dict[str, list[PyTessBaseAPI]] = {}
_ENGINES_LOCK = threading.Lock()


@contextmanager
def _engine(lang: str) -> Iterator[PyTessBaseAPI]:
    """A Tesseract engine loaded with ``lang``, this thread's alone until the block ends."""
    # deferred: native library loaded only when a page needs OCR (installed_languages checked it)
    import tesserocr

    with _ENGINES_LOCK:
        free = _ENGINES.setdefault(lang, [])
        api = free.pop() if free else None
    if api is None:
        api = tesserocr.PyTessBaseAPI(path=tessdata_dir(), lang=lang)
    try:
        yield api
    finally:
        api.Clear()
        with _ENGINES_LOCK:
            _ENGINES[lang].append(api)


def tesseract_words(
    image: object,
    *,
    timeout_s: float | None = None,
    languages: tuple[str, ...] | None = None,
    psm: int | None = None,
) -> dict[str, list[Any]]:
    """Tesseract's words of a PIL image (or an image file's path) with their boxes and
    confidences (its TSV columns: ``level`` ... ``conf``, ``text``), read in ``languages`` (all
    installed of ``LANGUAGES`` when None) with page segmentation mode ``psm`` (Tesseract's
    default, 3, when None). Raises ``TimeoutError`` past the page's time bound and
    ``OcrUnavailable`` when OCR cannot run."""
    lang = language_spec(languages)
    bound_s = timeout_s if timeout_s is not None else page_timeout_s()
    with _engine(lang) as api:
        api.SetPageSegMode(3 if psm is None else psm)
        if isinstance(image, str | Path):
            api.SetImageFile(str(image))
        else:
            api.SetImage(image)
        started = time.monotonic()
        if not api.Recognize(timeout=max(1, round(bound_s * 1000))):
            if time.monotonic() - started >= bound_s:
                raise TimeoutError("OCR took longer than the page's time bound")
            raise RuntimeError("Tesseract could not read the page")
        return _tsv_columns(api.GetTSVText(0))


def _tsv_columns(tsv: str) -> dict[str, list[Any]]:
    """Tesseract's TSV (no header line) as columns: integers, ``conf`` a float, ``text``."""
    columns: dict[str, list[Any]] = {name: [] for name in (*_TSV_INTS, "conf", "text")}
    for row in tsv.splitlines():
        cells = row.split("\t")
        if len(cells) < len(_TSV_INTS) + 1:
            continue
        for name, cell in zip(_TSV_INTS, cells, strict=False):
            columns[name].append(int(cell))
        columns["conf"].append(float(cells[len(_TSV_INTS)]))
        columns["text"].append("\t".join(cells[len(_TSV_INTS) + 1 :]))
    return columns

"""Latin words on a Hangul page: the ``kor`` read's doubtful words read again with ``eng``.

Tesseract's Korean model (``kor``) reads Hangul and digits well and Latin badly ("R&D" → "8&0",
"Samsung" → "590754109"). Reading a page with ``kor+eng`` instead makes Tesseract recognise
again with ``eng`` every line holding a word it does not accept, which on Korean text is most
lines: 0.4-0.7 of a dense page's 2-2.7 CPU seconds. So a Hangul page is read with ``kor``
alone, and only its *doubtful* words (``doubtful``) are read again: each run of neighbouring
doubtful words of a line is cropped from the page image, the crops are stacked into one image
that one ``eng`` call reads, and a run's ``eng`` words replace its ``kor`` ones when ``eng`` is
surer of them, or reads Latin letters with at least ``LATIN_MIN_CONFIDENCE``.

The Korean model also reads some capitals as a syllable glued to the rest of their word
("Display" → "미" + "5018)"): a run right after a one-syllable word with no space between is
cropped with and without it, and the crop with it wins when it turns the run's lowercase start
into a capitalised word ("isplay" → "Display").
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refgate.retrieval.loaders.ocr import HANGUL_JOIN_GAP

#: Tesseract's word columns (``image_to_data``'s dict).
Columns = dict[str, list[Any]]
#: A word without letters (a number, punctuation) is kept as ``kor`` read it at least this surely.
NUMBER_MIN_CONFIDENCE = 80.0
#: An ``eng`` read with Latin letters replaces the ``kor`` one from this mean confidence up
#: (``kor``'s confidence in Latin it misreads is no guide: "Display" read "1110" at 51).
LATIN_MIN_CONFIDENCE = 60.0
#: Blank pixels between the stacked crops and around them.
GAP = 20
_COLUMNS = ("text", "conf", "block_num", "par_num", "line_num", "left", "top", "width", "height")
_SYLLABLE = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")
#: Lone jamo (a misread letter); U+318D "ㆍ" is Korean punctuation and not among them.
_JAMO = re.compile(r"[\u3131-\u318c\u318e\u318f]")
#: Digits and the punctuation of numbers and sentences (U+318D "ㆍ" is a Hangul letter Korean
#: text uses as a middle dot); symbols such as "×" or "「" are left out: ``kor`` reads Latin
#: letters as them ("DX" → "0×").
_PLAIN = re.compile(r"[\d.,%()~\-+/:;!?'\"\u318d·]+")

Box = tuple[int, int, int, int]

if TYPE_CHECKING:
    from PIL.Image import Image


def doubtful(word: str, confidence: float) -> bool:
    """Whether ``kor``'s ``word`` may be misread Latin: it has Latin letters or lone jamo, or no
    Hangul syllable and is not a number or punctuation ``kor`` is sure of."""
    if _LATIN.search(word) or _JAMO.search(word):
        return True
    if _SYLLABLE.search(word):
        return False
    return confidence < NUMBER_MIN_CONFIDENCE or not _PLAIN.fullmatch(word)


@dataclass(frozen=True)
class _Crop:
    """Words of the ``kor`` read (their indices) cropped together as one box of the image."""

    words: tuple[int, ...]
    box: Box


def _lines(data: Columns) -> list[list[int]]:
    """The indices of each line's words, in reading order."""
    lines: dict[tuple[int, int, int], list[int]] = {}
    for i, word in enumerate(data["text"]):
        if str(word).strip() and float(data["conf"][i]) >= 0:
            key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
            lines.setdefault(key, []).append(i)
    return list(lines.values())


def doubtful_runs(data: Columns) -> list[list[int]]:
    """Each line's runs of neighbouring ``doubtful`` words (indices)."""
    runs: list[list[int]] = []
    for line in _lines(data):
        run: list[int] = []
        for i in line:
            if doubtful(str(data["text"][i]).strip(), float(data["conf"][i])):
                run.append(i)
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
    return runs


def _glued_syllable(data: Columns, run: list[int], before: dict[int, int]) -> int | None:
    """The one-syllable word right before ``run`` with no space between, if there is one."""
    prev = before.get(run[0])
    if prev is None:
        return None
    word = str(data["text"][prev]).strip()
    gap = int(data["left"][run[0]]) - int(data["left"][prev]) - int(data["width"][prev])
    glued = gap < HANGUL_JOIN_GAP * int(data["height"][prev])
    return prev if glued and len(word) == 1 and _SYLLABLE.match(word) else None


def _box(data: Columns, words: tuple[int, ...], scale: float, size: tuple[int, int]) -> Box:
    """The box around ``words`` in the image (``scale`` times the read's pixels), padded."""
    left = min(int(data["left"][i]) for i in words)
    top = min(int(data["top"][i]) for i in words)
    right = max(int(data["left"][i]) + int(data["width"][i]) for i in words)
    bottom = max(int(data["top"][i]) + int(data["height"][i]) for i in words)
    x0, y0, x1, y1 = (round(v * scale) for v in (left, top, right, bottom))
    pad = max(4, (y1 - y0) // 4)
    return (
        max(0, x0 - pad),
        max(0, y0 - pad // 2),
        min(size[0], x1 + pad),
        min(size[1], y1 + pad // 2),
    )


def _crops(data: Columns, scale: float, size: tuple[int, int]) -> list[tuple[_Crop, _Crop | None]]:
    """Each doubtful run's crop, and its crop with a glued syllable before it (or None)."""
    before = {b: a for line in _lines(data) for a, b in zip(line, line[1:], strict=False)}
    pairs: list[tuple[_Crop, _Crop | None]] = []
    for run in doubtful_runs(data):
        plain = _Crop(tuple(run), _box(data, tuple(run), scale, size))
        syllable = _glued_syllable(data, run, before)
        glued = None
        if syllable is not None:
            words = (syllable, *run)
            glued = _Crop(words, _box(data, words, scale, size))
        pairs.append((plain, glued))
    return pairs


def _stack(page: Image, boxes: list[Box]) -> tuple[Image, list[tuple[int, int]]]:
    """The ``boxes`` of PIL image ``page`` stacked into one white image, and each one's rows."""
    # deferred: Pillow is loaded only when a page needs OCR
    from PIL import Image as PilImage

    crops = [page.crop(box) for box in boxes]
    width = max(c.width for c in crops) + 2 * GAP
    sheet = PilImage.new("L", (width, sum(c.height + GAP for c in crops) + GAP), 255)
    spans: list[tuple[int, int]] = []
    y = GAP
    for crop in crops:
        sheet.paste(crop, (GAP, y))
        spans.append((y, y + crop.height))
        y += crop.height + GAP
    return sheet, spans


def _words_by_crop(eng: Columns, spans: list[tuple[int, int]]) -> list[list[int]]:
    """The ``eng`` words (indices) read inside each crop's rows of the stacked image."""
    got: list[list[int]] = [[] for _ in spans]
    for j, word in enumerate(eng["text"]):
        if not str(word).strip() or float(eng["conf"][j]) < 0:
            continue
        middle = int(eng["top"][j]) + int(eng["height"][j]) / 2
        for k, (y0, y1) in enumerate(spans):
            if y0 <= middle < y1:
                got[k].append(j)
                break
    return got


def _replaces(data: Columns, eng: Columns, crop: _Crop, read: list[int]) -> bool:
    """Whether ``eng``'s ``read`` of ``crop`` is kept instead of ``kor``'s words."""
    if not read:
        return False
    kor_conf = statistics.mean(float(data["conf"][i]) for i in crop.words)
    eng_conf = statistics.mean(float(eng["conf"][j]) for j in read)
    latin = any(_LATIN.search(str(eng["text"][j])) for j in read)
    return eng_conf > kor_conf or (latin and eng_conf >= LATIN_MIN_CONFIDENCE)


def _reads_capital(eng: Columns, plain: list[int], glued: list[int]) -> bool:
    """Whether the crop with the glued syllable reads a capital where the plain crop's read
    starts lowercase, the rest alike ("isplay" → "Display")."""
    first = " ".join(str(eng["text"][j]) for j in plain).strip()
    whole = " ".join(str(eng["text"][j]) for j in glued).strip()
    return first[:1].islower() and whole[:1].isupper() and whole[1:].startswith(first[:2])


def _chosen(
    data: Columns, eng: Columns, pairs: list[tuple[_Crop, _Crop | None]], reads: list[list[int]]
) -> list[tuple[_Crop, list[int]]]:
    """The crops whose ``eng`` read replaces ``kor``'s words, with that read (``reads`` holds
    the plain crops' reads, then the glued crops' in order)."""
    glued_reads = iter(reads[len(pairs) :])
    chosen: list[tuple[_Crop, list[int]]] = []
    for (plain, glued), read in zip(pairs, reads, strict=False):
        crop = plain
        if glued is not None:
            glued_read = next(glued_reads)
            if _reads_capital(eng, read, glued_read):
                crop, read = glued, glued_read
        if _replaces(data, eng, crop, read):
            chosen.append((crop, read))
    return chosen


def _merged(
    data: Columns, eng: Columns, chosen: list[tuple[_Crop, list[int]]], scale: float
) -> Columns:
    """``data`` with each chosen crop's words replaced by its ``eng`` words (boxes in the
    read's pixels, on the line of the crop's first word)."""
    dropped = {i for crop, _ in chosen for i in crop.words}
    first = {crop.words[0]: (crop, read) for crop, read in chosen}
    out: Columns = {column: [] for column in _COLUMNS}
    for i in range(len(data["text"])):
        if i in first:
            crop, read = first[i]
            for j in read:
                row = {column: data[column][i] for column in _COLUMNS}
                row.update(text=eng["text"][j], conf=eng["conf"][j], width=eng["width"][j] / scale)
                row.update(left=(crop.box[0] + int(eng["left"][j]) - GAP) / scale)
                row.update(height=int(eng["height"][j]) / scale)
                for column in _COLUMNS:
                    out[column].append(row[column])
        if i not in dropped:
            for column in _COLUMNS:
                out[column].append(data[column][i])
    return out


def reread_latin(
    data: Columns, image: Path, scale: float, read: Callable[[Path], Columns]
) -> Columns:
    """``kor``'s words ``data`` of the page image file ``image`` (``scale`` times the pixels
    ``data`` was read at), its doubtful words read again by ``read`` (Tesseract's ``eng``)."""
    # deferred: Pillow is loaded only when a page needs OCR
    from PIL import Image as PilImage

    with PilImage.open(image) as page:
        pairs = _crops(data, scale, page.size)
        if not pairs:
            return data
        boxes = [p.box for p, _ in pairs] + [g.box for _, g in pairs if g is not None]
        sheet, spans = _stack(page.convert("L"), boxes)
    sheet_path = image.with_name(f"{image.stem}-latin.pgm")
    sheet.save(sheet_path, format="PPM")
    try:
        eng = read(sheet_path)
    finally:
        sheet_path.unlink(missing_ok=True)
    chosen = _chosen(data, eng, pairs, _words_by_crop(eng, spans))
    return _merged(data, eng, chosen, scale)

"""Page furniture: running headers, footers and page labels repeated on most pages of a document.

A line is furniture when it stands near the top or bottom edge of at least half the pages of a
document (and of at least ``MIN_PAGES`` pages) once digits are folded (``Page 3 of 40`` and
``Page 4 of 40`` are one line; so are bare page numbers). Furniture is dropped from the indexed
text, where it would only add the same words to every page, and kept as page metadata
(``furniture``). Only the ``EDGE_LINES`` first and last lines of a page are looked at, each on
its own edge (a header repeats at the top, a footer at the bottom), so a sentence a document
repeats in its body is never dropped; and a page keeps all its lines when what would be dropped
is more than ``MAX_PAGE_SHARE`` of its text (templated pages whose every line differs only in
numbers are content, not furniture).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

#: Lines from each edge of a page (top and bottom) that may be furniture.
EDGE_LINES = 3
#: A line is furniture when it sits on an edge of at least this share of a document's pages ...
MIN_SHARE = 0.5
#: ... and of at least this many pages (a two-page letter has no running header).
MIN_PAGES = 3
#: Longer lines are prose, not furniture, whatever they repeat.
MAX_LINE_CHARS = 160
#: Furniture is dropped from a page only while it is at most this share of the page's text.
MAX_PAGE_SHARE = 0.3

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_ROMAN = re.compile(r"^(?=[ivxlcdm]+$)m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")


def line_key(line: str) -> str:
    """A line folded for comparison: digits as ``#``, white space collapsed, case folded; a
    lone roman numeral (a page label) as ``#``."""
    key = _SPACE.sub(" ", _DIGITS.sub("#", line)).strip().casefold()
    return "#" if _ROMAN.match(key) and key else key


def _edges(lines: Sequence[str]) -> list[tuple[int, str]]:
    """``(index, edge)`` of a page's non-blank lines within ``EDGE_LINES`` of the top ("t") or
    bottom ("b"); on a short page a line is on the edge it is nearer to."""
    filled = [i for i, ln in enumerate(lines) if ln.strip()]
    half = (len(filled) + 1) // 2
    top = filled[: min(EDGE_LINES, half)]
    bottom = filled[max(len(filled) - EDGE_LINES, half) :]
    return [(i, "t") for i in top] + [(i, "b") for i in bottom]


def _edge_keys(lines: Sequence[str]) -> dict[int, str]:
    """Each edge line's index -> its key with its edge (``t|...``, ``b|...``)."""
    return {
        i: f"{side}|{line_key(lines[i])}"
        for i, side in _edges(lines)
        if len(lines[i]) <= MAX_LINE_CHARS and line_key(lines[i])
    }


def furniture_keys(pages: Sequence[str]) -> set[str]:
    """The folded lines that are furniture in this document's pages."""
    if len(pages) < MIN_PAGES:
        return set()
    seen: Counter[str] = Counter()
    for text in pages:
        seen.update(set(_edge_keys(text.splitlines()).values()))
    need = max(MIN_PAGES, MIN_SHARE * len(pages))
    return {k for k, n in seen.items() if n >= need}


def strip_furniture(text: str, keys: set[str]) -> tuple[str, list[str]]:
    """``text`` without its edge lines whose folded form is in ``keys``, and those lines."""
    if not keys:
        return text, []
    lines = text.splitlines()
    drop = {i for i, key in _edge_keys(lines).items() if key in keys}
    if not drop or sum(len(lines[i]) for i in drop) > MAX_PAGE_SHARE * len(text):
        return text, []
    kept = [ln for i, ln in enumerate(lines) if i not in drop]
    return "\n".join(kept).strip(), [lines[i].strip() for i in sorted(drop)]

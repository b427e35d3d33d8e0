"""Row labels that carry numbers, for the GATE: "$500 3.125% senior notes due 2022", "Equipment
and software, including capital leases of $6 and $17 at December 31, 2019 and 2018".

A claim that quotes such a label of a cited table names that row: the label's numbers are its
name, not values it claims (each is supported by the label itself), and a number the claim states
after it binds only to a value of that row, so "$500 3.125% senior notes due 2022 was 600.0" is
not backed by the 600.0 of the notes due 2020, whose words are the same. A label matches as
written (its words in order, any case, any spacing; footnote markers such as "(1)" may be left
out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from .lookup import PLACE_COLS, RefIndex

_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
#: Footnote markers a writer leaves out ("Conventional Tankers (1)", "due 2023(1)").
_FOOTNOTE = re.compile(r"\s*\((?:\d|[a-z]|note \d+)\)", re.I)
_TOKEN = re.compile(r"[$€£¥₩]|[^\s$€£¥₩]+")
#: ``RefIndex.readings`` key of a table's numbered labels (they follow from the payload only).
_KEY = object()


@dataclass(frozen=True, slots=True)
class Quoted:
    """A numbered row label a claim quotes: where it stands in the claim and which row it names."""

    ref_id: str
    start: int
    end: int
    #: The row's place (``Item[5] // PLACE_COLS``) and its label.
    row: int
    label: str


@lru_cache(maxsize=4096)
def _label_pattern(label: str) -> re.Pattern[str] | None:
    """A label as a claim may write it: its tokens in order, any spacing, any case."""
    bare = _FOOTNOTE.sub("", label).strip().rstrip(":").strip()
    tokens = _TOKEN.findall(bare)
    if len(tokens) < 2 or not _DIGIT.search(bare):
        return None
    body = r"\s*".join(re.escape(t) for t in tokens)
    return re.compile(rf"(?<![\w$€£¥₩]){body}(?!\w)", re.I)


#: A table's numbered row labels: (pattern, row, label).
NumberedRows = tuple[tuple[re.Pattern[str], int, str], ...]


def numbered_rows(idx: RefIndex) -> NumberedRows:
    """A table ref's row labels that hold a number and a word, as patterns with their row
    (read once per payload, kept with its index)."""
    got = cast("NumberedRows | None", idx.readings.get(_KEY))
    if got is None:
        out = []
        if idx.ref.kind == "tableRef":
            for i, place in enumerate(idx.places):
                label = place.core
                if label and _DIGIT.search(label) and _LETTER.search(label):
                    pat = _label_pattern(label)
                    if pat is not None:
                        out.append((pat, i, label))
        got = idx.readings[_KEY] = tuple(out)
    return got


def quoted_rows(text: str, indexes: list[RefIndex]) -> list[Quoted]:
    """The numbered row labels of the cited tables that ``text`` quotes, in the order written
    (a label inside a longer quoted one is left out)."""
    if not _DIGIT.search(text):
        return []
    found: list[Quoted] = []
    for idx in indexes:
        for pat, row, label in numbered_rows(idx):
            for m in pat.finditer(text):
                found.append(Quoted(idx.ref.id, m.start(), m.end(), row, label))
    if len(found) > 1:
        found.sort(key=lambda q: (q.start, -(q.end - q.start)))
        kept: list[Quoted] = []
        for q in found:
            if (
                kept
                and q.start < kept[-1].end
                and q.end <= kept[-1].end
                and (q.end - q.start < kept[-1].end - kept[-1].start)
            ):
                continue
            kept.append(q)
        found = kept
    return found


def inside(quoted: list[Quoted], start: int, end: int) -> Quoted | None:
    """The quoted label a number at ``start:end`` of the claim is part of, if any."""
    for q in quoted:
        if q.start <= start and end <= q.end:
            return q
    return None


def named_rows(quoted: list[Quoted], start: int) -> dict[str, frozenset[int]]:
    """The rows a number at ``start`` must sit in, per cited ref: those of the last labels
    quoted before it (all labels quoted, when none stands before it)."""
    before = [q for q in quoted if q.end <= start]
    use = before or quoted
    last_start = max(q.start for q in use) if before else None
    out: dict[str, set[int]] = {}
    for q in use:
        if last_start is None or q.start == last_start:
            out.setdefault(q.ref_id, set()).add(q.row)
    return {k: frozenset(v) for k, v in out.items()}


def in_named_row(idx: RefIndex, key: int, rows: frozenset[int]) -> bool:
    """Is the value at place ``key`` a value of one of ``rows`` (not a number in a label)?"""
    if key < 0 or key // PLACE_COLS not in rows:
        return False
    place = idx.places[key // PLACE_COLS]
    col = key % PLACE_COLS
    if col >= len(idx.columns):
        return True
    # A cell of the label itself ("$500 3.125% notes due 2022") holds its name's numbers.
    return not _cell_is_label(idx, key // PLACE_COLS, col, place.core)


def _cell_is_label(idx: RefIndex, row: int, col: int, label: str) -> bool:
    rows = idx.ref.payload.get("rows") if isinstance(idx.ref.payload, dict) else None
    if not isinstance(rows, list):
        return False
    # the place's row in the payload: the body starts after the header rows the index took
    offset = len(rows) - _body_rows(idx)
    r = row + offset
    if not 0 <= r < len(rows) or not isinstance(rows[r], list) or col >= len(rows[r]):
        return False
    cell = rows[r][col]
    return isinstance(cell, str) and bool(_LETTER.search(cell)) and cell.strip() in label


def _body_rows(idx: RefIndex) -> int:
    return len(idx.places)

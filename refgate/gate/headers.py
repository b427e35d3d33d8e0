"""Header rows of a table as annual reports print them, for the GATE: which of a table's first
rows are its header, and the column headers they make.

A loader takes a table's first row as its header (``columns``); in an annual report that row is
often a caption ("Years Ended December 31,", "Fiscal", "Payments Due by Period (in millions)")
and the years stand in the next row, with a unit row ("(in thousands)", "€m", "$ | %") or a
measure row ("Amount | % of revenue | Amount | % of revenue") under them. ``split_header`` reads
the leading rows that hold no value:

- the **period row**: the last of them with a year in a value column ("2019", "January 31,
  2020", "2019 €m"); a table with none has the leading rows above its first section as header;
- **captions** above it: a row with one cell ("Years Ended December 31,") heads the whole table;
  a row with several ("December 31, 2019 | | December 31, 2018 |") heads its cell's column and
  the empty ones after it;
- **repeated periods**: a period written once over the columns of its measures ("2019 | | 2018
  |" over "Men | Women | Men | Women") heads each of them;
- **unit and measure rows** under it, up to the first row with a label of its own and nothing
  else (a section: "Revenue:") or with a value;
- a **scale** the captions, units or the label column state ("(in millions)", "U.S. $ in
  thousands", "€m"), for a table whose ref states none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .dates import date_keys_frozen
from .units import parse_unit

#: How many of a table's first rows may be its header.
MAX_HEADER_ROWS = 6
_YEAR = re.compile(r"(?<![\d.,])(?:19|20)\d\d(?![\d.,])")
_SPACED_YEAR = re.compile(r"^\s*([12])\s([09])\s(\d)\s(\d)\s*$")
#: A value cell: an amount, a count or a percentage ("$ 1,452.4", "(114)", "9.8%", "—" is none).
_VALUE = re.compile(r"^\s*[(\-–−]?\s*[$€£¥₩]?\s*[(\-–−]?\s*\d[\d,]*(?:\.\d+)?\s*\)?\s*%?\s*\)?\s*$")
_EXCEPT = re.compile(r",?\s*(?:except|excluding|other than)\b[^)]*", re.I)
#: A row of a table's first rows: its cells as the payload holds them (JSON values).
Line = list[object]
#: A loader's name for a column whose header cell is empty ("column 3").
_PLACEHOLDER = re.compile(r"column \d+|c\d+", re.I)


@dataclass(frozen=True, slots=True)
class Header:
    """A table's header as ``split_header`` reads it."""

    #: Each column's header: its captions, its period and its measure, joined.
    columns: list[str]
    #: How many of the given rows the header took (the body starts after them).
    rows_taken: int
    #: The captions that head the whole table ("Years Ended December 31,").
    caption: str
    #: A scale the header states ("(in millions)"), "" if none.
    scale: str


def _text(cell: object) -> str:
    return cell.strip() if isinstance(cell, str) else ""


def _is_value(cell: object) -> bool:
    """A cell that holds a value (not a year, not a label)."""
    if isinstance(cell, bool):
        return False
    if isinstance(cell, int | float):
        return not (isinstance(cell, int) and 1900 <= cell <= 2099)
    c = _text(cell)
    if not c or not _VALUE.match(c):
        return False
    return _YEAR.fullmatch(c.strip("$ ")) is None


def _has_year(cell: object) -> bool:
    if isinstance(cell, int) and not isinstance(cell, bool):
        return 1900 <= cell <= 2099
    c = _text(cell)
    if not c:
        return False
    if _SPACED_YEAR.match(c):
        return True
    return _YEAR.search(c) is not None and bool(date_keys_frozen(c))


def _period(cell: object) -> str:
    """A period cell as a header writes it ("2 0 1 8" -> "2018")."""
    c = _text(cell) if not isinstance(cell, int) else str(cell)
    m = _SPACED_YEAR.match(c)
    return "".join(m.groups()) if m else c


def _section(line: Line) -> bool:
    """A row with a label of its own and nothing else ("Revenue:"): a section of the body."""
    return bool(_text(line[0])) and not any(_text(c) for c in line[1:])


def _scale_of(text: str) -> str:
    """The scale words of a header cell, as ``units.parse_unit`` reads them ("" for none)."""
    if not text:
        return ""
    # "(In thousands, except percentages)": the scale of the amounts
    text = _EXCEPT.sub("", text).strip()
    unit = parse_unit(text)
    return text if unit.has_scale else ""


def split_header(columns: Sequence[object], rows: Sequence[object]) -> Header | None:
    """The header of a table given as ``columns`` (its first row, as loaders take it) and
    ``rows``, when its first rows are captions, a period row, units or measures; ``None`` when
    the columns already are its header (the first row is the period row and no unit or measure
    row follows) or no row states a period before the first value."""
    lines = _leading_lines(columns, rows)
    if lines is None:
        return None
    found = _header_rows(lines, len(rows))
    if found is None:
        return None
    end, period_at = found
    return _read_header(lines, end, period_at)


def _leading_lines(columns: Sequence[object], rows: Sequence[object]) -> list[Line] | None:
    """The columns and the first rows, padded to one width (placeholder names blanked); None
    when a row is no list or the table is narrower than two columns."""
    lines: list[Line] = [["" if _PLACEHOLDER.fullmatch(_text(c)) else c for c in columns]]
    for row in rows[: MAX_HEADER_ROWS - 1]:
        if not isinstance(row, list | tuple):
            return None
        lines.append(list(row))
    width = max(len(line) for line in lines)
    if width < 2:
        return None
    return [line + [""] * (width - len(line)) for line in lines]


def _header_rows(lines: list[Line], n_rows: int) -> tuple[int, int] | None:
    """(how many lines the header takes, which is its period row or -1), or None when the
    given columns are the header as they are (or this is no table this reads)."""
    # The header block: the leading lines with no value.
    block = 0
    while block < len(lines) and not any(_is_value(c) for c in lines[block][1:]):
        block += 1
    if block == len(lines) and n_rows >= MAX_HEADER_ROWS - 1:
        return None  # no value in the first rows: not a table this reads
    period_at = -1
    for i in range(block):
        if sum(_has_year(c) for c in lines[i][1:]) >= 1 and not _section(lines[i]):
            period_at = i
    # a full first row over one row of text and a year ("country | year" over "Korea | 2019")
    # is a header over its data, not a caption over the periods
    full_first = period_at > 0 and all(_text(c) for c in lines[0][1:])
    if full_first and sum(_has_year(c) for c in lines[period_at][1:]) < 2:
        return None
    # No period: the leading rows with no value above the first section are the header (a
    # caption, the measures, a unit row: "Number of Shares" over "(in thousands)").
    end = period_at + 1 if period_at >= 0 else 1
    while end < block and not _section(lines[end]) and not any(_has_year(c) for c in lines[end]):
        end += 1
    if end == 1:
        return None  # the given columns are the header, as they are
    return end, period_at


@dataclass(slots=True)
class _HeaderText:
    """The header being read: each column's heads and periods, the captions, the scale."""

    heads: list[list[str]]
    periods: list[list[str]]
    captions: list[str] = field(default_factory=list)
    scale: str = ""


def _read_header(lines: list[Line], end: int, period_at: int) -> Header:
    width = len(lines[0])
    text = _HeaderText([[] for _ in range(width)], [[] for _ in range(width)])
    for i in range(end):
        _read_header_line(text, lines, i, end, period_at)
    # the period last: "% of total revenue 2018" (a year before "%" reads as a percentage)
    out = [" ".join(h + p) for h, p in zip(text.heads, text.periods, strict=True)]
    out = [h if h or j else "" for j, h in enumerate(out)]
    return Header(out, end - 1, " ".join(text.captions), text.scale)


def _read_header_line(
    text: _HeaderText, lines: list[Line], i: int, end: int, period_at: int
) -> None:
    """Line ``i`` of the header into ``text``: its label, a caption over the whole table, or its
    cells over their columns."""
    line = lines[i]
    width = len(line)
    filled = [j for j in range(1, width) if _text(line[j])]
    label = _text(line[0])
    if label:
        text.heads[0].append(label)
        text.scale = text.scale or _scale_of(label)
    if len(filled) == 1 and width > 2 and _table_wide(line[filled[0]], i - period_at):
        text.captions.append(_text(line[filled[0]]))
        text.scale = text.scale or _scale_of(text.captions[-1])
        return
    # A period written once heads the empty cells after it; so does a group label above
    # the periods written from the first value column on ("Domestic | | International |").
    spread = i == period_at or (i < period_at and len(filled) >= 2 and filled[0] == 1)
    for k, j in enumerate(filled):
        cell = _period(line[j]) if i == period_at else _text(line[j])
        stop = filled[k + 1] if k + 1 < len(filled) else width
        targets = range(j, stop) if spread and _spans(lines[i + 1 : end], j, stop) else [j]
        for t in targets:
            (text.periods[t] if i == period_at else text.heads[t]).append(cell)
        if i > period_at:
            text.scale = text.scale or _scale_of(cell)


def _table_wide(cell: object, below: int) -> bool:
    """Does the one cell of a header row head the whole table: a caption above the periods, or
    under them a scale ("(in thousands)" centred over three years) or a phrase; not a unit of
    its own column ("%" over a change)?"""
    if below == 0 or _has_year(cell):
        return False
    text = _text(cell)
    return below < 0 or ("%" not in text and bool(_scale_of(text))) or len(text.split()) >= 3


def _spans(below: list[Line], start: int, stop: int) -> bool:
    """Do the rows under a header cell fill the empty columns after it (a period written once
    over its measures: "2019 | |" over "Men | Women")?"""
    if stop - start < 2:
        return False
    return any(all(_text(line[t]) for t in range(start, stop)) for line in below)

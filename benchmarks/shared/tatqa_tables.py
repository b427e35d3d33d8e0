"""TAT-QA tables as tableRef payloads: which leading rows are the header, and the column names
they give. Used by tests/gate/test_tatqa.py (the repo's small subset) and
benchmarks/gate_binding.py (the whole dev set).
"""

from __future__ import annotations

import re

_NUMERIC = re.compile(r"^\s*\(?-?\$?\s*\(?-?\d[\d,]*(?:\.\d+)?\)?%?\s*$")
YEAR = re.compile(r"^(?:19|20)\d\d$")


def number_cell(cell: str) -> bool:
    """A cell holding an amount or a percentage (a bare year is a header, not a value)."""
    c = cell.strip()
    return bool(c) and bool(_NUMERIC.match(c)) and not YEAR.match(c.strip("$ "))


def header_and_rows(table: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """The column names and the body rows of a TAT-QA table: the leading rows with no number
    past the first column are the header (at least one), their cells joined per column."""
    n_head = 0
    for row in table:
        if any(number_cell(c) for c in row[1:]):
            break
        n_head += 1
    n_head = max(n_head, 1)
    columns = [
        " ".join(h[j].strip() for h in table[:n_head] if j < len(h) and h[j].strip()) or f"c{j}"
        for j in range(len(table[0]))
    ]
    return columns, table[n_head:]


#: A date without its year ("September 30,"): a period, not a measure.
_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d", re.I)
_YEAR_IN = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?![\d.])")


def _year_of(cell: str) -> str:
    """The one year a header cell names ("" for none, or for two: "2019 and 2018" is a change)."""
    c = cell.strip()
    if re.fullmatch(r"[12] [09] \d \d", c):
        return c.replace(" ", "")
    found = set(_YEAR_IN.findall(c))
    return found.pop() if len(found) == 1 else ""


def _two_years(cell: str) -> bool:
    return len(set(_YEAR_IN.findall(cell))) > 1


def column_years(table: list[list[str]]) -> tuple[int, list[str], list[str]]:
    """The benchmark's own reading of a raw TAT-QA table's header (not the GATE's): how many
    leading rows hold no number, each column's year (a year written once over the empty
    columns after it that a lower header row fills is theirs too), and each column's other
    header words (its measure: "Amount", "% of revenue", "Men")."""
    n_head = 0
    for row in table:
        if any(number_cell(c) for c in row[1:]):
            break
        n_head += 1
    width = len(table[0])
    years = [""] * width
    measures: list[list[str]] = [[] for _ in range(width)]
    head = [r + [""] * (width - len(r)) for r in table[:n_head]]
    year_row = max((i for i, r in enumerate(head) if any(_year_of(c) for c in r[1:])), default=-1)
    two = [any(_two_years(h[j]) for h in head) for j in range(width)]
    for i, row in enumerate(head):
        filled = [j for j in range(1, width) if row[j].strip()]
        # a group label written once over its columns, from the first value column on
        groups = i < year_row and len(filled) >= 2 and filled[0] == 1
        for j in range(1, width):
            y = _year_of(row[j])
            span = [j]
            k = j + 1
            while k < width and not row[k].strip() and any(h[k].strip() for h in head[i + 1 :]):
                span.append(k)
                k += 1
            if y and i == year_row:
                for k in span:
                    years[k] = "" if two[k] else y
            elif (
                row[j].strip()
                and not y
                and not _MONTH.search(row[j])
                and (i > year_row >= 0 or groups)
            ):
                for k in span if groups else [j]:
                    measures[k].append(row[j].strip())
    return n_head, years, [" ".join(m) for m in measures]

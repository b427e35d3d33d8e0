"""TAT-QA tables as tableRef payloads: which leading rows are the header, and the column names
they give. Used by tests/nodes/gate/test_tatqa.py (the repo's small subset) and
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

"""What ``refgate init`` guesses about a data file: each column's unit (from its name and its
values: ``_usd``, ``_pct``, ``%``, currency symbols) and the period column (the first whose
values read as dates, months, quarters or years). The guesses are written into refgate.toml
marked as guesses, for a person to check: the GATE compares numbers in these units.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

#: Rows read from a file to guess from.
SAMPLE_ROWS = 50
#: Column-name endings and words naming a unit.
NAME_UNITS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), unit)
    for pattern, unit in (
        (r"(^|_)(usd|dollars?)($|_)", "USD"),
        (r"(^|_)(eur|euros?)($|_)", "EUR"),
        (r"(^|_)(gbp)($|_)", "GBP"),
        (r"(^|_)(jpy|yen)($|_)", "JPY"),
        (r"(^|_)(krw|won)($|_)", "KRW"),
        (r"(^|_)(pct|percent|percentage)($|_)", "%"),
    )
)
#: Leading or trailing symbols of values naming a unit.
SYMBOL_UNITS = (("$", "USD"), ("€", "EUR"), ("£", "GBP"), ("¥", "JPY"), ("₩", "KRW"))
_DATE = re.compile(
    r"^\s*(\d{4}-\d{2}-\d{2}([ T][\d:.]+)?|\d{4}-\d{2}|\d{4}\s*-?Q[1-4]|\d{4}/\d{1,2}/\d{1,2})\s*$",
    re.I,
)
_YEAR = re.compile(r"^\s*(1[89]|20)\d{2}(\.0)?\s*$")
_PERIOD_NAMES = ("date", "period", "month", "quarter", "year", "time", "day", "week")


def sample_rows(path: Path, limit: int = SAMPLE_ROWS) -> tuple[list[str], list[list[str]]]:
    """The header and the first ``limit`` rows of a CSV or parquet file, as text."""
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            rows = [row for _, row in zip(range(limit), reader, strict=False)]
        return header, rows
    # deferred: pyarrow is heavy and only a parquet file needs it
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read_row_group(0).slice(0, limit)
    header = list(table.column_names)
    cols = [[("" if v is None else str(v)) for v in table.column(c).to_pylist()] for c in header]
    return header, [list(r) for r in zip(*cols, strict=False)]


def guess_header_rows(path: Path) -> int:
    """How many of a CSV file's first rows are its header, as the GATE reads a table's header
    rows (``gate.headers``: a caption, the years, a unit or measure row); 1 for a file
    whose first row is its header, and for a parquet file."""
    if path.suffix.lower() != ".csv":
        return 1
    # deferred: the GATE's reading of a table, needed only here
    from refgate.gate.headers import MAX_HEADER_ROWS, split_header

    with path.open(encoding="utf-8-sig", newline="") as fh:
        first = [row for _, row in zip(range(MAX_HEADER_ROWS + 1), csv.reader(fh), strict=False)]
    if len(first) < 2:
        return 1
    found = split_header(first[0], first[1:])
    return 1 + found.rows_taken if found is not None else 1


def guess_unit(column: str, values: Sequence[str]) -> str | None:
    """The unit a column's name or values name, else None."""
    for pattern, unit in NAME_UNITS:
        if pattern.search(column):
            return unit
    seen = [v.strip() for v in values if v and v.strip()]
    if not seen:
        return None
    if all(v.endswith("%") for v in seen):
        return "%"
    for symbol, unit in SYMBOL_UNITS:
        if all(v.lstrip("-(").startswith(symbol) or v.endswith(symbol) for v in seen):
            return unit
    return None


def guess_period(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """The first column whose values all read as dates, months or quarters (or as years, for a
    column named like a period), else None."""
    for j, name in enumerate(header):
        values = [r[j].strip() for r in rows if j < len(r) and r[j].strip()]
        if not values:
            continue
        if all(_DATE.match(v) for v in values):
            return name
        if name.strip().lower() in _PERIOD_NAMES and all(_YEAR.match(v) for v in values):
            return name
    return None

"""Host-side DuckDB scans of a dataset file, for files too large to load into pandas.

``scan_profile`` computes what InspectDataset reports (row count, per-column non-null counts and
ranges, the distinct periods, the latest value of each metric, head and tail samples) in a few
streaming queries, with a wall-clock bound: past ``deadline`` seconds the queries are interrupted
and ``ScanTimeout`` says so. Column profiling is bounded (``MAX_PROFILED_COLUMNS``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refgate.errors import RefgateError
from refgate.tools.sandbox.worker.sql import csv_options

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from refgate.workspace import DatasetSpec

#: Columns whose non-null count and range are computed (the rest are listed with their type).
MAX_PROFILED_COLUMNS = 500
#: Most distinct periods read to find the first and latest period.
MAX_PERIODS = 200_000
#: Metrics whose latest value is reported.
MAX_METRICS = 50
#: DuckDB's memory limit for host-side scans.
SCAN_MEMORY = "1GB"

_RANGED: tuple[str, ...] = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
)
_RANGED += ("UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "DATE", "TIMESTAMP")


@functools.lru_cache(maxsize=256)
def _estimate(path: str, fmt: str, size: int, mtime_ns: int) -> int:
    if fmt == "parquet":
        try:
            # deferred: pyarrow is heavy to import; paid on first use
            import pyarrow.parquet as pq

            meta = pq.read_metadata(path)
            groups = range(meta.num_row_groups)
            return max(size, sum(meta.row_group(i).total_byte_size for i in groups))
        except Exception:  # unreadable: whoever loads the file reports it
            return size
    return size


def estimated_bytes(path: Path, fmt: str) -> int:
    """A dataset file's estimated size in memory: a CSV's size, a parquet's uncompressed size
    (from its footer). A missing file counts as huge."""
    try:
        st = path.stat()
    except OSError:
        return 1 << 62
    return _estimate(str(path), fmt, st.st_size, st.st_mtime_ns)


def estimated_memory(spec: DatasetSpec) -> int:
    if spec.path is None:  # a warehouse table: never loaded whole by size
        return 1 << 62
    return estimated_bytes(spec.path, spec.format)


def count_rows(spec: DatasetSpec, seconds: float = 60.0) -> int:
    """The dataset's row count without loading it (a parquet footer, else a DuckDB count)."""
    if spec.format == "parquet":
        # deferred: pyarrow is heavy to import; paid on first use
        import pyarrow.parquet as pq

        return int(pq.read_metadata(spec.checked_path()).num_rows)
    con = connect()
    try:
        with deadline(con, seconds):
            row = con.execute(f"SELECT COUNT(*) FROM {source_sql(spec)}").fetchone()
            return int(row[0])  # type: ignore[index]  # COUNT(*) returns one row
    finally:
        con.close()


class ScanTimeout(RefgateError, RuntimeError):
    """The scan did not finish within its deadline."""


def quote(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def source_sql(spec: DatasetSpec) -> str:
    """The table function reading the dataset's file."""
    path = "'" + str(spec.checked_path()).replace("'", "''") + "'"
    return (
        f"read_parquet({path})"
        if spec.format == "parquet"
        else f"read_csv({path}, {csv_options(spec.header_rows, spec.header)})"
    )


def connect() -> duckdb.DuckDBPyConnection:
    # deferred: duckdb is heavy to import; paid on first use
    import duckdb

    con = duckdb.connect(
        ":memory:",
        config={
            "memory_limit": SCAN_MEMORY,
            "threads": "2",
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        },
    )
    con.execute("SET enable_progress_bar = false")  # it would print to the host's terminal
    return con


@contextlib.contextmanager
def deadline(con: duckdb.DuckDBPyConnection, seconds: float) -> Iterator[None]:
    """Interrupt ``con``'s running query after ``seconds``; raise ``ScanTimeout`` then."""
    # deferred: duckdb is heavy to import; paid on first use
    import duckdb

    fired = threading.Event()

    def stop() -> None:
        fired.set()
        con.interrupt()

    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        yield
    except duckdb.InterruptException:
        raise ScanTimeout(f"the scan took longer than {seconds:g} s and was stopped") from None
    finally:
        timer.cancel()
    if fired.is_set():
        raise ScanTimeout(f"the scan took longer than {seconds:g} s and was stopped")


@dataclass
class ScanProfile:
    """What a scan found; ``frame``-shaped parts are small pandas frames."""

    rows: int
    types: dict[str, str]
    non_null: dict[str, int] = field(default_factory=dict)
    ranges: dict[str, tuple[object, object]] = field(default_factory=dict)
    sample: pd.DataFrame | None = None
    periods: pd.DataFrame | None = None
    head: pd.DataFrame | None = None
    tail: pd.DataFrame | None = None
    latest: dict[str, tuple[object, object]] = field(default_factory=dict)


def _rows_frame(rows, types: dict[str, str]):
    """Rows returned as structs (dicts) by ``arg_min(t, ...)``, as a DataFrame."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    return pd.DataFrame(list(rows or []), columns=list(types))


def _order_sql(columns: tuple[str, ...], date_like: bool) -> str:
    if len(columns) == 2:
        a, b = (f"TRY_CAST({quote(c)} AS DOUBLE)" for c in columns)
        return f"({a} * 100 + {b})"
    cast = "TIMESTAMP" if date_like else "DOUBLE"
    return f"TRY_CAST({quote(columns[0])} AS {cast})"


def _column_parts(
    spec: DatasetSpec, types: dict[str, str], profiled: list[str]
) -> tuple[list[str], set[str]]:
    """The aggregates counting each profiled column (and its range when it has one), and the
    columns ranged."""
    parts: list[str] = []
    ranged: set[str] = set()
    for col in profiled:
        parts.append(f"COUNT({quote(col)})")
        kind = types[col].split("(")[0]
        if kind in _RANGED or kind.startswith("TIMESTAMP"):
            parts += [f"MIN({quote(col)})", f"MAX({quote(col)})"]
            ranged.add(col)
        elif col in spec.date_columns:
            cast = f"TRY_CAST({quote(col)} AS TIMESTAMP)"
            parts += [f"MIN({cast})", f"MAX({cast})"]
            ranged.add(col)
    return parts, ranged


def _period_order(spec: DatasetSpec, types: dict[str, str], cols: tuple[str, ...]) -> str:
    """The SQL expression that orders rows by their period columns."""
    date_like = len(cols) == 1 and (
        cols[0] in spec.date_columns
        or "DATE" in types.get(cols[0], "")
        or "TIMESTAMP" in types.get(cols[0], "")
    )
    return _order_sql(cols, date_like)


def _metric_parts(chosen: list[str], order: str, n: int) -> list[str]:
    """The aggregates of each chosen metric's latest value, and the head and tail rows."""
    parts: list[str] = []
    for m in chosen:
        keep = f"FILTER (WHERE {quote(m)} IS NOT NULL AND {order} IS NOT NULL)"
        parts += [f"arg_max({quote(m)}, {order}) {keep}", f"max({order}) {keep}"]
    if n:
        parts += [f"arg_min(t, {order}, {n})", f"arg_max(t, {order}, {n})"]
    return parts


def _read_counts(
    profile: ScanProfile,
    values: Sequence[Any],
    profiled: list[str],
    ranged: set[str],
    chosen: list[str],
) -> int:
    """Fill the profile's counts, ranges and latest values from the aggregate row; return the
    position of what follows them."""
    at = 1
    for col in profiled:
        profile.non_null[col] = int(values[at])
        at += 1
        if col in ranged:
            profile.ranges[col] = (values[at], values[at + 1])
            at += 2
    for m in chosen:
        if values[at + 1] is not None:
            profile.latest[m] = (values[at], values[at + 1])
        at += 2
    return at


def _read_samples(
    con: duckdb.DuckDBPyConnection,
    src: str,
    profile: ScanProfile,
    cols: tuple[str, ...],
    n: int,
    rest: Sequence[Any],
) -> None:
    """The head and tail rows (in period order when there are periods) and the periods."""
    types = profile.types
    if cols:
        if n:
            profile.head = _rows_frame(rest[0], types)
            profile.tail = _rows_frame(list(reversed(rest[1] or [])), types)
        listed = ", ".join(quote(c) for c in cols)
        profile.periods = con.execute(
            f"SELECT DISTINCT {listed} FROM {src} LIMIT {MAX_PERIODS + 1}"
        ).df()
        if len(profile.periods) > MAX_PERIODS:
            profile.periods = None
    elif n:
        profile.head = con.execute(f"SELECT * FROM {src} LIMIT {n}").df()
        skip = max(profile.rows - n, 0)
        profile.tail = con.execute(f"SELECT * FROM {src} LIMIT {n} OFFSET {skip}").df()


def scan_profile(
    spec: DatasetSpec,
    *,
    period_columns,
    metrics,
    sample_rows: int,
    seconds: float,
) -> ScanProfile:
    """Profile ``spec``'s file. ``period_columns(sample)`` and ``metrics(sample)`` choose, from a
    1,000-row sample frame, the period columns and the metric columns (InspectDataset's rules)."""
    con = connect()
    src = source_sql(spec)
    try:
        with deadline(con, seconds):
            described = con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()
            types = {str(r[0]): str(r[1]) for r in described}
            sample = con.execute(f"SELECT * FROM {src} LIMIT 1000").df()
            cols = tuple(period_columns(sample))
            n = sample_rows
            # One pass over the file: counts, ranges, each metric's latest value and the head
            # and tail rows in period order; a second one for the distinct periods.
            profiled = list(types)[:MAX_PROFILED_COLUMNS]
            column_parts, ranged = _column_parts(spec, types, profiled)
            parts = ["COUNT(*)", *column_parts]
            chosen: list[str] = []
            if cols:
                order = _period_order(spec, types, cols)
                chosen = [m for m in metrics(sample) if m in types][:MAX_METRICS]
                parts += _metric_parts(chosen, order, n)
            # an aggregate query: always one row
            values = con.execute(f"SELECT {', '.join(parts)} FROM {src} AS t").fetchone()
            assert values is not None
            profile = ScanProfile(rows=int(values[0]), types=types, sample=sample)
            at = _read_counts(profile, values, profiled, ranged, chosen)
            _read_samples(con, src, profile, cols, n, values[at:])
            return profile
    finally:
        con.close()

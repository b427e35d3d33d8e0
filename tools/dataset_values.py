"""The workspace's datasets as workspace data for the outbound check.

A run's code reads the datasets (``datasets[...]``, ``sql()``, the files mounted in its sandbox),
InspectDataset shows their samples, and capabilities compute from them: a value of any of them
may reach a search query without ever being emitted. ``DatasetValues.carried`` asks DuckDB, on
the host, whether a text sent off the machine writes a value of a dataset (``number_forms``:
in any format, at the text's precision) or one of its string cells (whole words, as written).

A number needs ``MIN_DATASET_DIGITS`` significant digits to match a dataset value by value (a
dataset holds thousands of values: ``2.5`` would match one by chance). The scan has a deadline
(``SCAN_SECONDS``); past it the check fails closed (``DatasetScanFailed``). Warehouse tables
(databases) are not scanned.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from refgate.errors import RefgateError
from refgate.tools.dataset_scan import ScanTimeout, connect, deadline, quote, source_sql
from refgate.tools.number_forms import Mention, sql_condition

if TYPE_CHECKING:
    import duckdb

    from refgate.workspace import DatasetSpec, Workspace

#: Seconds one outbound check may spend scanning the datasets.
SCAN_SECONDS = 20.0
#: Fewest significant digits a number needs to match a dataset value by value.
MIN_DATASET_DIGITS = 3
#: Shortest string cell that counts as workspace data.
MIN_STRING = 4
#: Most string cells one check reports.
MAX_STRINGS = 20
#: Largest dataset file kept parsed in memory between checks, and how many are kept.
MAX_LOADED_BYTES, MAX_LOADED = 32 << 20, 16
_NUMERIC: tuple[str, ...] = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT")
_NUMERIC += ("USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")


class DatasetScanFailed(RefgateError, RuntimeError):
    """The datasets could not be scanned in time: the text is not known to be free of them."""


@functools.lru_cache(maxsize=64)
def _columns(source: str, size: int, mtime_ns: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(numeric, string) columns of one dataset file, cached by its size and time."""
    con = connect()
    try:
        with deadline(con, SCAN_SECONDS):
            described = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    finally:
        con.close()
    numeric = tuple(str(r[0]) for r in described if str(r[1]).upper().startswith(_NUMERIC))
    strings = tuple(str(r[0]) for r in described if str(r[1]).upper() == "VARCHAR")
    return numeric, strings


class _Loaded:
    """Small dataset files parsed once per process into one DuckDB connection (a check then
    scans memory, not the CSV again); a changed file (size, time) is loaded again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.tables: dict[str, tuple[int, int, str]] = {}

    def table(self, path: str, size: int, mtime_ns: int, source: str, seconds: float) -> str:
        """The loaded table of this file (call with ``lock`` held)."""
        if self.con is None:
            self.con = connect()
        known = self.tables.get(path)
        if known is not None and known[:2] == (size, mtime_ns):
            return known[2]
        name = f"ds_{len(self.tables)}_{abs(hash((path, size, mtime_ns))):x}"
        if known is not None:
            self.con.execute(f"DROP TABLE IF EXISTS {known[2]}")
        elif len(self.tables) >= MAX_LOADED:
            oldest = self.tables.pop(next(iter(self.tables)))
            self.con.execute(f"DROP TABLE IF EXISTS {oldest[2]}")
        with deadline(self.con, seconds):
            self.con.execute(f"CREATE TABLE {name} AS SELECT * FROM {source}")
        self.tables[path] = (size, mtime_ns, name)
        return name


_LOADED = _Loaded()


def _bounded(word: str, text: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", text) is not None


@dataclass(frozen=True)
class DatasetValues:
    """The datasets whose values an outbound text may not carry."""

    datasets: tuple[DatasetSpec, ...]
    seconds: float = SCAN_SECONDS

    @classmethod
    def of(cls, workspace: Workspace | None) -> DatasetValues | None:
        """The workspace's file datasets, or None when it has none."""
        if workspace is None:
            return None
        files = tuple(s for s in workspace.datasets.values() if not s.is_warehouse)
        return cls(files) if files else None

    def carried(self, text: str, found: Sequence[Mention]) -> list[str]:
        """What ``text`` carries of the datasets: the mentions (as written) matching a value,
        and the string cells it writes. ``DatasetScanFailed`` past the deadline."""
        out: list[str] = []
        left = list(found)
        for spec in self.datasets:
            try:
                path = spec.checked_path()
                stat = path.stat()
                source = source_sql(spec)
                numeric, strings = _columns(source, stat.st_size, stat.st_mtime_ns)
                if stat.st_size <= MAX_LOADED_BYTES:
                    with _LOADED.lock:
                        table = _LOADED.table(
                            str(path), stat.st_size, stat.st_mtime_ns, source, self.seconds
                        )
                        assert _LOADED.con is not None
                        hits, cells = self._scan(_LOADED.con, table, numeric, strings, text, left)
                else:
                    con = connect()
                    try:
                        hits, cells = self._scan(con, source, numeric, strings, text, left)
                    finally:
                        con.close()
            except ScanTimeout as exc:
                raise DatasetScanFailed(
                    f"dataset {spec.name!r} could not be checked within {self.seconds:g} s"
                ) from exc
            except Exception:  # an unreadable file: nothing of it can have been read
                continue
            out += [m.text for m in hits]
            left = [m for m in left if m not in hits]
            out += [c for c in cells if c not in out]
        return out

    def _scan(
        self,
        con: duckdb.DuckDBPyConnection,
        source: str,
        numeric: tuple[str, ...],
        strings: tuple[str, ...],
        text: str,
        found: list[Mention],
    ) -> tuple[list[Mention], list[str]]:
        conditions: list[tuple[Mention, str]] = []
        for m in found:
            parts = [sql_condition(m, quote(c), min_digits=MIN_DATASET_DIGITS) for c in numeric]
            cond = " OR ".join(f"({p})" for p in parts if p)
            if cond:
                conditions.append((m, cond))
        hits: list[Mention] = []
        cells: list[str] = []
        with deadline(con, self.seconds):
            if conditions:
                row = con.execute(
                    "SELECT "
                    + ", ".join(f"coalesce(bool_or({c}), false)" for _, c in conditions)
                    + f" FROM {source}"
                ).fetchone()
                hits = [m for (m, _), hit in zip(conditions, row or (), strict=False) if hit]
            if strings:
                union = " UNION ALL ".join(
                    f"SELECT CAST({quote(c)} AS VARCHAR) AS v FROM {source}" for c in strings
                )
                rows = con.execute(
                    f"SELECT DISTINCT v FROM ({union}) WHERE length(v) >= {MIN_STRING} "
                    f"AND contains(?, v) LIMIT {MAX_STRINGS * 5}",
                    [text],
                ).fetchall()
                cells = [str(r[0]) for r in rows if _bounded(str(r[0]), text)][:MAX_STRINGS]
        return hits, cells

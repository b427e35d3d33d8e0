"""``sql(query) -> DataFrame`` in the prelude: DuckDB over the workspace's datasets.

Every file dataset is a DuckDB view of the same name, so a query streams the file instead of
loading it into pandas: a group-by or a top-N over a table larger than the sandbox's memory
works. The connection is made on the first ``sql()`` call of a run, with ``memory_limit`` below
the call's address-space limit, spilling to the call's scratch dir, file access limited to the
dataset files and the scratch dir, extensions off and the configuration locked. A query is one
read-only ``SELECT``/``WITH`` statement.

A query over warehouse datasets (tables in a database, declared in refgate.toml) is not run here:
the sandbox has no network. It goes to the host over the call's channel, which runs it through
Ibis against the configured database only (``refgate.tools.sandbox.warehouse``).

Each query is reported to the host (recorded in the executionRef), and the frame it returns
carries it in ``frame.attrs["sql"]`` so ``emit_result(table=frame)`` records how it was computed.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .state import State

if TYPE_CHECKING:  # the worker loads DuckDB only when the code calls sql()
    import duckdb

#: How CSV datasets are read (as pandas reads them: a header row, commas, short rows padded),
#: here and by InspectDataset's host-side scans (``tools/dataset_scan.py``).
CSV_OPTIONS = "header = true, delim = ',', null_padding = true"
#: Longest query text accepted (characters).
MAX_QUERY_CHARS = 100_000
#: Most rows one query may return into pandas (aggregate in SQL for more).
MAX_RESULT_ROWS = 1_000_000
#: Address space (MiB) kept outside DuckDB's memory_limit: the interpreter, pandas, threads.
RESERVED_MB = 400


class SqlError(ValueError):
    """A query sql() refuses or DuckDB rejects; the message says why."""


def memory_limit_mb(address_space_bytes: int | None) -> int:
    """DuckDB's memory_limit for a call capped at ``address_space_bytes`` of address space."""
    if not address_space_bytes:
        return 1024
    total = address_space_bytes >> 20
    return max(64, int((total - RESERVED_MB) * 0.6))


def csv_options(header_rows: int = 1, names: tuple[str, ...] | list[str] = ()) -> str:
    """``CSV_OPTIONS``, or for a file with several header rows: those rows skipped and the
    joined names given (``DatasetSpec.header_rows``)."""
    if header_rows <= 1:
        return CSV_OPTIONS
    listed = ", ".join(_literal(n) for n in names)
    return f"header = false, skip = {int(header_rows)}, delim = ',', null_padding = true, names = [{listed}]"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def view_sql(name: str, spec: dict) -> str:
    """``CREATE VIEW`` for one file dataset (parquet or CSV, read as DuckDB detects it)."""
    path = _literal(spec["path"])
    reader = (
        f"read_parquet({path})"
        if spec.get("format") == "parquet"
        else f"read_csv({path}, {csv_options(spec.get('header_rows', 1), spec.get('names', ()))})"
    )
    return f"CREATE VIEW {_ident(name)} AS SELECT * FROM {reader}"


class Sql:
    """The ``sql`` callable of one run (one lazily made DuckDB connection)."""

    def __init__(self, specs: dict, channel, limits: dict, scratch: str) -> None:
        self._specs = specs
        self._channel = channel
        self._limits = limits
        self._scratch = scratch
        self._con: duckdb.DuckDBPyConnection | None = None

    # ------------------------------------------------------------------ connection

    def _connect(self):
        # deferred: DuckDB loads only when the code calls sql(), which keeps the warm template small
        import duckdb

        mem = memory_limit_mb(self._limits.get("as"))
        spill = os.path.join(self._scratch, "duckdb-spill")
        os.makedirs(spill, exist_ok=True)
        con = duckdb.connect(
            ":memory:",
            config={
                "memory_limit": f"{mem}MB",
                "threads": "2",
                "temp_directory": spill,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            },
        )
        files = [s for s in self._specs.values() if s.get("kind", "file") == "file"]
        allowed = sorted({os.path.dirname(s["path"]) + "/" for s in files} | {self._scratch + "/"})
        con.execute(f"SET allowed_directories = [{', '.join(_literal(d) for d in allowed)}]")
        con.execute("SET enable_progress_bar = false")  # it would print to the code's stdout
        con.execute("SET enable_external_access = false")
        for name, spec in self._specs.items():
            if spec.get("kind", "file") == "file":
                con.execute(view_sql(name, spec))
        con.execute("SET lock_configuration = true")
        self._con = con
        return con

    # ------------------------------------------------------------------ one query

    def _check(self, query) -> str:
        # deferred: DuckDB loads only when the code calls sql(), which keeps the warm template small
        import duckdb

        if not isinstance(query, str):
            raise SqlError(f"sql() takes the query as text, not {type(query).__name__}")
        if not query.strip():
            raise SqlError("sql() got an empty query")
        if len(query) > MAX_QUERY_CHARS:
            raise SqlError(f"the query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
        try:
            statements = duckdb.extract_statements(query)
        except duckdb.Error as exc:
            raise SqlError(f"the query does not parse: {exc}") from None
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            raise SqlError(
                "sql() runs one read-only query: a single SELECT (or WITH ... SELECT) statement"
            )
        return statements[0].query.strip().rstrip(";")

    def _tables(self, query: str) -> tuple[set[str], set[str]]:
        """(warehouse datasets, file datasets) the query names."""
        # deferred: DuckDB loads only when the code calls sql(), which keeps the warm template small
        import duckdb

        kinds = {n: s.get("kind", "file") for n, s in self._specs.items()}
        if "warehouse" not in kinds.values():
            return set(), set()
        try:
            used = set(duckdb.get_table_names(query))
        except duckdb.Error:
            return set(), set()
        remote = {n for n in used if kinds.get(n) == "warehouse"}
        return remote, {n for n in used if kinds.get(n) == "file"}

    def __call__(self, query: str):
        """Run one read-only SQL query over the datasets (views named like the datasets);
        return a pandas DataFrame. Use it for data too large for datasets[...]."""
        text = self._check(query)
        t0 = time.perf_counter()
        remote, files = self._tables(text)
        if remote and files:
            raise SqlError(
                f"one query cannot join warehouse tables ({', '.join(sorted(remote))}) with "
                f"file datasets ({', '.join(sorted(files))}): query each, then combine in pandas"
            )
        frame = self._remote(text) if remote else self._local(text)
        elapsed = time.perf_counter() - t0
        frame.attrs["sql"] = text
        self._channel.call(
            {
                "op": "sql",
                "query": text,
                "rows": len(frame),
                "ms": round(elapsed * 1000, 1),
                "warehouse": sorted(remote),
            }
        )
        return frame

    def _local(self, text: str):
        # deferred: DuckDB loads only when the code calls sql(), which keeps the warm template small
        import duckdb

        con = self._con or self._connect()
        try:
            table = con.sql(text).limit(MAX_RESULT_ROWS + 1).arrow()
        except duckdb.OutOfMemoryException as exc:
            raise MemoryError(
                f"the query needs more memory than DuckDB's limit in the sandbox "
                f"({memory_limit_mb(self._limits.get('as'))} MB) even when spilling to scratch: "
                f"aggregate or filter earlier ({exc})"
            ) from None
        except duckdb.Error as exc:
            raise SqlError(f"{type(exc).__name__}: {exc}") from None
        if hasattr(table, "read_all"):  # a RecordBatchReader on some DuckDB versions
            table = table.read_all()
        if table.num_rows > MAX_RESULT_ROWS:
            raise SqlError(
                f"the query returns more than {MAX_RESULT_ROWS} rows into pandas: aggregate "
                "(GROUP BY), filter (WHERE) or keep the top rows (ORDER BY ... LIMIT n) in SQL"
            )
        return table.to_pandas()

    def _remote(self, text: str):
        reply = self._channel.call({"op": "warehouse", "query": text})
        if not reply.get("ok"):
            raise SqlError(reply.get("error") or "the warehouse query failed")
        return State.pd.DataFrame(reply.get("rows", []), columns=reply.get("columns", []))

"""Warehouse datasets: tables in a database, reached through Ibis on the host.

A workspace may declare ``[datasets.sales] url = "postgresql://analyst@db:5432/shop"`` and
``table = "public.sales"``; the password comes from the environment variable named by
``password_env`` (else libpq's own PGPASSWORD / ~/.pgpass), never from refgate.toml.

The sandbox never connects to the database: it has no network at all. ``sql()`` inside the sandbox
sends a query over warehouse datasets to the host, and ``run_query`` here is the query proxy. Two
layers, either of which alone refuses a read outside the declared tables:

1. the allowlist (``tools/warehouse_check.py``): one SELECT, every table reference resolved by
   scope to a declared dataset or a CTE visible there, no system catalog or function by any name,
   no function outside SQL's known set (``pg_read_file``, ``dblink``...);
2. the session, which does not depend on parsing: the query runs in a transaction whose only
   schema on the search path holds one temporary view per dataset it names (so an undeclared
   name resolves to nothing), read-only once the views exist, and the planner's list of
   relations (``EXPLAIN``) must be within what a plain read of the declared tables touches (no
   catalog, no other table, whatever the spelling). The views vanish with the transaction.

A statement timeout bounds each query, at most ``MAX_ROWS`` rows come back. So the only
destination reachable from the sandbox is the configured host and port, and there only the
declared tables; the database role (docs/deploy.md) is the third layer.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import decimal
import math
import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from refgate.errors import InputError
from refgate.payloads import Cell, JsonDict
from refgate.tools.warehouse_check import CheckedQuery, QueryRefused
from refgate.tools.warehouse_check import check_query as _check

if TYPE_CHECKING:
    from refgate.workspace import DatasetSpec, Workspace

#: Most rows one query returns to the sandbox, and most cells.
MAX_ROWS = 100_000
MAX_CELLS = 2_000_000
#: Rows a table may have to be loaded whole (engine capabilities, InspectDataset).
MAX_LOAD_ROWS = 200_000
#: Server-side limit of one statement.
STATEMENT_TIMEOUT_MS = 60_000

_CONNECTIONS: dict[tuple, tuple[Any, threading.Lock]] = {}
_LOCK = threading.Lock()


class WarehouseError(InputError, ValueError):
    """A warehouse query refused or failed; the message goes back to the code."""


def redacted(url: str) -> str:
    """The URL without user information (for messages)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _params(spec: DatasetSpec) -> dict[str, str | int | None]:
    parts = urlsplit(spec.url or "")
    params: dict[str, str | int | None] = {
        "host": parts.hostname,
        "port": parts.port or 5432,
        "database": unquote(parts.path.lstrip("/")),
    }
    if parts.username:
        params["user"] = unquote(parts.username)
    if spec.password_env:
        password = os.environ.get(spec.password_env)
        if password is None:
            raise WarehouseError(
                f"dataset {spec.name!r}: the environment variable {spec.password_env} (its "
                "password_env) is not set"
            )
        params["password"] = password
    return params


def connect_locked(spec: DatasetSpec) -> tuple[Any, threading.Lock]:
    """The (cached) Ibis backend for ``spec``'s database, in a read-only session, and the lock
    that keeps one transaction at a time on it (runs share the cached connection)."""
    params = _params(spec)
    key = tuple(sorted((k, str(v)) for k, v in params.items()))
    with _LOCK:
        cached = _CONNECTIONS.get(key)
        if cached is not None:
            return cached
        try:
            # deferred: optional dependency (ibis (warehouse datasets))
            import ibis
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise WarehouseError(f"warehouse datasets need ibis-framework: {exc}") from None
        try:
            con = ibis.postgres.connect(**params, connect_timeout=10)
            con.raw_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY").close()
            con.raw_sql(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}").close()
        except WarehouseError:
            raise
        except Exception as exc:
            raise WarehouseError(
                f"cannot connect to {redacted(spec.url or '')} for dataset {spec.name!r}: "
                f"{type(exc).__name__}: {str(exc)[:500]}"
            ) from None
        _CONNECTIONS[key] = (con, threading.Lock())
        return _CONNECTIONS[key]


def close_all() -> None:
    """Close every cached connection (tests; a server shutting down)."""
    with _LOCK:
        while _CONNECTIONS:
            _, (con, _lock) = _CONNECTIONS.popitem()
            with contextlib.suppress(Exception):  # already gone
                con.disconnect()


def _warehouses(workspace: Workspace | None) -> dict[str, DatasetSpec]:
    if workspace is None:
        return {}
    return {n: s for n, s in workspace.datasets.items() if s.is_warehouse}


def check_query(query: str, datasets: dict[str, DatasetSpec]) -> CheckedQuery:
    """The allowlist (``tools/warehouse_check.py``) with its refusals as ``WarehouseError``."""
    try:
        return _check(query, datasets)
    except QueryRefused as exc:
        raise WarehouseError(str(exc)) from None


def _cell(value: object) -> Cell:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    return str(value)


def _relations(cursor, text: str) -> set[tuple[str, str]]:
    """(schema, relation) of every table the planner would scan for ``text`` (views expanded)."""
    cursor.execute(f"EXPLAIN (FORMAT JSON, VERBOSE) {text}")
    found: set[tuple[str, str]] = set()
    stack: list[object] = [cursor.fetchone()[0]]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if "Relation Name" in node:
                found.add((node.get("Schema", ""), node["Relation Name"]))
            if str(node.get("Function Name", "")).startswith("pg_"):
                found.add(("pg_catalog", node["Function Name"]))
            stack.extend(v for v in node.values() if isinstance(v, (list, dict)))
    return found


def _confined(cursor, views: dict[str, DatasetSpec], text: str) -> None:
    """Set up the transaction ``text`` runs in, without trusting the parser: one temporary view
    per dataset, named as the query names it, as the only schema on the search path (so an
    undeclared name resolves to nothing), read-only from then on, and the plan's relations
    limited to those a plain read of the declared tables touches (no catalog, no other table)."""
    for name, spec in views.items():
        cursor.execute(f'CREATE TEMPORARY VIEW "{name}" AS SELECT * FROM {_target(spec)}')
    cursor.execute("SET TRANSACTION READ ONLY")
    cursor.execute("SET LOCAL search_path = pg_temp, pg_catalog")
    allowed: set[tuple[str, str]] = set()
    for name in views:
        allowed |= _relations(cursor, f'SELECT * FROM pg_temp."{name}"')
    extra = _relations(cursor, text) - allowed
    if extra:
        shown = ", ".join(sorted(".".join(r) for r in extra))
        raise WarehouseError(f"the query reads relations that are not warehouse datasets: {shown}")


def _fetch(
    views: dict[str, DatasetSpec], text: str, max_rows: int
) -> tuple[list[str], list[tuple]]:
    """Run ``text`` over ``views`` (dataset name as queried -> its spec, one database) in the
    confined read-only transaction; at most ``max_rows + 1`` rows."""
    spec = next(iter(views.values()))
    con, lock = connect_locked(spec)
    raw = con.con
    with lock:
        try:
            with raw.cursor() as cursor:
                cursor.execute("BEGIN READ WRITE")  # temporary views only; read-only after them
                try:
                    _confined(cursor, views, text)
                    cursor.execute(text)
                    columns = [d.name for d in cursor.description or ()]
                    rows = cursor.fetchmany(max_rows + 1)
                finally:
                    with contextlib.suppress(Exception):  # ends it, failed or not; drops views
                        cursor.execute("ROLLBACK")
        except WarehouseError:
            raise
        except Exception as exc:
            raise WarehouseError(f"{type(exc).__name__}: {str(exc)[:1000]}") from None
    return columns, rows


def run_query(workspace: Workspace | None, query: str, max_rows: int = MAX_ROWS) -> JsonDict:
    """Run one sandbox query over warehouse datasets: ``{ok, columns, rows}`` or ``{ok, error}``."""
    try:
        checked = check_query(query, _warehouses(workspace))
        columns, rows = _fetch(checked.tables, checked.text, max_rows)
    except WarehouseError as exc:
        return {"ok": False, "error": str(exc)}
    if len(rows) > max_rows or len(rows) * max(len(columns), 1) > MAX_CELLS:
        return {
            "ok": False,
            "error": f"the query returns more than {max_rows} rows ({MAX_CELLS} cells): aggregate "
            "(GROUP BY), filter (WHERE) or keep the top rows (ORDER BY ... LIMIT n) in SQL",
        }
    return {"ok": True, "columns": columns, "rows": [[_cell(v) for v in row] for row in rows]}


def table_rows(spec: DatasetSpec) -> int:
    """The table's row count."""
    _, rows = _fetch({spec.name: spec}, f'SELECT COUNT(*) FROM "{spec.name}"', 1)
    return int(rows[0][0])


def _target(spec: DatasetSpec) -> str:
    # deferred: sqlglot is heavy to import; paid on first use
    from sqlglot import exp

    return exp.to_table(spec.table or spec.name, dialect="postgres").sql(dialect="postgres")


def load_table(spec: DatasetSpec, max_rows: int = MAX_LOAD_ROWS):
    """The whole table as a DataFrame when it has at most ``max_rows`` rows."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    columns, rows = _fetch({spec.name: spec}, f'SELECT * FROM "{spec.name}"', max_rows)
    if len(rows) > max_rows:
        raise WarehouseError(
            f"dataset {spec.name!r} has more than {max_rows} rows, too many to load whole: query "
            "it with sql() in RunPython"
        )
    frame = pd.DataFrame([[_cell(v) for v in row] for row in rows], columns=columns)
    for col in spec.date_columns:
        if col in frame.columns:
            frame[col] = pd.to_datetime(frame[col], errors="coerce")
    return frame

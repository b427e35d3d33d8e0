"""Warehouse datasets: tables in a database, reached through Ibis on the host.

A workspace may declare ``[datasets.sales] url = "postgresql://analyst@db:5432/shop"`` and
``table = "public.sales"``; the password comes from the environment variable named by
``password_env`` (else libpq's own PGPASSWORD / ~/.pgpass), never from refgate.toml.

The sandbox never connects to the database: it has no network at all. ``sql()`` inside the sandbox
sends a query over warehouse datasets to the host, and ``run_query`` here is the query proxy. It
accepts one read-only SELECT whose tables are warehouse datasets of one database (named by their
dataset names, rewritten to the configured tables), refuses data-modifying statements, functions
outside SQL's known set (``pg_read_file``, ``dblink``...), schema-qualified names (``pg_catalog``,
``information_schema``) and every other table, then runs it in a read-only session with a statement
timeout, returning at most ``MAX_ROWS`` rows. So the only destination reachable from the sandbox
is the configured host and port, and there only the declared tables.
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

if TYPE_CHECKING:
    from refgate.workspace import DatasetSpec, Workspace

#: Most rows one query returns to the sandbox, and most cells.
MAX_ROWS = 100_000
MAX_CELLS = 2_000_000
#: Rows a table may have to be loaded whole (engine capabilities, InspectDataset).
MAX_LOAD_ROWS = 200_000
#: Server-side limit of one statement.
STATEMENT_TIMEOUT_MS = 60_000

_CONNECTIONS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


class WarehouseError(ValueError):
    """A warehouse query refused or failed; the message goes back to the code."""


def redacted(url: str) -> str:
    """The URL without user information (for messages)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _params(spec: DatasetSpec) -> dict[str, Any]:
    parts = urlsplit(spec.url or "")
    params: dict[str, Any] = {
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


def connect(spec: DatasetSpec):
    """The (cached) Ibis backend for ``spec``'s database, in a read-only session."""
    params = _params(spec)
    key = tuple(sorted((k, str(v)) for k, v in params.items()))
    with _LOCK:
        con = _CONNECTIONS.get(key)
        if con is not None:
            return con
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
        _CONNECTIONS[key] = con
        return con


def close_all() -> None:
    """Close every cached connection (tests; a server shutting down)."""
    with _LOCK:
        while _CONNECTIONS:
            _, con = _CONNECTIONS.popitem()
            with contextlib.suppress(Exception):  # already gone
                con.disconnect()


def _warehouses(workspace: Workspace | None) -> dict[str, DatasetSpec]:
    if workspace is None:
        return {}
    return {n: s for n, s in workspace.datasets.items() if s.is_warehouse}


def check_query(query: str, datasets: dict[str, DatasetSpec]) -> tuple[str, DatasetSpec]:
    """The query rewritten onto the configured tables, and the dataset whose database runs it.
    Raises ``WarehouseError`` for anything but one read-only SELECT over declared tables."""
    # deferred: sqlglot is heavy to import; paid on first use
    import sqlglot
    from sqlglot import exp

    if not isinstance(query, str) or not query.strip():
        raise WarehouseError("the query is empty")
    try:
        trees = sqlglot.parse(query, read="postgres")
    except sqlglot.errors.ParseError as exc:
        raise WarehouseError(f"the query does not parse: {str(exc)[:500]}") from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        raise WarehouseError("a warehouse query is one SELECT (or WITH ... SELECT) statement")
    tree = trees[0]
    writes = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Command)
    for node in tree.walk():
        if isinstance(node, (*writes, exp.Into)):
            raise WarehouseError("a warehouse query may not write or define anything")
        if isinstance(node, exp.Anonymous):
            raise WarehouseError(
                f"function {node.name!r} is not allowed in a warehouse query (only SQL's "
                "standard functions)"
            )
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    used: list[DatasetSpec] = []
    for table in list(tree.find_all(exp.Table)):
        name = table.name
        if not table.db and not table.catalog and name in ctes:
            continue
        if table.db or table.catalog or name not in datasets:
            shown = ".".join(p for p in (table.catalog, table.db, name) if p)
            raise WarehouseError(
                f"table {shown!r} is not a warehouse dataset of this workspace (known: "
                f"{', '.join(sorted(datasets)) or 'none'}); name tables by their dataset name"
            )
        spec = datasets[name]
        used.append(spec)
        target = exp.to_table(spec.table or name, dialect="postgres")
        target.set("alias", table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name)))
        table.replace(target)
    if not used:
        raise WarehouseError("the query names no warehouse dataset")
    targets = {(s.url, s.password_env) for s in used}
    if len(targets) > 1:
        raise WarehouseError("one query may use the tables of one database only")
    return tree.sql(dialect="postgres"), used[0]


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    return str(value)


def _fetch(spec: DatasetSpec, text: str, max_rows: int) -> tuple[list[str], list[tuple]]:
    con = connect(spec)
    try:
        cursor = con.raw_sql(text)
        try:
            columns = [d.name for d in cursor.description or ()]
            rows = cursor.fetchmany(max_rows + 1)
        finally:
            cursor.close()
    except Exception as exc:
        raise WarehouseError(f"{type(exc).__name__}: {str(exc)[:1000]}") from None
    finally:
        with contextlib.suppress(Exception):  # end the transaction (a failed one too)
            con.con.rollback()
    return columns, rows


def run_query(workspace: Workspace | None, query: str, max_rows: int = MAX_ROWS) -> dict[str, Any]:
    """Run one sandbox query over warehouse datasets: ``{ok, columns, rows}`` or ``{ok, error}``."""
    try:
        text, spec = check_query(query, _warehouses(workspace))
        columns, rows = _fetch(spec, text, max_rows)
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
    _, rows = _fetch(spec, f"SELECT COUNT(*) FROM {_target(spec)}", 1)
    return int(rows[0][0])


def _target(spec: DatasetSpec) -> str:
    # deferred: sqlglot is heavy to import; paid on first use
    from sqlglot import exp

    return exp.to_table(spec.table or spec.name, dialect="postgres").sql(dialect="postgres")


def load_table(spec: DatasetSpec, max_rows: int = MAX_LOAD_ROWS):
    """The whole table as a DataFrame when it has at most ``max_rows`` rows."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    columns, rows = _fetch(spec, f"SELECT * FROM {_target(spec)}", max_rows)
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

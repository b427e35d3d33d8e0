"""The warehouse query allowlist: one read-only SELECT over declared tables, resolved by scope.

Every table reference is resolved with sqlglot's scope analysis after PostgreSQL's identifier
folding (unquoted names lower-cased, quoted ones kept): a name is a CTE only inside the scope
that defines it (the WITH's own query, its later siblings, itself when RECURSIVE), never in an
enclosing, sibling or LATERAL scope, and never when schema-qualified. Every other reference must
be a declared warehouse dataset. System catalogs are refused by qualified and unqualified name
(``pg_catalog.*``, ``information_schema.*``, any ``pg_*`` relation, function or ``reg*`` cast),
and so is any function outside SQL's known set. This is the parsing layer; ``tools/warehouse.py``
adds one that does not depend on it (views in ``pg_temp`` as the only search path, and the plan's
relations checked against the declared tables').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from refgate.errors import Refused

if TYPE_CHECKING:
    from sqlglot import exp

    from refgate.workspace import DatasetSpec

#: Schemas of PostgreSQL's catalogs; any ``pg_`` prefix is reserved to the system as well.
SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})


class QueryRefused(Refused, ValueError):
    """The query is not one read-only SELECT over declared tables."""


@dataclass(frozen=True)
class CheckedQuery:
    """A query that passed the allowlist: its SQL text as parsed, and the datasets it reads by the
    (folded) name each is referenced by."""

    text: str
    tables: dict[str, DatasetSpec]


def is_system_name(name: str) -> bool:
    """A name PostgreSQL reserves for its catalogs (``pg_*``, ``information_schema``)."""
    low = name.lower()
    return low.startswith("pg_") or low in SYSTEM_SCHEMAS


def _parse(query: str) -> exp.Query:
    # deferred: sqlglot is heavy to import; paid on first use
    import sqlglot
    from sqlglot import exp
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    if not isinstance(query, str) or not query.strip():
        raise QueryRefused("the query is empty")
    try:
        trees = [t for t in sqlglot.parse(query, read="postgres") if t is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise QueryRefused(f"the query does not parse: {str(exc)[:500]}") from None
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        raise QueryRefused("a warehouse query is one SELECT (or WITH ... SELECT) statement")
    return normalize_identifiers(trees[0], dialect="postgres")


def _refuse_writes_and_functions(tree: exp.Query) -> None:
    # deferred: sqlglot is heavy to import; paid on first use
    from sqlglot import exp

    writes = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Command)
    for node in tree.walk():
        if isinstance(node, (*writes, exp.Into, exp.Lock)):
            raise QueryRefused("a warehouse query may not write, lock or define anything")
        if isinstance(node, exp.Anonymous):
            raise QueryRefused(
                f"function {node.name!r} is not allowed in a warehouse query (only SQL's "
                "standard functions)"
            )
        if isinstance(node, exp.Func) and is_system_name(node.sql_name()):
            raise QueryRefused(f"system function {node.sql_name()!r} is not allowed")
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            raise QueryRefused("schema-qualified functions are not allowed in a warehouse query")
        if isinstance(node, exp.DataType) and node.sql(dialect="postgres").lower().startswith(
            "reg"
        ):
            raise QueryRefused(
                f"casts to {node.sql(dialect='postgres')} (a catalog lookup) are not allowed"
            )


def _cte_references(tree: exp.Query) -> set[int]:
    """Ids of the Table nodes that name a CTE visible in their own scope (and nothing else)."""
    # deferred: sqlglot is heavy to import; paid on first use
    from sqlglot.optimizer.scope import traverse_scope

    try:
        scopes = traverse_scope(tree)
    except Exception as exc:  # sqlglot's own errors for queries it cannot scope
        raise QueryRefused(f"cannot resolve the query's tables: {str(exc)[:300]}") from None
    verdicts: dict[int, list[bool]] = {}
    for scope in scopes:
        for table in scope.tables:
            is_cte = not table.db and not table.catalog and table.name in scope.cte_sources
            verdicts.setdefault(id(table), []).append(is_cte)
    # a node seen by several scopes is a CTE only if every one of them says so
    return {key for key, seen in verdicts.items() if all(seen)}


def _lookup(datasets: dict[str, DatasetSpec]) -> dict[str, DatasetSpec]:
    """Datasets by the folded name a query may use: exact, or lower-cased as unquoted."""
    by_name = dict(datasets)
    for name, spec in datasets.items():
        by_name.setdefault(name.lower(), spec)
    return by_name


def check_query(query: str, datasets: dict[str, DatasetSpec]) -> CheckedQuery:
    """The query as parsed and the datasets it reads; ``QueryRefused`` for anything but one
    read-only SELECT whose every real table is a declared warehouse dataset of one database."""
    # deferred: sqlglot is heavy to import; paid on first use
    from sqlglot import exp

    tree = _parse(query)
    _refuse_writes_and_functions(tree)
    ctes = _cte_references(tree)
    known = _lookup(datasets)
    used: dict[str, DatasetSpec] = {}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # a table function (generate_series, unnest): its function was checked
        name = table.name
        qualifier = [p for p in (table.catalog, table.db) if p]
        if qualifier or is_system_name(name):
            shown = ".".join([*qualifier, name])
            raise QueryRefused(
                f"table {shown!r} is not allowed: name tables by their dataset name (no schema), "
                "system catalogs are never readable"
            )
        if id(table) in ctes:
            continue
        spec = known.get(name)
        if spec is None:
            raise QueryRefused(
                f"table {name!r} is not a warehouse dataset of this workspace (known: "
                f"{', '.join(sorted(datasets)) or 'none'}); name tables by their dataset name"
            )
        used[name] = spec
    if not used:
        raise QueryRefused("the query names no warehouse dataset")
    if len({(s.url, s.password_env) for s in used.values()}) > 1:
        raise QueryRefused("one query may use the tables of one database only")
    return CheckedQuery(tree.sql(dialect="postgres"), used)

"""Where a computed value came from, for a reader: the dataset(s), columns and filter of the
RunPython code (or ``sql()`` query) that produced it, read from the code without running it.

The datasets are those the sandbox recorded the call reading (``read``), else those the code
names; columns are the string subscripts of the code (``df["unemp"]``, ``df[["a", "b"]]``);
the filter is each boolean row selection (``df[df["year"] == 2009]``, ``.query("...")``,
``.loc[cond]``) and each query's WHERE clause. It describes; the GATE checks.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import TypeGuard

_WHERE = re.compile(
    r"\bWHERE\b(.+?)(?=\bGROUP\s+BY\b|\bORDER\s+BY\b|\bLIMIT\b|\bHAVING\b|;|$)", re.I | re.S
)
_FROM = re.compile(r"\bFROM\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
#: Longest filter expression shown.
MAX_FILTER = 200


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.List | ast.Tuple):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _is_condition(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare | ast.BoolOp):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        return _is_condition(node.left) or _is_condition(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _is_condition(node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("isin", "between", "str", "contains", "notna", "isna")
    return False


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_FILTER else text[: MAX_FILTER - 1] + "…"


def code_lineage(code: str) -> dict[str, list[str]]:
    """``{datasets, columns, filters}`` named by Python ``code`` (empty when it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {"datasets": [], "columns": [], "filters": []}
    found = _Lineage()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            found.subscript(node.value, node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if isinstance(node.func.value, ast.Name) and node.func.value.id == "engine":
                found.engine_call(node)
            elif node.func.attr == "query" and node.args:
                found.filters += [_clip(s) for s in _strings(node.args[0])]
            elif node.func.attr in ("sql", "execute") and node.args:
                found.sql(node.args[0])
        elif _is_sql_call(node):
            found.sql(node.args[0])
    return {
        "datasets": list(dict.fromkeys(found.datasets)),
        "columns": [c for c in dict.fromkeys(found.columns) if c not in found.datasets],
        "filters": list(dict.fromkeys(found.filters)),
    }


def _is_sql_call(node: ast.AST) -> TypeGuard[ast.Call]:
    """``sql("SELECT ...")``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "sql"
        and bool(node.args)
    )


class _Lineage:
    """The datasets, columns and filters code names, gathered node by node (``code_lineage``)."""

    def __init__(self) -> None:
        self.datasets: list[str] = []
        self.columns: list[str] = []
        self.filters: list[str] = []

    def subscript(self, target: ast.expr, index: ast.expr) -> None:
        """``datasets["x"]``, ``df.loc[cond, "col"]``, ``df[cond]`` or ``df["col"]``."""
        if isinstance(target, ast.Name) and target.id == "datasets":
            self.datasets += _strings(index)
            return
        if isinstance(target, ast.Attribute) and target.attr in ("loc", "iloc"):
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            if parts and _is_condition(parts[0]):
                self.filters.append(_clip(ast.unparse(parts[0])))
            for part in parts[1:]:
                self.columns += _strings(part)
            return
        if _is_condition(index):
            self.filters.append(_clip(ast.unparse(index)))
        else:
            self.columns += _strings(index)

    def engine_call(self, node: ast.Call) -> None:
        """``engine.<capability>("dataset", "column", start=..., period=...)``."""
        named = {k.arg: k.value for k in node.keywords if k.arg}
        first = node.args[0] if node.args else named.get("dataset")
        second = node.args[1] if len(node.args) > 1 else named.get("column")
        self.datasets += _strings(first) if first is not None else []
        self.columns += _strings(second) if second is not None else []
        bounds = [
            f"{k}={ast.unparse(v)}"
            for k, v in named.items()
            if k in ("period", "start", "end", "where", "periods")
        ]
        if bounds:
            self.filters.append(_clip(", ".join(bounds)))

    def sql(self, query: ast.expr) -> None:
        """The tables and WHERE clauses of the SQL text ``query`` holds."""
        for text in _strings(query):
            found = sql_lineage(text)
            self.datasets += found["datasets"]
            self.filters += found["filters"]


def sql_lineage(query: str) -> dict[str, list[str]]:
    """The tables (datasets) a query reads and its WHERE clause."""
    where = [_clip(m.group(1)) for m in _WHERE.finditer(query) if m.group(1).strip()]
    return {"datasets": list(dict.fromkeys(_FROM.findall(query))), "filters": where}


def lineage(
    code: object, read: Iterable[object] = (), queries: Iterable[object] = ()
) -> dict[str, list[str]]:
    """The lineage of one execution: its code, the datasets the sandbox recorded it reading,
    and the ``sql()`` queries it ran (``{"query": ...}`` records)."""
    found = code_lineage(code) if isinstance(code, str) else {
        "datasets": [], "columns": [], "filters": []
    }  # fmt: skip
    for q in queries:
        text = q.get("query") if isinstance(q, Mapping) else q
        if isinstance(text, str):
            more = sql_lineage(text)
            found["datasets"] += more["datasets"]
            found["filters"] += more["filters"]
    recorded = [str(r) for r in read if isinstance(r, str)]
    datasets = recorded or found["datasets"]
    return {
        "datasets": list(dict.fromkeys(datasets)),
        "columns": found["columns"],
        "filters": list(dict.fromkeys(found["filters"])),
    }

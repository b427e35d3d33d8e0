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
    datasets: list[str] = []
    columns: list[str] = []
    filters: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            target = node.value
            index = node.slice
            if isinstance(target, ast.Name) and target.id == "datasets":
                datasets += _strings(index)
                continue
            if isinstance(target, ast.Attribute) and target.attr in ("loc", "iloc"):
                parts = index.elts if isinstance(index, ast.Tuple) else [index]
                if parts and _is_condition(parts[0]):
                    filters.append(_clip(ast.unparse(parts[0])))
                for part in parts[1:]:
                    columns += _strings(part)
                continue
            if _is_condition(index):
                filters.append(_clip(ast.unparse(index)))
            else:
                columns += _strings(index)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "engine"
        ):  # engine.<capability>("dataset", "column", start=..., period=...)
            named = {k.arg: k.value for k in node.keywords if k.arg}
            first = node.args[0] if node.args else named.get("dataset")
            second = node.args[1] if len(node.args) > 1 else named.get("column")
            datasets += _strings(first) if first is not None else []
            columns += _strings(second) if second is not None else []
            bounds = [
                f"{k}={ast.unparse(v)}"
                for k, v in named.items()
                if k in ("period", "start", "end", "where", "periods")
            ]
            if bounds:
                filters.append(_clip(", ".join(bounds)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "query" and node.args:
                filters += [_clip(s) for s in _strings(node.args[0])]
            elif node.func.attr in ("sql", "execute") and node.args:
                for text in _strings(node.args[0]):
                    found = sql_lineage(text)
                    datasets += found["datasets"]
                    filters += found["filters"]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "sql"
            and node.args
        ):
            for text in _strings(node.args[0]):
                found = sql_lineage(text)
                datasets += found["datasets"]
                filters += found["filters"]
    return {
        "datasets": list(dict.fromkeys(datasets)),
        "columns": [c for c in dict.fromkeys(columns) if c not in datasets],
        "filters": list(dict.fromkeys(filters)),
    }


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

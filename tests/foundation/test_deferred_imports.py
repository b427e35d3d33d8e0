"""Imports sit at the top of each module. An import inside a function (deferred) is allowed only
with a comment saying why (a heavy or optional dependency, code that runs inside the sandbox, a
CLI command loading the graph stack only when it runs), on its line or on the comment line just
above its group of imports, so that no deferred import is left to hide a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("refgate", "graph", "nodes", "tools", "retrieval")


def deferred_imports(source: str) -> list[int]:
    """Line numbers of the imports inside a function (or method) of ``source``."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    lines.add(sub.lineno)
    return sorted(lines)


def is_explained(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line, or above it past the other imports of its group."""
    if "#" in lines[lineno - 1]:
        return True
    i = lineno - 2
    while i >= 0:
        text = lines[i].strip()
        if text.startswith("#"):
            return True
        if text.startswith(("import ", "from ")) or text == "" or text.startswith(")"):
            i -= 1
            continue
        if text.endswith(",") or text.endswith("("):  # inside a parenthesised import list
            i -= 1
            continue
        return text.startswith("try:") and "#" in lines[i]
    return False


def unexplained(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    return [
        f"{path.relative_to(REPO)}:{n}: {lines[n - 1].strip()}"
        for n in deferred_imports(source)
        if not is_explained(lines, n)
    ]


def test_every_deferred_import_says_why():
    missing = [
        entry
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for entry in unexplained(path)
    ]
    assert not missing, "deferred imports without a reason:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("import os\n\ndef f():\n    import json\n    return json\n", [4]),
        (
            "def f():\n    # optional extra: only the postgres backend needs it\n    import psycopg\n",
            [],
        ),
        ("def f():\n    import psycopg  # optional extra\n", []),
        (
            "def f():\n    # heavy: torch\n    import torch\n\n    from x import (\n        a,\n    )\n",
            [],
        ),
        ("def f():\n    x = 1\n    from refgate import graph\n", [3]),
    ],
)
def test_the_check_reads_comments_as_reasons(tmp_path, source, flagged):
    lines = source.splitlines()
    assert [n for n in deferred_imports(source) if not is_explained(lines, n)] == flagged

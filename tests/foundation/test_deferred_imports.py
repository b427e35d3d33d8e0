"""Every function-level import of a refgate module says why it is not at the top: a comment
``# deferred: <reason>`` on the import's first line or the line before it. An import the reader
cannot see at the top of the module must at least be explained where it stands."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("refgate", "graph", "nodes", "tools", "retrieval")
MARK = "# deferred:"


def deferred_imports(text: str) -> list[int]:
    """Line numbers of the function-level ``refgate`` imports in a module's source."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.ImportFrom)
                and (inner.module or "").startswith("refgate")
                or isinstance(inner, ast.Import)
                and any(a.name.startswith("refgate") for a in inner.names)
            ):
                lines.append(inner.lineno)
    return sorted(set(lines))


def unexplained(text: str) -> list[int]:
    source = text.splitlines()
    out = []
    for lineno in deferred_imports(text):
        here = source[lineno - 1]
        before = source[lineno - 2].strip() if lineno >= 2 else ""
        if MARK not in here and not before.startswith(MARK):
            out.append(lineno)
    return out


def test_every_function_level_import_says_why():
    missing = [
        f"{path.relative_to(REPO)}:{line}"
        for folder in FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
        for line in unexplained(path.read_text(encoding="utf-8"))
    ]
    assert not missing, (
        "function-level refgate imports without '# deferred: <reason>':\n" + "\n".join(missing)
    )


def test_the_check_sees_a_bare_deferred_import_and_accepts_a_reason():
    bare = "def f():\n    from refgate.refs import Ref\n    return Ref\n"
    said = "def f():\n    # deferred: import cycle with refs\n    from refgate.refs import Ref\n"
    trailing = "def f():\n    import refgate.refs  # deferred: optional\n"
    top = "from refgate.refs import Ref\n\ndef f():\n    return Ref\n"
    assert unexplained(bare) == [2]
    assert unexplained(said) == []
    assert unexplained(trailing) == []
    assert unexplained(top) == []

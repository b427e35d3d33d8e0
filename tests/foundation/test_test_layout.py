"""Tests and benchmarks find their helpers by import, never by editing ``sys.path``, and
benchmarks never import tests: test helpers live in ``tests/support/`` (``tests.support``),
helpers a benchmark needs too in ``benchmarks/shared/`` (CONTRIBUTING.md)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("tests", "benchmarks")


def sys_path_edits(path: Path) -> list[int]:
    """Lines of ``path`` that change ``sys.path`` (``insert``, ``append``, ``extend``, an
    assignment to it or to one of its items)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("insert", "append", "extend"):
                target = node.func.value
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            target = next((t.value if isinstance(t, ast.Subscript) else t for t in targets), None)
        if target is not None and ast.unparse(target) == "sys.path":
            lines.append(node.lineno)
    return sorted(lines)


def imports_of_tests(path: Path, root: Path = REPO) -> list[str]:
    """Modules ``path`` imports that are tests: ``tests`` and below, or a module of the tests
    folder imported by its bare name."""
    stems = {p.stem for p in (REPO / "tests").rglob("*.py")} - {"__init__", "conftest"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top == "tests" or top in stems:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found


def test_no_test_or_benchmark_edits_sys_path():
    found = [
        f"{p.relative_to(REPO)}:{line}"
        for folder in FOLDERS
        for p in sorted((REPO / folder).rglob("*.py"))
        for line in sys_path_edits(p)
    ]
    assert not found, f"sys.path edited (import from tests.support or benchmarks/shared): {found}"


def test_no_benchmark_imports_a_test():
    found = [x for p in sorted((REPO / "benchmarks").rglob("*.py")) for x in imports_of_tests(p)]
    assert not found, f"benchmarks importing tests (move the helper to benchmarks/shared): {found}"


def test_the_checks_see_what_they_forbid(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\nsys.path.insert(0, 'x')\nsys.path += ['y']\nsys.path[0] = 'z'\n"
        "from tests.support.evidence import evidence_spec\nimport corpus\n",
        encoding="utf-8",
    )
    assert sys_path_edits(bad) == [2, 3, 4]
    imported = imports_of_tests(bad, tmp_path)
    assert [x.split(": ")[1] for x in imported] == ["tests.support.evidence", "corpus"]

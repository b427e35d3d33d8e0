"""The layer map is enforced: import-linter's contracts (pyproject.toml) pass on the tree, and
the check fails when a module imports upward or when a new core module is in no layer."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "lint_imports.py"


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory) -> Path:
    """A copy of what the check reads: pyproject.toml and every mapped package folder."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for folder in set(pyproject["tool"]["setuptools"]["package-dir"].values()):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_tree_keeps_every_contract():
    result = _run(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "edge"),
    [
        ("refgate/refs.py", "import refgate.graph.state", "refgate.refs -> refgate.graph.state"),
        (
            "tools/registry.py",
            "from refgate.nodes import common",
            "refgate.tools.registry -> refgate.nodes.common",
        ),
        (
            "retrieval/mmr.py",
            "import refgate.tools.registry",
            "refgate.retrieval.mmr -> refgate.tools.registry",
        ),
        ("nodes/loop.py", "import refgate.testing", "refgate.nodes.loop -> refgate.testing"),
        (
            "refgate/api/public.py",
            "import refgate.cli.ask",
            "refgate.api.public -> refgate.cli.ask",
        ),
        ("refgate/memory/decisions.py", "import refgate", "refgate -> refgate.api.public"),
    ],
)
def test_an_upward_import_breaks_a_contract(copy_root, module, line, edge):
    path = copy_root / module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original + f"\n{line}  # injected by the test\n", encoding="utf-8")
        result = _run(copy_root)
    finally:
        path.write_text(original, encoding="utf-8")
    assert result.returncode != 0
    assert edge in result.stdout, result.stdout


def test_a_module_in_no_layer_is_reported(copy_root):
    extra = copy_root / "refgate" / "orphan.py"
    extra.write_text('"""A new core module nobody assigned."""\n', encoding="utf-8")
    try:
        result = _run(copy_root)
    finally:
        extra.unlink()
    assert result.returncode == 2
    assert "refgate.orphan" in result.stderr


UPPER = ("refgate.graph", "refgate.nodes", "refgate.tools", "refgate.retrieval")


def _imported_names(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):  # every import, at module level or inside a function
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_core_file_imports_a_layer_above_anywhere_in_it():
    """The issue's letter, read from the source: outside the front layers (refgate/cli/,
    refgate/ui/ and refgate/api/), no file under refgate/ names graph, nodes, tools or
    retrieval in any import statement, however deep."""
    offenders = []
    for path in sorted((REPO / "refgate").rglob("*.py")):
        if path.relative_to(REPO / "refgate").parts[0] in {"cli", "ui", "api"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in _imported_names(tree):
            if name.startswith(UPPER) and name.split(".")[1] in {u.split(".")[1] for u in UPPER}:
                offenders.append(f"{path.relative_to(REPO)}: {name}")
    assert not offenders, offenders

"""Capabilities and tools are registered from explicit lists by an explicit call, never by
importing a module, so no test or run depends on what was imported before.

- Capabilities: each capability module ends with ``CAPABILITIES``;
  ``refgate.graph.capabilities.DEFAULT_CAPABILITIES`` names every list and
  ``register_default_capabilities`` (called by ``build_graph``) registers them.
- Tools: ``refgate.catalog.tool_names.CATALOG`` names each tool's module; the registry loads a
  module's ``SPEC`` when the tool is first asked for.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from refgate.catalog.capabilities import MARK, catalog
from refgate.catalog.tool_names import CATALOG
from refgate.graph import research_capability
from refgate.graph.capabilities import DEFAULT_CAPABILITIES, register_default_capabilities
from refgate.retrieval import capability as document_capabilities
from refgate.tools import capabilities as dataset_capabilities

REPO = Path(__file__).resolve().parents[2]
CODE = {"refgate": "refgate", "graph": "refgate.graph", "nodes": "refgate.nodes"}
CODE |= {"tools": "refgate.tools", "retrieval": "refgate.retrieval"}
LISTS = {
    "refgate.tools.capabilities": dataset_capabilities.CAPABILITIES,
    "refgate.retrieval.capability": document_capabilities.CAPABILITIES,
    "refgate.graph.research_capability": research_capability.CAPABILITIES,
}


def _module(path: Path, folder: str) -> str:
    rel = path.relative_to(REPO / folder).with_suffix("")
    return ".".join((CODE[folder], *rel.parts))


def decorated_capabilities() -> dict[str, str]:
    """Every function of the code marked ``@capability``: name -> module."""
    found = {}
    for folder in CODE:
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "capability" for d in node.decorator_list
                ):
                    found[node.name] = _module(path, folder)
    return found


def tool_modules() -> set[str]:
    """Modules of the tools folder that define a module-level ``SPEC``."""
    found = set()
    for path in (REPO / "tools").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "SPEC" for t in targets):
                found.add(_module(path, "tools"))
    return found


def test_the_lists_hold_every_capability_of_the_code_once():
    listed = {f.__name__: m for m, funcs in LISTS.items() for f in funcs}
    assert sum(len(funcs) for funcs in LISTS.values()) == len(listed)  # no name twice
    assert listed == decorated_capabilities()
    assert all(getattr(f, MARK, False) and f.__module__ == m for m, fs in LISTS.items() for f in fs)


def test_the_catalog_is_what_the_lists_register():
    assert list(DEFAULT_CAPABILITIES) == list(LISTS.values())
    register_default_capabilities()
    assert set(catalog()) == {f.__name__ for funcs in LISTS.values() for f in funcs}


def test_importing_a_capability_module_registers_nothing():
    code = (
        "import importlib, sys; importlib.import_module(sys.argv[1]); "
        "from refgate.catalog.capabilities import catalog; print(sorted(catalog()))"
    )
    for module in (
        "refgate.tools.capabilities",
        "refgate.retrieval.capability",
        "refgate.tools.registry",
        "refgate.graph",
    ):
        out = subprocess.run(
            [sys.executable, "-c", code, module], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "[]", (module, out.stdout)


def test_the_tool_table_names_every_tool_module():
    assert set(CATALOG.values()) == tool_modules()

"""The pass names are defined once (``refgate.config``: a constant each and ``PASS_TABLE``): every
list of passes derives from that table, the graph is wired by the constants (no node named by a
string literal), and the tool whitelist and the settings follow it."""

from __future__ import annotations

import ast
from pathlib import Path

from refgate.catalog.tool_names import PASS_TOOLS
from refgate.config import (
    CONTEXT_PASSES,
    MODEL_PASSES,
    PASS_TABLE,
    PASSES,
    WORKBENCH_PASSES,
    RunContext,
)
from refgate.graph import build_graph

REPO = Path(__file__).resolve().parents[2]
CODE = ("refgate", "graph", "nodes", "tools", "retrieval")
DEFINITION = REPO / "refgate" / "config.py"


def pass_lists(path: Path) -> list[int]:
    """Lines of ``path`` holding a literal list, tuple or set of three or more pass names, or a
    dict keyed by a whole list of passes: a list of passes written again instead of derived."""
    whole = {frozenset(p) for p in (PASSES, WORKBENCH_PASSES, MODEL_PASSES, CONTEXT_PASSES)}
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) or not items:
            continue
        names = [k.value for k in items if isinstance(k, ast.Constant)]
        if len(names) != len(items) or len(names) < 3 or not set(names) <= set(PASSES):
            continue
        if not isinstance(node, ast.Dict) or frozenset(names) in whole:
            lines.append(node.lineno)
    return lines


def test_no_module_but_config_lists_the_passes(tmp_path):
    found = {
        f"{p.relative_to(REPO)}:{line}"
        for top in CODE
        for p in (REPO / top).rglob("*.py")
        if p != DEFINITION
        for line in pass_lists(p)
    }
    assert not found, f"pass names listed again (derive them from refgate.config): {found}"
    written_again = tmp_path / "again.py"
    written_again.write_text('X = 1\nORDER = ("brief", "work", "gate")\n', encoding="utf-8")
    assert pass_lists(written_again) == [2], "the check no longer sees a list written again"


def test_the_builder_names_no_pass_by_a_string_literal():
    tree = ast.parse((REPO / "graph" / "builder.py").read_text(encoding="utf-8"))
    literals = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert not literals & set(PASSES)


def test_the_graph_the_whitelist_and_the_settings_follow_the_definition(settings):
    graph = build_graph(model=None, settings=settings).get_graph()
    assert [n for n in graph.nodes if n in PASSES] == list(WORKBENCH_PASSES)
    assert WORKBENCH_PASSES[-1] == "deliver" and tuple(p.name for p in PASS_TABLE) == PASSES
    assert tuple(PASS_TOOLS) == tuple(p for p in WORKBENCH_PASSES if p != "deliver")
    assert "gate" not in MODEL_PASSES and set(MODEL_PASSES) < set(CONTEXT_PASSES)
    models = {f for f in RunContext.model_fields if f.startswith("model_")}
    assert models == {f"model_{p}" for p in CONTEXT_PASSES}


def test_the_graph_is_built_from_the_pass_list(settings):
    from refgate.graph.builder import pass_nodes
    from refgate.nodes.common import Deps

    assert tuple(pass_nodes(Deps(settings=settings))) == WORKBENCH_PASSES

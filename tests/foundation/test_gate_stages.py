"""The GATE is a pipeline whose data moves one way: ``refgate.gate.STAGES`` lists its modules in
stage order (helpers every stage reads first, in ``base``), and a module of ``refgate/gate/``
imports only modules listed before it. Every module of the package is listed once."""

from __future__ import annotations

import ast
from pathlib import Path

from refgate.gate import STAGES

REPO = Path(__file__).resolve().parents[2]
GATE = REPO / "refgate" / "gate"


def order() -> list[str]:
    return [module for _, modules in STAGES for module in modules]


def gate_imports(path: Path) -> set[str]:
    """The modules of ``refgate.gate`` that a file imports (relative or absolute, anywhere in
    the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            if isinstance(node, ast.Import):
                found.update(
                    a.name.split(".")[2] for a in node.names if a.name.startswith("refgate.gate.")
                )
            continue
        if node.level == 1:
            module = node.module
        elif node.level == 0 and (node.module or "").startswith("refgate.gate"):
            module = (node.module or "").removeprefix("refgate.gate").lstrip(".") or None
        else:
            continue
        if module:
            found.add(module.split(".")[0])
        else:  # from . import korean
            found.update(a.name for a in node.names)
    return found


def backward_violations(listed: list[str], imports: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` for each import that points forward (or to an unlisted module)."""
    rank = {m: i for i, m in enumerate(listed)}
    return sorted(
        f"{m} -> {t}"
        for m, targets in imports.items()
        for t in targets
        if t not in rank or rank[t] >= rank[m]
    )


def test_every_gate_module_is_in_one_stage():
    listed = order()
    assert len(listed) == len(set(listed)), "a module is listed twice"
    files = {p.stem for p in GATE.glob("*.py") if p.stem != "__init__"}
    assert set(listed) == files, (
        f"unlisted: {sorted(files - set(listed))}; gone: {sorted(set(listed) - files)}"
    )


def test_imports_point_backward_along_the_stages():
    imports = {m: gate_imports(GATE / f"{m}.py") for m in order()}
    assert backward_violations(order(), imports) == []


def test_the_check_finds_a_forward_import():
    """A stage that reads a later stage, or itself, breaks the order."""
    listed = ["base", "claims", "verdict"]
    ok = {"base": set(), "claims": {"base"}, "verdict": {"claims", "base"}}
    assert backward_violations(listed, ok) == []
    assert backward_violations(listed, {**ok, "claims": {"verdict"}}) == ["claims -> verdict"]
    assert backward_violations(listed, {**ok, "base": {"base"}}) == ["base -> base"]


def test_imports_are_read_in_every_form(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "from . import korean\nfrom .units import x\nfrom refgate.gate.dates import y\n"
        "import refgate.gate.words\nfrom refgate.refs import Ref\n"
        "def f():\n    from .index import z\n",
        encoding="utf-8",
    )
    assert gate_imports(src) == {"korean", "units", "dates", "words", "index"}

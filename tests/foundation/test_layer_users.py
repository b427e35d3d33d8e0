"""No module under ``refgate/`` that only one upper layer uses: a module of the core (the kernel
and the concept packages) that nothing of its own layer uses and exactly one layer above uses
belongs in that layer. A module its own package's siblings use is part of that concept and
stays. Imports anywhere in a file count (inside functions and ``TYPE_CHECKING`` too); an import
through a package's ``__init__`` counts for the submodule that defines the name.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
#: The public API's users are outside the repository (``import refgate``), so one upper layer
#: (the CLI) importing it says nothing.
PUBLIC = ("refgate.api",)
#: The layers the check covers: the concept packages below the layers, and the kernel.
CORE = (
    "refgate.report",
    "refgate.provenance",
    "refgate.gate",
    "refgate.memory",
    "refgate.catalog",
    "kernel",
)
#: Modules one upper layer alone uses that stay where they are, each with its reason.
ALLOWED: dict[str, str] = {
    "refgate.gate.containment": "the GATE's review of its own verdict (pure, deterministic, "
    "tested with the GATE); the pass alone calls it, after check_answer",
}


def modules(root: Path = REPO) -> dict[str, Path]:
    """Every module of the installed package (``package-dir`` of pyproject), name -> file."""
    out: dict[str, Path] = {}
    for package, folder in PYPROJECT["tool"]["setuptools"]["package-dir"].items():
        for path in (root / folder).rglob("*.py"):
            rel = path.relative_to(root / folder).with_suffix("")
            if ".venv" in rel.parts or "__pycache__" in rel.parts:
                continue
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            name = ".".join((package, *parts))
            out.setdefault(name, path)  # refgate/graph is no folder; a mapped package wins
    return out


def layers() -> tuple[dict[str, int], list[str]]:
    """Each layer of the layer contract with its depth (0 on top; siblings share one), and the
    kernel's modules (below every layer)."""
    contracts = {c["id"]: c for c in PYPROJECT["tool"]["importlinter"]["contracts"]}
    depth = {
        m.strip(): i
        for i, layer in enumerate(contracts["layers"]["layers"])
        for m in layer.split("|")
    }
    kernel = list(contracts["kernel"]["source_modules"])
    return depth | {"kernel": len(depth)}, kernel


def layer_of(module: str, order: dict[str, int], kernel: list[str]) -> str:
    for name in (*order, *kernel):
        if module == name or module.startswith(name + "."):
            return "kernel" if name in kernel else name
    return module  # the package root, test support


def _imports(path: Path, name: str, is_package: bool) -> Iterator[tuple[str, str | None]]:
    """(module, imported name or None) for every import statement of a file."""
    base = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name


def users(root: Path = REPO) -> dict[str, set[str]]:
    """Module -> the modules that import it (through a package ``__init__``: the submodule
    that defines each imported name)."""
    mods = modules(root)
    packages = {m for m, p in mods.items() if p.name == "__init__.py"}
    # what each package __init__ re-exports: name -> submodule
    exports: dict[str, dict[str, str]] = {}
    for pkg in packages:
        for target, alias in _imports(mods[pkg], pkg, True):
            if alias and target.startswith(pkg + ".") and target in mods:
                exports.setdefault(pkg, {})[alias] = target
    out: dict[str, set[str]] = {m: set() for m in mods}
    for importer, path in mods.items():
        for target, alias in _imports(path, importer, importer in packages):
            if alias and f"{target}.{alias}" in mods:
                target = f"{target}.{alias}"
            elif alias and target in exports and alias in exports[target]:
                target = exports[target][alias]
            if target in out and target != importer:
                out[target].add(importer)
    return out


def single_upper_users(root: Path = REPO) -> dict[str, str]:
    """Core modules that nothing of their own layer uses and exactly one upper layer does:
    module -> that layer."""
    rank, kernel = layers()
    mods = modules(root)
    found: dict[str, str] = {}
    for module, importers in users(root).items():
        own = layer_of(module, rank, kernel)
        if own not in CORE or mods[module].name == "__init__.py":
            continue  # only the kernel and concept packages; a package's face is not a module
        by = {layer_of(i, rank, kernel) for i in importers if not module.startswith(i + ".")}
        upper = {u for u in by if u in rank and rank[u] < rank[own]}
        if len(upper) == 1 and own not in by and not (by - set(rank)):
            found[module] = upper.pop()
    return found


def test_no_core_module_serves_one_upper_layer_alone():
    found = {m: layer for m, layer in single_upper_users().items() if m not in ALLOWED}
    assert not found, (
        "core modules that one upper layer alone uses (move each into that layer, or allow it "
        f"in ALLOWED with the reason): {found}"
    )
    assert not set(PUBLIC) & set(CORE) and set(CORE) <= set(layers()[0])


def test_the_check_sees_a_module_only_one_layer_uses(tmp_path):
    """A kernel module that only the CLI imports is found; a second user clears it."""
    for folder in PYPROJECT["tool"]["setuptools"]["package-dir"].values():
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "refgate" / "cli").mkdir()
    (tmp_path / "refgate" / "cli" / "__init__.py").write_text("")
    (tmp_path / "refgate" / "paths.py").write_text("X = 1\n")
    (tmp_path / "refgate" / "cli" / "show.py").write_text("from refgate.paths import X\n")
    assert single_upper_users(tmp_path) == {"refgate.paths": "refgate.cli"}
    (tmp_path / "nodes" / "walk.py").write_text("def f():\n    from refgate import paths\n")
    assert single_upper_users(tmp_path) == {}


def test_every_allowance_names_a_module_the_check_still_finds():
    stale = set(ALLOWED) - set(single_upper_users())
    assert not stale, f"ALLOWED entries the check no longer finds (remove them): {stale}"

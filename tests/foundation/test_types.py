"""The type checker is clean: ``scripts/typecheck.py`` (mypy, configured in pyproject.toml's
``[tool.mypy]``) passes on the tree, strict on the kernel, the GATE, the nodes, the graphs and the tool contract.

scripts/test.sh runs the same command before the tests, so in CI this test reads mypy's warm
cache (``.mypy_cache``) and takes seconds; a first run on a fresh checkout takes about a minute
and a half of CPU.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _strict_modules() -> set[str]:
    out: set[str] = set()
    for override in PYPROJECT["tool"]["mypy"]["overrides"]:
        if override.get("disallow_untyped_defs") and override.get("disallow_any_generics"):
            out.update(override["module"])
    return out


def test_the_kernel_contract_and_the_strict_modules_name_the_same_kernel():
    """A module that joins the kernel (import contract) is strictly type-checked too."""
    kernel = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["id"] == "kernel")
    strict = _strict_modules()
    missing = set(kernel["source_modules"]) - strict
    assert not missing, f"kernel modules not in the strict mypy override: {sorted(missing)}"
    assert {
        "refgate.gate.*",
        "refgate.nodes.*",
        "refgate.graph.*",
        "refgate.catalog.toolspec",
        "refgate.tools.registry",
    } <= strict


@pytest.mark.timeout(900)
def test_the_tree_type_checks():
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "typecheck.py")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]

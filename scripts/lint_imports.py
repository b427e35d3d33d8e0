"""Check the import contracts of ``pyproject.toml`` (``[tool.importlinter]``) with import-linter.

refgate installs several top-level folders under one namespace (``graph/`` is ``refgate.graph``,
see ``[tool.setuptools] package-dir``), which import-linter cannot see in the source tree. This
script stages the package as it is installed (a copy of the ``.py`` files, laid out by that
mapping) in a temporary folder and runs ``lint-imports`` on it. It also checks that every direct
child of ``refgate`` is assigned to a layer, so a new module cannot slip past the contracts.

    .venv/bin/python scripts/lint_imports.py [--root DIR]   # exit 0: contracts kept
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def package_dirs(pyproject: dict) -> dict[str, str]:
    """Package name -> folder (relative to the repository), from ``[tool.setuptools]``."""
    return dict(pyproject["tool"]["setuptools"]["package-dir"])


def stage(root: Path, dest: Path, pyproject: dict) -> Path:
    """Copy the ``.py`` files of every mapped package under ``dest`` as installed; return ``dest``."""
    for package, folder in sorted(package_dirs(pyproject).items(), key=lambda kv: kv[0].count(".")):
        src = root / folder
        target = dest.joinpath(*package.split("."))
        for path in src.rglob("*.py"):
            rel = path.relative_to(src)
            if any(part in {"__pycache__", ".venv"} for part in rel.parts):
                continue
            # A subpackage mapped elsewhere (refgate.graph under refgate/) is staged on its own.
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)
    return dest


def children(staged: Path, package: str = "refgate") -> set[str]:
    """The direct children of ``package`` in the staged tree (modules and packages)."""
    base = staged.joinpath(*package.split("."))
    names = set()
    for entry in base.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            names.add(f"{package}.{entry.name}")
        elif entry.suffix == ".py" and entry.name not in {"__init__.py", "__main__.py"}:
            names.add(f"{package}.{entry.stem}")
    return names


def assigned(pyproject: dict) -> set[str]:
    """Every module the layer and kernel contracts name (a layer may list siblings with ``|``)."""
    out: set[str] = set()
    for contract in pyproject["tool"]["importlinter"]["contracts"]:
        if contract["id"] == "layers":
            for layer in contract["layers"]:
                out.update(m.strip() for m in layer.replace(":", "|").split("|"))
        elif contract["id"] == "kernel":
            out.update(contract["source_modules"])
        elif contract["id"] == "test-support":
            out.update(contract["forbidden_modules"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=REPO, help="repository root (default: this one)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    config = root / "pyproject.toml"
    pyproject = tomllib.loads(config.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="refgate-layers-") as tmp:
        staged = stage(root, Path(tmp), pyproject)
        missing = sorted(children(staged) - assigned(pyproject))
        if missing:
            print(
                "modules in no layer (add each to a contract in pyproject.toml): "
                + ", ".join(missing),
                file=sys.stderr,
            )
            return 2
        env = {**os.environ, "PYTHONPATH": tmp, "COLUMNS": "200"}
        lint = Path(sys.executable).with_name("lint-imports")
        cmd = [
            str(lint) if lint.exists() else "lint-imports",
            "--no-cache",
            "--no-logo",
            str(config),
        ]
        return subprocess.run(cmd, env=env, cwd=tmp, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())

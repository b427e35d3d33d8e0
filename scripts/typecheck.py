"""Type-check refgate with mypy, configured in ``pyproject.toml`` (``[tool.mypy]``).

refgate installs several top-level folders under one namespace (``graph/`` is ``refgate.graph``,
see ``[tool.setuptools] package-dir``), which mypy cannot see in the source tree. This script
stages the package as it is installed, as a tree of symbolic links under ``.mypy_cache/stage``
(stable, so mypy's cache makes re-runs quick), runs mypy on it and prints each message with the
file's path in the repository.

    .venv/bin/python scripts/typecheck.py            # the whole package; exit 0: clean
    .venv/bin/python scripts/typecheck.py --strict   # only the strictly checked modules
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def stage(root: Path, dest: Path, package_dirs: dict[str, str]) -> None:
    """Lay ``package_dirs`` (package -> folder) out under ``dest`` as links, as installed."""
    top = dest / "refgate"
    top.mkdir(parents=True, exist_ok=True)
    wanted: dict[Path, Path] = {}
    for entry in (root / package_dirs["refgate"]).iterdir():
        if entry.name != "__pycache__":
            wanted[top / entry.name] = entry
    for package, folder in package_dirs.items():
        if package != "refgate":
            wanted[dest.joinpath(*package.split("."))] = root / folder
    for link in top.iterdir():
        if link not in wanted or not link.is_symlink() or link.readlink() != wanted[link]:
            link.unlink()
    for link, target in wanted.items():
        if not link.is_symlink():
            link.symlink_to(target)


def strict_modules(config: dict) -> list[str]:
    """The modules the strict override names (``x.*`` means the package ``x``)."""
    out: list[str] = []
    for override in config.get("overrides", []):
        if override.get("disallow_untyped_defs"):
            out += [m.removesuffix(".*") for m in override["module"]]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strict", action="store_true", help="check only the strict modules")
    args = ap.parse_args(argv)
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    dest = REPO / ".mypy_cache" / "stage"
    stage(REPO, dest, dict(pyproject["tool"]["setuptools"]["package-dir"]))
    targets = ["-p", "refgate"]
    if args.strict:
        targets = [a for m in strict_modules(pyproject["tool"]["mypy"]) for a in ("-p", m)]
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(REPO / "pyproject.toml"),
        "--cache-dir",
        str(REPO / ".mypy_cache"),
        "--python-executable",
        sys.executable,
        *targets,
    ]
    # Run from the stage, so `refgate` is the staged package, not the repository's refgate/.
    proc = subprocess.run(cmd, cwd=dest, capture_output=True, text=True, env={**os.environ})
    links = {f"refgate/{p.split('.', 1)[1]}/": f"{f}/" for p, f in _mapped(pyproject).items()}
    pattern = re.compile("^(" + "|".join(map(re.escape, links)) + ")", re.MULTILINE)
    for stream, text in ((sys.stdout, proc.stdout), (sys.stderr, proc.stderr)):
        stream.write(pattern.sub(lambda m: links[m.group(1)], text))
    return proc.returncode


def _mapped(pyproject: dict) -> dict[str, str]:
    """Top-level folders installed under ``refgate.`` (``refgate.graph`` -> ``graph``)."""
    dirs = pyproject["tool"]["setuptools"]["package-dir"]
    return {p: f for p, f in dirs.items() if p != "refgate"}


if __name__ == "__main__":
    raise SystemExit(main())

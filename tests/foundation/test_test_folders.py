"""Test folders mirror the code's: the tests of the package ``refgate.X.Y`` live in
``tests/X/Y/`` (``tests/gate/`` for ``refgate/gate/``, ``tests/tools/sandbox/`` for
``tools/sandbox/``, ``tests/api/`` for ``refgate/api/``). Three folders map to no package, each
for one role (``ROLES``); a ``data`` folder anywhere holds test inputs. A folder that maps to
no code folder fails here (CONTRIBUTING.md, docs/architecture.md's "where is X")."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The folders of tests/ that are no package's, and what goes in each.
ROLES = {
    "foundation": "the kernel (the modules directly under refgate/) and cross-cutting checks",
    "support": "helpers imported as tests.support.<module>",
    "data": "test inputs",
}


def code_folders(root: Path = REPO) -> set[str]:
    """Every package below ``refgate`` as the path its tests live under: ``refgate.gate``
    (the folder refgate/gate/, pyproject's package-dir) -> ``gate``."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    found = set()
    for package, folder in pyproject["tool"]["setuptools"]["package-dir"].items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder)
            if ".venv" in rel.parts or "__pycache__" in rel.parts:
                continue
            parts = [*package.split(".")[1:], *rel.parts]
            if parts:
                found.add("/".join(parts))
    return found


def unmapped_test_folders(root: Path = REPO) -> list[str]:
    """Folders of tests/ that hold neither a package's tests nor one of the ``ROLES``."""
    code = code_folders(root)
    bad = []
    for folder in sorted(p for p in (root / "tests").rglob("*") if p.is_dir()):
        rel = folder.relative_to(root / "tests")
        if rel.parts[0] in ROLES or "data" in rel.parts or "__pycache__" in rel.parts:
            continue
        if rel.as_posix() not in code:
            bad.append(rel.as_posix())
    return bad


def test_every_test_folder_is_a_code_folder_or_a_role():
    bad = unmapped_test_folders()
    assert not bad, (
        f"test folders that map to no package: {bad}. The tests of refgate.X.Y live in "
        f"tests/X/Y/; the kernel's in tests/foundation/ (roles: {sorted(ROLES)})"
    )


def test_the_check_finds_a_folder_named_for_no_package(tmp_path):
    """A folder named for a theme ("serving") fails; one for a package, or data, passes."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    for package in ("refgate/api", "tools", "tools/sandbox"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    for folder in ("api", "tools/sandbox", "serving", "tools/sandbox/data/x", "foundation"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
    assert code_folders(tmp_path) == {"api", "tools", "tools/sandbox"}
    assert unmapped_test_folders(tmp_path) == ["serving"]
    (tmp_path / "tests" / "tools" / "walk").mkdir()
    assert unmapped_test_folders(tmp_path) == ["serving", "tools/walk"]

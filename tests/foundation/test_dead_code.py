"""No dead code: every function, method, class and property under the package has a caller.

vulture reads the whole repository (code, tests, benchmarks, scripts, examples) and reports the
definitions under the package's folders that nothing names; the entry points a framework calls
(``dead_code_allowlist.py``) and the console scripts of ``pyproject.toml`` are the only
exceptions.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

from vulture import Vulture

REPO = Path(__file__).resolve().parents[2]
#: The package's folders (``pyproject.toml`` maps them under ``refgate.*``).
CODE = ("refgate", "graph", "nodes", "tools", "retrieval")
#: Everything else that may call the package's code.
USERS = ("tests", "benchmarks", "scripts", "examples")
KINDS = {"function", "method", "class", "property"}


def _allowlist():
    spec = importlib.util.spec_from_file_location(
        "dead_code_allowlist", Path(__file__).with_name("dead_code_allowlist.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def console_scripts(root: Path = REPO) -> list[str]:
    """The functions ``pyproject.toml``'s ``[project.scripts]`` name (called by the installer's
    wrapper, never by our code)."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return [target.rsplit(":", 1)[1] for target in pyproject["project"]["scripts"].values()]


def unused(paths: list[Path], root: Path = REPO) -> list[str]:
    """``path:line: kind name`` of each definition under ``root``'s ``CODE`` folders with no
    caller in ``paths``."""
    allow = _allowlist()
    vulture = Vulture(
        ignore_names=[*allow.FRAMEWORK_HOOKS, *allow.INTERFACES, *console_scripts()],
        ignore_decorators=list(allow.REGISTERING_DECORATORS),
    )
    vulture.scavenge([str(p) for p in paths], exclude=["*/.venv/*", "*/data/*"])
    found = []
    for item in vulture.get_unused_code(min_confidence=60):
        rel = Path(item.filename).resolve().relative_to(root.resolve())
        if item.typ in KINDS and rel.parts[0] in CODE:
            found.append(f"{rel}:{item.first_lineno}: {item.typ} {item.name}")
    return sorted(found)


def test_every_definition_has_a_caller():
    paths = [REPO / d for d in CODE + USERS if (REPO / d).is_dir()]
    assert unused(paths) == []


def test_the_check_finds_a_function_nobody_calls(tmp_path):
    """The check can fail: an uncalled function is reported, a called one and a hook are not."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "probe.py").write_text(
        "def never_called() -> int:\n    return 1\n\n\n"
        "def called() -> int:\n    return 2\n\n\n"
        "class Handler:\n    def do_GET(self) -> None:\n        pass\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_probe.py").write_text(
        "from tools.probe import Handler, called\n\nassert called() and Handler\n"
    )
    found = unused([tmp_path / "tools", tmp_path / "tests"], root=tmp_path)
    assert found == ["tools/probe.py:1: function never_called"]

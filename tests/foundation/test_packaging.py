"""One import namespace: the top-level folders install under refgate.*, nothing generic leaks."""

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_folder_is_a_declared_package():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = cfg["package-dir"]
    declared = set(cfg["packages"])
    found = set()
    for pkg, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([pkg, *rel.parts]) if rel.parts else pkg)
    assert found <= declared, f"undeclared packages: {sorted(found - declared)}"


def test_generic_names_are_not_importable_top_level():
    for name in ("graph", "nodes", "tools", "retrieval", "skills"):
        spec = importlib.util.find_spec(name)
        assert spec is None or ROOT.as_posix() not in str(spec.origin or spec.submodule_search_locations), name
    assert importlib.util.find_spec("refgate.tools.registry") is not None


def test_the_served_graph_compiles_without_network_config_or_model(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "REFGATE_"))}
    code = ("from refgate.graph.workbench import graph; "
            "g = graph.get_graph(); print(sorted(n for n in g.nodes))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "'brief', 'compose', 'critique', 'gate', 'harvest', 'work'" in out.stdout

"""One import namespace: the top-level folders install under refgate.*, nothing generic leaks."""

import json
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


def test_generic_names_are_not_importable_top_level(tmp_path):
    code = (
        "import importlib.util as u, json; print(json.dumps({n: u.find_spec(n) is not None "
        "for n in ['graph', 'nodes', 'tools', 'retrieval', 'skills', 'refgate.tools.registry',"
        " 'refgate.graph', 'refgate.gate', 'refgate.retrieval']}))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = json.loads(out.stdout)
    assert not any(found[n] for n in ("graph", "nodes", "tools", "retrieval", "skills")), found
    assert all(
        found[n]
        for n in (
            "refgate.tools.registry",
            "refgate.graph",
            "refgate.gate",
            "refgate.retrieval",
        )
    ), found


def test_the_served_graph_compiles_without_network_config_or_model(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFGATE_"))}
    code = (
        "from refgate.graph.workbench import graph; "
        "g = graph.get_graph(); print(sorted(n for n in g.nodes))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "'brief', 'compose', 'critique', 'deliver', 'gate', 'harvest', 'work'" in out.stdout

"""Fixed costs off the path: ``refgate --version``, ``--help`` and shell completion load no
graph, model, LangGraph, torch or embeddings (each command's module loads when it runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer.main

from refgate.cli import COMMANDS, app

#: Modules (and their submodules) that a command's work needs, never its listing.
HEAVY = (
    "torch",
    "sentence_transformers",
    "transformers",
    "onnxruntime",
    "tokenizers",
    "llama_cpp",
    "langgraph",
    "langchain_core",
    "langchain_openai",
    "refgate.graph",
    "refgate.nodes",
    "refgate.tools",
    "refgate.retrieval",
    "refgate.api.public",
)

PROBE = """
import json, sys
sys.argv = ["refgate", *json.loads(sys.argv[1])]
from refgate import _console_main
try:
    _console_main()
except SystemExit:
    pass
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""


def loaded_modules(args: list[str], env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """Run the console script's entry point (``refgate:_console_main``) with ``args``; its
    output and every module loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    out, _, modules = proc.stdout.rpartition("\nMODULES ")
    assert modules, proc.stderr[-2000:]
    return out, json.loads(modules)


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize(
    ("args", "env", "shown"),
    [
        (["--version"], {}, "refgate 0.1.0"),
        (["--help"], {}, "provenance-map"),
        (
            [],
            {"_REFGATE_COMPLETE": "complete_bash", "COMP_WORDS": "refgate a", "COMP_CWORD": "1"},
            "audit",
        ),
    ],
    ids=["version", "help", "completion"],
)
def test_listing_commands_loads_no_graph_model_or_torch(args, env, shown):
    out, modules = loaded_modules(args, env)
    assert shown in out
    assert "refgate.cli.ask" not in modules
    assert heavy(modules) == []


def test_running_a_command_still_loads_its_module():
    out, modules = loaded_modules(["ask", "--help"])
    assert "--workspace" in out and "refgate.cli.ask" in modules


def _summary(text: str) -> str:
    return " ".join(text.split("\n\n")[0].split())


def test_the_command_table_matches_the_commands():
    group = typer.main.get_command(app)
    for name, (module, summary) in COMMANDS.items():
        command = group.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None, name
        if command.callback is not None:  # a group (dart) has none; its module registered it
            assert command.callback.__module__ == f"refgate.cli.{module}"
        assert _summary(summary) == _summary(command.help or ""), name
    registered = {
        info.name or typer.main.get_command_name(info.callback.__name__)
        for info in app.registered_commands
    } | {info.name for info in app.registered_groups}
    assert registered == set(COMMANDS)


def test_version_loads_no_command_line_stack():
    out, modules = loaded_modules(["--version"])
    assert out.strip() == "refgate 0.1.0"
    assert not [m for m in modules if m.split(".")[0] in ("typer", "click", "rich", "pydantic")]


@pytest.mark.parametrize(
    ("typo", "suggested"), [("ask2", "'ask'"), ("indx", "'index'"), ("zzz", None)]
)
def test_an_unknown_command_names_the_closest_commands(typo, suggested):
    proc = subprocess.run(
        [sys.executable, "-c", "from refgate import _console_main; _console_main()", typo],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 2
    assert f"No such command '{typo}'." in proc.stderr
    assert "Traceback" not in proc.stderr
    if suggested:
        assert f"Did you mean {suggested}?" in proc.stderr
    else:
        assert "Did you mean" not in proc.stderr

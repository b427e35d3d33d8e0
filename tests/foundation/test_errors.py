"""One exception tree: every error refgate raises on purpose derives from ``RefgateError``
through one branch, keeps the built-in base it had, and the CLI's exit code is its branch's."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from refgate.errors import (
    EXIT_CONFIG,
    EXIT_ERROR,
    InputError,
    ModelError,
    RefgateError,
    Refused,
    SettingsError,
    WorkspaceError,
    exit_code_for,
)

REPO = Path(__file__).resolve().parents[2]
CODE = {"refgate": "refgate", "graph": "refgate.graph", "nodes": "refgate.nodes"}
CODE |= {"tools": "refgate.tools", "retrieval": "refgate.retrieval"}
#: Exceptions used as control flow inside one module, never shown to a person.
INTERNAL = {
    "refgate.testing.ScriptExhausted",  # a scripted model ran out of replies (tests only)
    "refgate.ui.runs.StopRequested",  # the stop button, raised into the run it stops
    "refgate.ui.security.Refused",  # an HTTP refusal the web app answers with a status
    "refgate.ui.places.Refusal",  # likewise, for a place the page asked for
    "refgate.ui.pages.PageError",  # likewise, for a page that cannot be served
    "refgate.tools.sandbox.worker.protocol.ProtocolError",  # inside the sandbox's worker
    "refgate.tools.sandbox.worker.sql.SqlError",  # inside the worker: returned to the code
    "refgate.tools.sandbox.emit.EmitRejected",  # inside the worker: raised in the user's code
    "refgate.tools.sandbox.worker.data.DatasetTooLarge",  # likewise (the worker imports no refgate)
    "refgate.retrieval.loaders.bounded.WorkerDied",  # turned into an Unreadable with its reason
}


def exception_classes() -> list[str]:
    """Every class of the code whose bases name an exception (module.Class)."""
    found = []
    for folder, package in CODE.items():
        for path in (REPO / folder).rglob("*.py"):
            rel = path.relative_to(REPO / folder).with_suffix("")
            module = ".".join((package, *rel.parts)).removesuffix(".__init__")
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                names = [
                    getattr(b, "id", getattr(b, "attr", "")) for b in getattr(node, "bases", [])
                ]
                if isinstance(node, ast.ClassDef) and any(
                    n.endswith(("Error", "Exception", "Escape", "Refused", "Rejected", "Exceeded"))
                    or n in ("Unreadable", "DartError", "Undecodable", "TooLarge", "Refusal")
                    for n in names
                ):
                    found.append(f"{module}.{node.name}")
    return sorted(found)


def load(qualified: str) -> type[BaseException]:
    module, _, name = qualified.rpartition(".")
    cls: type[BaseException] = getattr(importlib.import_module(module), name)
    return cls


def test_every_error_of_the_code_is_in_the_tree():
    classes = exception_classes()
    assert len(classes) > 40
    outside = [c for c in classes if c not in INTERNAL and not issubclass(load(c), RefgateError)]
    assert outside == []


def test_the_branches_carry_the_exit_codes():
    for branch in (SettingsError, WorkspaceError, InputError, Refused):
        assert exit_code_for(branch("x")) == EXIT_CONFIG
    assert exit_code_for(ModelError("x")) == EXIT_ERROR
    assert exit_code_for(KeyError("x")) == EXIT_ERROR


@pytest.mark.parametrize(
    ("qualified", "branch", "builtin"),
    [
        ("refgate.config.ConfigError", SettingsError, ValueError),
        ("refgate.workspace.WorkspaceError", WorkspaceError, ValueError),
        ("refgate.paths.PathEscape", Refused, PermissionError),
        ("refgate.retrieval.loaders.base.Unreadable", InputError, ValueError),
        ("refgate.api.local_llm.LocalModelError", ModelError, RuntimeError),
        ("refgate.tools.sandbox.errors.SandboxError", RefgateError, RuntimeError),
    ],
)
def test_an_error_keeps_its_builtin_base(qualified, branch, builtin):
    cls = load(qualified)
    assert issubclass(cls, branch) and issubclass(cls, builtin)

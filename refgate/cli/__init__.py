"""Command-line interface: ``refgate init | ask | trace | check | index | research | provenance-map |
review | audit | eval | report | dart``."""

from __future__ import annotations

import importlib

from refgate.cli.app import app

#: Modules whose import registers their commands on ``app``.
COMMAND_MODULES = [
    "init",
    "ask",
    "trace",
    "check",
    "index",
    "research",
    "provenance_map",
    "review",
    "eval",
    "report",
    "dart",
]

for _name in COMMAND_MODULES:
    _module = f"refgate.cli.{_name}"
    try:
        importlib.import_module(_module)
    except ModuleNotFoundError as exc:  # a command whose module is not written yet
        if exc.name != _module:
            raise


def main() -> None:
    """Entry point of the ``refgate`` console script."""
    app()


__all__ = ["app", "main"]

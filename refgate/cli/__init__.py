"""Command-line interface: ``refgate init | ask | trace | check | index | research | provenance-map |
memory | review | audit | eval | report | dart``.

Each command lives in its own module, imported only when the command runs
(``refgate.cli.app.COMMANDS``): ``refgate --help``, ``--version`` and shell completion load
neither the graph nor a model.
"""

from __future__ import annotations

from refgate.cli.app import COMMANDS, app


def main() -> None:
    """Entry point of the ``refgate`` console script."""
    app()


__all__ = ["COMMANDS", "app", "main"]

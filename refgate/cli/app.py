"""The ``refgate`` Typer application; each command lives in its own module of this package."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable
from difflib import get_close_matches

import click
import typer
import typer.main
from click.shell_completion import CompletionItem
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from typer.core import TyperGroup

from refgate import __version__
from refgate.redaction import redact_secrets

#: Every command: its name, the module of ``refgate.cli`` that defines it, and its one-line help.
#: ``--help``, ``--version`` and shell completion read this table, so they import no command
#: module (and none of the graph, models or embeddings behind them); a command's module is
#: imported when that command is run or its own options are completed. A test checks this table
#: against the commands' docstrings.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "init",
        "Create a workspace: a refgate.toml naming the CSV/parquet files (columns read from them, "
        "units and period columns guessed for you to check) and the documents folder, validated "
        "before it is kept.",
    ),
    "ask": (
        "ask",
        "Answer a question about a workspace; every claim is gated on the refs it cites.",
    ),
    "report": (
        "report",
        "Render a stored run again as a report file (the format follows the extension).",
    ),
    "trace": ("trace", "Show the pass-by-pass trace of a stored run."),
    "check": (
        "check",
        "Run the GATE alone: check every number, date and ranking of an answer against the refs it "
        "cites. Exit 0 when it passes, 3 when it blocks, 2 on unreadable input.",
    ),
    "index": (
        "index",
        "Build or update the workspace's document index (chunks, embeddings, FAISS + BM25).",
    ),
    "search": (
        "search",
        "Search the workspace's document index: ranked chunks with their metadata and scores.",
    ),
    "research": (
        "research",
        "Research a question: search, read, extract claims, verify each by 3 skeptical votes, "
        "and synthesise a report whose every citation is a page read in this run.",
    ),
    "provenance-map": (
        "provenance_map",
        "Show which tool result fields carry document-derived (untrusted) values, and why.",
    ),
    "review": (
        "review",
        "Record a human review (pass or fail) of a run's answer in the audit file.",
    ),
    "audit": (
        "review",
        "List recorded runs, newest first, with the GATE's verdict and the human review.",
    ),
    "eval": (
        "eval",
        "Measure answers end to end: gold numbers and text against the GATE's verdict.",
    ),
    "dart": ("dart", "DART filings and statements (OpenDART) into the workspace."),
    "mcp": (
        "serve_mcp",
        "Serve refgate's tools (ask, research, check, search_documents) to MCP clients: over "
        "stdio, or streamable HTTP on loopback with --http.",
    ),
    "memory": ("memory", "Inspect and clear the decisions a workspace remembers."),
    "trust": (
        "trust",
        "Trust a workspace on this machine: let its commands (MCP servers) start, sandboxed.",
    ),
    "ui": (
        "ui",
        "Open the workbench in the browser: ask, watch the passes, click a number to see its "
        "evidence.",
    ),
}


class LazyCommands(TyperGroup):
    """The ``refgate`` command group: lists its commands from ``COMMANDS`` and imports a
    command's module only when that command is resolved to run (or to complete its options)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        module, summary = COMMANDS[cmd_name]
        if self._listing:  # help and completion show the name and summary only
            return click.Command(cmd_name, help=summary)
        importlib.import_module(f"refgate.cli.{module}")
        for info in app.registered_commands:
            callback = info.callback
            name = info.name or (callback and typer.main.get_command_name(callback.__name__))
            if name == cmd_name:
                command = typer.main.get_command_from_info(
                    info,
                    pretty_exceptions_short=app.pretty_exceptions_short,
                    rich_markup_mode=app.rich_markup_mode,
                )
                self.add_command(command, cmd_name)
                return command
        for group_info in app.registered_groups:  # a command with subcommands (dart sync)
            if group_info.name == cmd_name:
                group = typer.main.get_group_from_info(
                    group_info,
                    pretty_exceptions_short=app.pretty_exceptions_short,
                    suggest_commands=app.suggest_commands,
                    rich_markup_mode=app.rich_markup_mode,
                )
                self.add_command(group, cmd_name)
                return group
        raise RuntimeError(f"refgate.cli.{module} defines no command {cmd_name!r}")

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        self._listing = True
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self._listing = False

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command name fails with the closest names from ``COMMANDS`` (the loaded
        commands alone, which Typer's own suggestion reads, hold only what has been run)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS and name not in self.commands:
            matches = get_close_matches(name, list(COMMANDS))
            hint = f" Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="refgate",
    cls=LazyCommands,
    help="refgate: an evidence-gated analyst agent. Every number, date and ranking in an answer "
    "is backed by the ref it cites.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def terminal_safe(text: str) -> str:
    r"""``text`` with every control character but newline and tab made visible (``\x1b`` -> "␛",
    C1 ``\x9b`` -> the four characters ``\x9b``): nothing printed can drive the terminal."""
    # importing refgate.report.controls runs refgate.report's package, the whole report stack;
    # deferred: --help and completion stay light (tests/cli/test_cli_startup.py)
    from refgate.report.controls import visible_controls

    return visible_controls(text)


def json_safe(text: str) -> str:
    """JSON text with DEL and C1 controls escaped (``json.dumps`` escapes only C0), still valid
    JSON: they can only occur inside strings."""
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)


class SafeConsole(Console):
    """A rich console that makes control characters visible in every text it renders (answers
    as Markdown, table cells, errors), while keeping rich's own styling and control codes."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(terminal_safe(seg.text), seg.style, seg.control)
            for seg in buffer
        )


def _version(value: bool) -> None:
    if value:
        typer.echo(f"refgate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """refgate: an evidence-gated analyst agent. Every number, date and ranking in an answer
    is backed by the ref it cites."""
    _quiet_library_progress()


def _quiet_library_progress() -> None:
    """Library progress bars (model loading, downloads) would interleave with refgate's own
    progress lines on stderr: turn them off for the CLI's process (a user may set them back)."""

    for name, value in (
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TQDM_DISABLE", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
    ):
        os.environ.setdefault(name, value)


#: Progress and diagnostics go to stderr so ``--json`` output on stdout stays clean.
class ErrorConsole(SafeConsole):
    """The stderr console: every text it prints has its secrets masked first
    (``refgate.redaction``), since errors are shown there."""

    def print(self, *objects: object, **kwargs: object) -> None:
        super().print(*(redact_secrets(o) if isinstance(o, str) else o for o in objects), **kwargs)


err_console = ErrorConsole(stderr=True)
console = SafeConsole()


def esc(value: object) -> str:
    """``value`` as literal, terminal-safe text inside a rich markup string: brackets in data
    (ids, paths, excerpts, error messages, tool names a model made up) are shown, not read as
    markup, and control characters are made visible (``terminal_safe``)."""
    return escape(terminal_safe(str(value)))

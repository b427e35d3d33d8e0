"""The ``refgate`` Typer application; each command lives in its own module of this package."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(
    name="refgate",
    help="refgate: an evidence-gated analyst agent. Every number, date and ranking in an answer "
    "is backed by the ref it cites.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from refgate import __version__

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
    import os

    for name, value in (("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TQDM_DISABLE", "1"),
                        ("TRANSFORMERS_VERBOSITY", "error")):
        os.environ.setdefault(name, value)

#: Progress and diagnostics go to stderr so ``--json`` output on stdout stays clean.
err_console = Console(stderr=True)
console = Console()


def esc(value: object) -> str:
    """``value`` as literal text inside a rich markup string: brackets in data (ids, paths,
    excerpts, error messages, tool names a model made up) are shown, not read as markup."""
    return escape(str(value))


#: Exit codes shared by the commands.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_UNMET = 3

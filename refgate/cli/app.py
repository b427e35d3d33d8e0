"""The ``refgate`` Typer application; each command lives in its own module of this package."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

from refgate import __version__

app = typer.Typer(
    name="refgate",
    help="refgate: an evidence-gated analyst agent. Every number, date and ranking in an answer "
    "is backed by the ref it cites.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)

#: C0 controls but newline and tab, DEL, and C1 controls: a terminal acts on them (clear the
#: screen, set the title, move the cursor), so text from a model or a file never carries them out.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control picture: ESC -> "␛"
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"


def terminal_safe(text: str) -> str:
    r"""``text`` with every control character but newline and tab made visible (``\x1b`` -> "␛",
    C1 ``\x9b`` -> the four characters ``\x9b``): nothing printed can drive the terminal."""
    return _CONTROLS.sub(_visible, text)


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
err_console = SafeConsole(stderr=True)
console = SafeConsole()


def esc(value: object) -> str:
    """``value`` as literal, terminal-safe text inside a rich markup string: brackets in data
    (ids, paths, excerpts, error messages, tool names a model made up) are shown, not read as
    markup, and control characters are made visible (``terminal_safe``)."""
    return escape(terminal_safe(str(value)))


#: Exit codes shared by the commands.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_UNMET = 3

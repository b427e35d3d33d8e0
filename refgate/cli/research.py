"""``refgate research "question"``: the deep-research graph with live progress and a report."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markdown import Markdown

from refgate.cli.app import app, console, err_console, esc, json_safe, terminal_safe
from refgate.cli.common import WORKSPACE_HELP, open_workspace
from refgate.cli.report import check_output
from refgate.cli.stopping import say_on_stop, stop_on_signals
from refgate.config import ConfigError
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, EXIT_UNMET
from refgate.report import ReportError
from refgate.report.links import research_urls
from refgate.report.markdown import inert_answer

if TYPE_CHECKING:
    from refgate.api.public import ResearchResult
    from refgate.events import ProgressEvent
    from refgate.nodes.research.backends import ResearchBackend
    from refgate.workspace import Workspace


class _Progress:
    """Renders research_step events on stderr, one line per step, votes as a running count."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.votes = 0

    def __call__(self, event: ProgressEvent) -> None:
        if self.quiet or event.get("event") != "research_step":
            return
        step = event.get("step")
        if step == "scope" and event.get("status") == "done":
            line = f"scope: {len(event['angles'])} angles: " + "; ".join(event["angles"])
        elif step == "scope":
            line = f"scope: {event.get('status')}"
        elif step == "search":
            line = (
                f"search [{event['angle']}]: {event['results']} results, "
                f"{event['picked']} picked, {event['novel']} new"
            )
        elif step == "fetch":
            state = (
                f"{event['claims']} claims" if event["fetched"] else f"failed ({event['error']})"
            )
            line = f"fetch {event['url']}: {state}"
        elif step == "rank":
            line = f"rank: {event['claims']} claims, verifying {event['verifying']}"
        elif step == "verify":
            self.votes += 1
            if self.votes % 10:
                return
            line = f"verify: {self.votes} votes in"
        elif step == "tally":
            line = (
                f"tally: {event['survives']} survive, {event['refuted']} refuted, "
                f"{event['unverified']} unverified"
            )
        elif step == "synthesize":
            line = f"synthesize: {event.get('status')}"
        elif step == "report":
            line = f"report: {event['status']}, {event['findings']} findings"
        else:
            line = f"{step}"
        err_console.print(f"[dim]·[/dim] {esc(line)}", highlight=False, markup=True)


#: Other names of the backends (the design calls ``agy`` antigravity).
BACKEND_ALIASES = {"antigravity": "agy"}


@app.command("research")
def research(
    question: str = typer.Argument(
        "", help="The research question (omit with --thread to resume)."
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help=WORKSPACE_HELP + " Its web snapshot is the default web."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    backend: str = typer.Option(
        "chat", "--backend", help="chat (the configured model), codex or agy (antigravity)."
    ),
    max_concurrency: int = typer.Option(
        10, "--max-concurrency", "--concurrency", min=1, help="Parallel agent calls."
    ),
    thread: str | None = typer.Option(
        None,
        "--thread",
        "-t",
        "--resume",
        help="Thread id: continues an interrupted run (finished steps are not redone); "
        "new runs get a fresh id.",
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Model string (overrides REFGATE_MODEL), e.g. ollama:qwen2.5."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Also write the report: .md, .html (self-contained), .pdf, .docx or .json.",
    ),
) -> None:
    """Research a question: search, read, extract claims, verify each by 3 skeptical votes,
    and synthesise a report whose every citation is a page read in this run.

    The web is the workspace's offline snapshot unless REFGATE_WEB_SEARCH=searx:<url> (a SearxNG
    server) and REFGATE_WEB_FETCH=http turn the network on."""
    from refgate.api.local_llm import LocalModelError  # deferred: keeps --help fast
    from refgate.api.public import RunFailed  # deferred: keeps --help fast
    from refgate.api.public import research as run_research  # deferred: keeps --help fast

    check_output(output)
    stop_on_signals()
    ws = open_workspace(workspace)
    fixed_backend = _backend(BACKEND_ALIASES.get(backend, backend))
    events = _Events(ws.root, quiet)
    if not quiet:
        _note_no_web(ws)
    try:
        result = run_research(
            question,
            workspace=ws,
            model=model,
            thread=thread,
            on_event=events,
            max_concurrency=max_concurrency,
            backend=fixed_backend,
        )
    except (ConfigError, KeyboardInterrupt, LocalModelError, RunFailed) as exc:
        raise _stopped(exc, ws.root, events.thread) from None
    _show(result, as_json=as_json, output=output, quiet=quiet)
    raise typer.Exit(EXIT_OK if result.useful else EXIT_UNMET)


def _backend(name: str) -> ResearchBackend | None:
    """The agent backend ``--backend`` names (None: the configured chat model)."""
    if name in ("codex", "agy"):
        from refgate.nodes.research.backends import make_backend  # deferred: keeps --help fast

        if shutil.which(name) is None:
            err_console.print(f"[red]error:[/red] `{esc(name)}` is not on PATH")
            raise typer.Exit(EXIT_CONFIG)
        return make_backend(name)
    if name != "chat":
        err_console.print(
            f"[red]error:[/red] unknown backend {esc(repr(name))}; use chat, codex or agy"
        )
        raise typer.Exit(EXIT_CONFIG)
    return None


class _Events:
    """The run's events on stderr: its thread (and how to resume it), notices, progress."""

    def __init__(self, root: Path, quiet: bool) -> None:
        self.root = root
        self.quiet = quiet
        self.thread: str | None = None
        self.progress = _Progress(quiet)

    def __call__(self, event: ProgressEvent) -> None:
        if event.get("event") == "run_started":
            self.thread = str(event.get("thread"))
            say_on_stop(
                f"refgate research --workspace {shlex.quote(str(self.root))} "
                f"--thread {shlex.quote(self.thread)}"
            )
            if not self.quiet:
                err_console.print(
                    f"[dim]thread {esc(self.thread)} (continue an interrupted run with "
                    f"--thread {esc(self.thread)})[/dim]"
                )
        elif event.get("event") == "notice" and not self.quiet:
            err_console.print(f"[yellow]note:[/yellow] {esc(event.get('message', ''))}")
        else:
            self.progress(event)


def _note_no_web(ws: Workspace) -> None:
    """Say so when the run will have no web to search (no snapshot, no provider)."""
    # deferred: keeps --help fast
    from refgate.tools.web_providers import WebProviderError, default_providers

    try:
        search, _ = default_providers(ws)
        if search.name == "none":
            err_console.print(
                "[yellow]note:[/yellow] no web snapshot or search provider is configured "
                "(set REFGATE_WEB_SEARCH=searx:<url> and REFGATE_WEB_FETCH=http)"
            )
    except WebProviderError:
        pass  # reported by the run below


def _stopped(exc: BaseException, root: Path, thread: str | None) -> typer.Exit:
    """Say why the run stopped (and how to resume it); the exit to raise."""
    from refgate.api.public import RunFailed  # deferred: keeps --help fast

    if isinstance(exc, ConfigError):
        err_console.print(f"[red]error:[/red] {esc(exc)}")
        return typer.Exit(EXIT_CONFIG)
    if isinstance(exc, KeyboardInterrupt):
        if thread:
            err_console.print(
                f"\ninterrupted; resume with: refgate research --workspace {esc(root)} "
                f"--thread {esc(thread)}"
            )
    elif isinstance(exc, RunFailed):
        err_console.print(f"[red]research stopped:[/red] {esc(exc)}")
        err_console.print(
            f"resume with: refgate research --workspace {esc(root)} --thread {esc(exc.thread)}"
        )
    else:
        err_console.print(f"[red]the embedded model failed:[/red] {esc(exc)}")
    return typer.Exit(EXIT_ERROR)


def _show(result: ResearchResult, *, as_json: bool, output: Path | None, quiet: bool) -> None:
    """The report on stdout (JSON, rendered, or markdown when piped), its file, its usage."""
    from refgate.nodes.research.report import to_json, to_markdown  # deferred: keeps --help fast

    if as_json:
        typer.echo(json_safe(to_json(result.report)))
    elif console.is_terminal:
        render_report(to_markdown(result.report), result.report)
    else:  # piped: the markdown itself, for files and other programs
        typer.echo(terminal_safe(to_markdown(result.report)))
    if output is not None:
        try:
            written = result.write_report(output)
        except ReportError as exc:
            err_console.print(f"[red]report not written:[/red] {esc(exc)}")
            raise typer.Exit(EXIT_ERROR) from None
        if not quiet:
            err_console.print(f"report written to {esc(written)}")
    if not quiet:
        err_console.print(f"[dim]{esc(result.usage.summary())}[/dim]")


def render_report(markdown: str, report: Mapping[str, object]) -> None:
    """The research report rendered in the terminal as ``refgate ask`` renders an answer:
    markdown made inert (links only to the run's own sources, no images or raw HTML)."""
    console.print(Markdown(inert_answer(markdown, research_urls(report)) or "_(no report)_"))


__all__ = ["render_report", "research"]

"""``refgate research "question"``: the deep-research graph with live progress and a report."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markdown import Markdown

from refgate.cli.app import (
    EXIT_CONFIG,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_UNMET,
    app,
    console,
    err_console,
    esc,
    json_safe,
    terminal_safe,
)
from refgate.cli.common import WORKSPACE_HELP, open_workspace
from refgate.cli.report import check_output
from refgate.cli.stopping import say_on_stop, stop_on_signals
from refgate.config import ConfigError
from refgate.report import ReportError
from refgate.report.links import research_urls
from refgate.report.markdown import inert_answer

if TYPE_CHECKING:
    from refgate.events import ProgressEvent


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
    # deferred: the graph stack loads only when this command runs, so refgate --help stays fast
    from refgate.api.local_llm import LocalModelError
    from refgate.api.public import RunFailed
    from refgate.api.public import research as run_research
    from refgate.nodes.research.report import to_json, to_markdown

    check_output(output)
    stop_on_signals()
    ws = open_workspace(workspace)
    fixed_backend = None
    backend = BACKEND_ALIASES.get(backend, backend)
    if backend in ("codex", "agy"):
        # deferred: the graph stack loads only when this command runs, so refgate --help stays fast
        from refgate.nodes.research.backends import make_backend

        if shutil.which(backend) is None:
            err_console.print(f"[red]error:[/red] `{esc(backend)}` is not on PATH")
            raise typer.Exit(EXIT_CONFIG)
        fixed_backend = make_backend(backend)
    elif backend != "chat":
        err_console.print(
            f"[red]error:[/red] unknown backend {esc(repr(backend))}; use chat, codex or agy"
        )
        raise typer.Exit(EXIT_CONFIG)
    progress = _Progress(quiet)
    started: dict[str, str] = {}

    def on_event(event: ProgressEvent) -> None:
        if event.get("event") == "run_started":
            started["thread"] = str(event.get("thread"))
            say_on_stop(
                f"refgate research --workspace {shlex.quote(str(ws.root))} "
                f"--thread {shlex.quote(started['thread'])}"
            )
            if not quiet:
                err_console.print(
                    f"[dim]thread {esc(started['thread'])} (continue an interrupted run with "
                    f"--thread {esc(started['thread'])})[/dim]"
                )
        elif event.get("event") == "notice" and not quiet:
            err_console.print(f"[yellow]note:[/yellow] {esc(event.get('message', ''))}")
        else:
            progress(event)

    if not quiet:
        # deferred: the graph stack loads only when this command runs, so refgate --help stays fast
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
    try:
        result = run_research(
            question,
            workspace=ws,
            model=model,
            thread=thread,
            on_event=on_event,
            max_concurrency=max_concurrency,
            backend=fixed_backend,
        )
    except ConfigError as exc:
        err_console.print(f"[red]error:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from None
    except KeyboardInterrupt:
        if started.get("thread"):
            err_console.print(
                f"\ninterrupted; resume with: refgate research --workspace {esc(ws.root)} "
                f"--thread {esc(started['thread'])}"
            )
        raise typer.Exit(EXIT_ERROR) from None
    except LocalModelError as exc:
        err_console.print(f"[red]the embedded model failed:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_ERROR) from None
    except RunFailed as exc:
        err_console.print(f"[red]research stopped:[/red] {esc(exc)}")
        err_console.print(
            f"resume with: refgate research --workspace {esc(ws.root)} --thread {esc(exc.thread)}"
        )
        raise typer.Exit(EXIT_ERROR) from None
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
    raise typer.Exit(EXIT_OK if result.useful else EXIT_UNMET)


def render_report(markdown: str, report: Mapping[str, object]) -> None:
    """The research report rendered in the terminal as ``refgate ask`` renders an answer:
    markdown made inert (links only to the run's own sources, no images or raw HTML)."""
    console.print(Markdown(inert_answer(markdown, research_urls(report)) or "_(no report)_"))


__all__ = ["render_report", "research"]

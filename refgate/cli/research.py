"""``refgate research "question"``: the deep-research graph with live progress and a report."""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import typer

from refgate.cli.app import EXIT_CONFIG, EXIT_ERROR, EXIT_OK, EXIT_UNMET, app, err_console, esc

#: Statuses whose report carries at least one verified claim.
_USEFUL = ("complete", "synthesis_failed")


class _Progress:
    """Renders research_step events on stderr, one line per step, votes as a running count."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.votes = 0

    def __call__(self, event: dict[str, Any]) -> None:
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


def _workspace(path: Path | None):
    from refgate.workspace import load_workspace

    if path is not None:
        return load_workspace(path)
    if (Path.cwd() / "refgate.toml").is_file():
        return load_workspace(Path.cwd())
    return None


#: Other names of the backends (the design calls ``agy`` antigravity).
BACKEND_ALIASES = {"antigravity": "agy"}


@app.command("research")
def research(
    question: str = typer.Argument("", help="The research question."),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="Workspace folder (its web snapshot is the default web)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    backend: str = typer.Option(
        "chat", "--backend", help="chat (the configured model), codex or agy (antigravity)."
    ),
    max_concurrency: int = typer.Option(
        10, "--max-concurrency", "--concurrency", min=1, help="Parallel agent calls."
    ),
    resume: str | None = typer.Option(
        None, "--resume", help="Thread id of an interrupted run to continue (needs a workspace)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Also write the report: .md, .html (self-contained) or .json."
    ),
) -> None:
    """Research a question: search, read, extract claims, verify each by 3 skeptical votes,
    and synthesise a report whose every citation is a page read in this run."""
    from refgate.cli.report import check_output
    from refgate.config import ConfigError, load_settings
    from refgate.graph.research import build_research_graph, run_config, stream_research
    from refgate.nodes.research.report import to_json, to_markdown
    from refgate.tools.web_providers import WebProviderError, default_providers
    from refgate.workspace import WorkspaceError

    check_output(output)
    try:
        ws = _workspace(workspace)
        settings = load_settings(workspace_settings=getattr(ws, "settings", None))
        search, fetch = default_providers(ws)
    except (WorkspaceError, ConfigError, WebProviderError) as exc:
        err_console.print(f"[red]error:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from None

    kwargs: dict[str, Any] = {"web_search": search, "web_fetch": fetch, "workspace": ws}
    backend = BACKEND_ALIASES.get(backend, backend)
    if backend == "chat":
        from refgate.models import NO_MODEL_HELP, ModelProvider

        if not settings.has_endpoint:
            err_console.print(f"[red]error:[/red] {esc(NO_MODEL_HELP)}")
            raise typer.Exit(EXIT_CONFIG)
        kwargs["model"] = ModelProvider().for_pass("research", settings)
    elif backend in ("codex", "agy"):
        from refgate.nodes.research.backends import make_backend

        if shutil.which(backend) is None:
            err_console.print(f"[red]error:[/red] `{esc(backend)}` is not on PATH")
            raise typer.Exit(EXIT_CONFIG)
        kwargs["backend"] = make_backend(backend)
    else:
        err_console.print(
            f"[red]error:[/red] unknown backend {esc(repr(backend))}; use chat, codex or agy"
        )
        raise typer.Exit(EXIT_CONFIG)
    if search.name == "none" and not quiet:
        err_console.print("[yellow]note:[/yellow] no web snapshot or search provider is configured")

    conn = None
    if ws is not None:
        ws.state_dir.mkdir(parents=True, exist_ok=True)
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(ws.state_dir / "research.sqlite", check_same_thread=False)
        kwargs["checkpointer"] = SqliteSaver(conn)
    elif resume:
        err_console.print("[red]error:[/red] --resume needs a workspace (checkpoints live there)")
        raise typer.Exit(EXIT_CONFIG)

    thread_id = resume or uuid.uuid4().hex[:12]
    graph = build_research_graph(**kwargs)
    config = run_config(
        thread_id=thread_id if conn is not None else None, max_concurrency=max_concurrency
    )
    if conn is not None and not quiet:
        err_console.print(
            f"[dim]thread {esc(thread_id)} (continue an interrupted run with --resume {esc(thread_id)})[/dim]"
        )
    try:
        final = stream_research(graph, None if resume else question, config, _Progress(quiet))
    except Exception as exc:
        err_console.print(f"[red]research stopped:[/red] {type(exc).__name__}: {esc(exc)}")
        if conn is not None:
            err_console.print(
                f"resume with: refgate research --workspace {esc(ws.root)} --resume {esc(thread_id)}"
            )
        raise typer.Exit(EXIT_ERROR) from None
    finally:
        if conn is not None:
            conn.close()
    report = final.get("report")
    if report is None:
        err_console.print("[red]error:[/red] the run ended without a report")
        raise typer.Exit(EXIT_ERROR)
    if as_json:
        typer.echo(to_json(report))
    else:
        typer.echo(to_markdown(report))
    if output is not None:
        from refgate.report import ReportError, write_research_report

        try:
            written = write_research_report(output, report, to_markdown)
        except ReportError as exc:
            err_console.print(f"[red]report not written:[/red] {esc(exc)}")
            raise typer.Exit(EXIT_ERROR) from None
        if not quiet:
            err_console.print(f"report written to {esc(written)}")
    raise typer.Exit(EXIT_OK if report["status"] in _USEFUL else EXIT_UNMET)


__all__ = ["research"]

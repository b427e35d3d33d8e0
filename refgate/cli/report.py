"""``refgate report THREAD --output FILE``: a stored run as a shareable report, and the
``--output`` helpers ``refgate ask`` and ``refgate research`` use. The format follows the
extension: ``.md``, ``.html`` (one self-contained file) or ``.json``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from refgate.cli.app import app, err_console, esc
from refgate.cli.common import open_settings, open_workspace
from refgate.config import ConfigError
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK
from refgate.memory.audit import thread_run_facts
from refgate.report import (
    ReportError,
    answer_document,
    output_format,
    write_research_report,
    write_run_report,
)
from refgate.usage import turn_usage
from refgate.workspace import Workspace

if TYPE_CHECKING:
    from refgate.nodes.state import WorkbenchState


def check_output(path: Path | None) -> None:
    """Exit 2 with the reason when ``path`` cannot take a report (checked before any run)."""
    if path is None:
        return
    try:
        output_format(path)
    except ReportError as exc:
        err_console.print(f"[red]error:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_CONFIG) from None


def report_written(write: Callable[[], Path], thread: str | None) -> bool:
    """Write a run's report with ``write``; print where (or why not, and how to write it again)
    on stderr. True when written."""
    try:
        written = write()
    except ReportError as exc:
        err_console.print(f"[red]report not written:[/red] {esc(exc)}")
        if thread:
            err_console.print(
                f"the run is stored; write it again with: refgate report {esc(thread)} --output FILE"
            )
        return False
    err_console.print(f"report written to {esc(written)}")
    return True


def _workbench_state(ws: Workspace, thread: str) -> WorkbenchState:
    from refgate.graph import build_graph  # deferred: keeps --help fast

    # deferred: keeps --help fast
    from refgate.memory.persistence import open_persistence, persistence_target

    # deferred: keeps --help fast
    from refgate.memory.threads import check_thread_owner, is_own_store

    settings = open_settings(ws)
    with open_persistence(settings, ws) as (checkpointer, store):
        graph = build_graph(checkpointer=checkpointer, store=store, workspace=ws, settings=settings)
        state = graph.get_state({"configurable": {"thread_id": thread}})
        values = cast("WorkbenchState", dict(state.values))  # the graph's declared state
    if not is_own_store(persistence_target(settings, ws).url, ws):
        check_thread_owner(thread, values, ws)
    return values


def _research_report(ws: Workspace, thread: str) -> dict[str, object] | None:
    from refgate.memory.persistence import stored_research_report  # deferred: keeps --help fast

    return stored_research_report(ws.state_dir, thread)


@app.command()
def report(
    thread: str = typer.Argument(..., help="The thread id of a stored run (ask or research)."),
    output: Path = typer.Option(
        ...,
        "--output",
        "-o",
        help="Report file: .md, .html (self-contained), .pdf, .docx or .json.",
    ),
    workspace: Path = typer.Option(None, "--workspace", "-w", help="Workspace folder."),
) -> None:
    """Render a stored run again as a report file (the format follows the extension)."""

    check_output(output)
    ws = open_workspace(workspace)
    try:
        values = _workbench_state(ws, thread)
    except ConfigError as exc:  # a thread of another workspace (thread owner)
        err_console.print(f"[red]{esc(exc)}[/red]")
        raise typer.Exit(EXIT_CONFIG) from None
    except Exception as exc:
        err_console.print(
            f"[red]cannot read the stored run:[/red] {type(exc).__name__}: {esc(exc)}"
        )
        raise typer.Exit(EXIT_ERROR) from None
    if values.get("answer") or values.get("refs"):
        # the same document as `refgate ask --json` (passed, unverified, usage included)
        facts = thread_run_facts(ws, thread)
        usage = turn_usage(values, facts.get("models") or {})
        record = answer_document(values, thread_id=thread, workspace=ws, usage=usage, **facts)
        done = report_written(lambda: write_run_report(output, record, ws.root), thread)
        raise typer.Exit(EXIT_OK if done else EXIT_ERROR)
    research = _research_report(ws, thread)
    if research is None:
        err_console.print(
            f"[red]no finished run stored for thread {esc(thread)}[/red] in {esc(ws.state_dir)}"
        )
        raise typer.Exit(EXIT_CONFIG)
    from refgate.nodes.research.report import to_markdown  # deferred: keeps --help fast

    try:
        written = write_research_report(output, research, to_markdown)
    except ReportError as exc:
        err_console.print(f"[red]report not written:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_ERROR) from None
    err_console.print(f"report written to {esc(written)}")

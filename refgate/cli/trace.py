"""``refgate trace THREAD``: the pass-by-pass trace of a stored run."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.common import dumps, open_settings, open_workspace, resume_command
from refgate.errors import EXIT_CONFIG


def _describe(e: dict) -> str:
    kind = e.get("type")
    if kind == "tool_call":
        refs = ", ".join(e.get("refs") or [])
        err = f" {str(e.get('error'))[:80]}" if e.get("error") else ""
        return f"{e.get('tool')} {e.get('status')}{' -> ' + refs if refs else ''}{err}"
    if kind == "model_call":
        usage = e.get("usage") or {}
        return f"model {usage.get('total_tokens', 0)} tokens; tools {e.get('tool_calls') or []}"
    if kind == "gate_verdict":
        codes = ", ".join(i.get("code", "") for i in e.get("issues") or [])
        return "passed" if e.get("passed") else f"blocked: {codes}"
    if kind in ("pass_start", "pass_end"):
        return ", ".join(
            f"{k}={v}"
            for k, v in e.items()
            if k not in ("type", "pass", "t", "plan") and v not in (None, [], {})
        )
    return ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("type", "pass", "t"))[:160]


@app.command()
def trace(
    thread: str = typer.Argument(..., help="The thread id printed by `refgate ask`."),
    workspace: Path = typer.Option(None, "--workspace", "-w", help="Workspace folder."),
    json_out: bool = typer.Option(False, "--json", help="Print the events as JSON."),
) -> None:
    """Show the pass-by-pass trace of a stored run."""
    # deferred: the graph stack loads only when this command runs, so refgate --help stays fast
    from refgate.graph import build_graph

    # deferred: keeps --help fast
    from refgate.memory.persistence import open_persistence, persistence_target

    # deferred: keeps --help fast
    from refgate.memory.threads import ForeignThread, check_thread_owner, is_own_store

    ws = open_workspace(workspace)
    settings = open_settings(ws)
    with open_persistence(settings, ws) as (checkpointer, store):
        graph = build_graph(checkpointer=checkpointer, store=store, workspace=ws, settings=settings)
        snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    try:
        if not is_own_store(persistence_target(settings, ws).url, ws):
            check_thread_owner(thread, snapshot.values, ws)
    except ForeignThread as exc:
        err_console.print(f"[red]{esc(exc)}[/red]")
        raise typer.Exit(EXIT_CONFIG) from None
    events = list(snapshot.values.get("trace") or [])
    if not events:
        err_console.print(
            f"[red]no run stored for thread {esc(thread)}[/red] in {esc(ws.state_dir)}"
        )
        raise typer.Exit(EXIT_CONFIG)
    if json_out:
        print(dumps(events))
        return
    table = Table(title=f"trace of thread {esc(thread)}")
    for col in ("time", "pass", "event", "detail"):
        table.add_column(col)
    for e in events:
        table.add_row(
            esc(str(e.get("t", ""))[11:23]),
            esc(e.get("pass", "")),
            esc(e.get("type", "")),
            esc(_describe(e)),
        )
    console.print(table)
    if snapshot.next:
        console.print(
            f"[yellow]unfinished[/yellow]: next {esc(', '.join(snapshot.next))}; "
            f"resume with {esc(resume_command(ws.root, thread))}"
        )

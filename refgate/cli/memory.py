"""``refgate memory list | show ID | forget ID | forget --untrusted``: inspect and clear the
decisions a workspace remembers (what BRIEF recalls), with each one's trust and origins."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.common import WORKSPACE_HELP, open_settings, open_workspace
from refgate.errors import EXIT_CONFIG
from refgate.memory.decisions import (
    forget_decision,
    forget_untrusted,
    get_decision,
    is_untrusted_decision,
    list_decisions,
)
from refgate.memory.persistence import open_persistence

memory_app = typer.Typer(
    name="memory",
    help="Inspect and clear the decisions a workspace remembers.",
    no_args_is_help=True,
)
app.add_typer(memory_app, name="memory")

WORKSPACE = typer.Option(None, "--workspace", "-w", help=WORKSPACE_HELP)


def _store(workspace: Path | None):
    ws = open_workspace(workspace)
    settings = open_settings(ws)
    return ws, open_persistence(settings, ws, semantic=False)


def _trust(value: dict) -> str:
    if not is_untrusted_decision(value):
        return "trusted"
    origins = (value.get("provenance") or {}).get("origins") or []
    return "untrusted (" + ", ".join(str(o) for o in origins[:3]) + ")"


@memory_app.command("list")
def list_command(workspace: Path | None = WORKSPACE) -> None:
    """List the workspace's remembered decisions, newest first, with their trust."""
    ws, persistence = _store(workspace)
    with persistence as (_, store):
        items = list_decisions(store, ws.name)
    table = Table(title=f"Decisions remembered by {ws.name} ({len(items)})")
    for col in ("id", "kind", "decision", "trust", "updated"):
        table.add_column(col)
    for it in items:
        v = it.value
        table.add_row(
            esc(it.key[:16]),
            esc(str(v.get("kind") or "lesson")),
            esc(str(v.get("decision") or "")[:80]),
            esc(_trust(v)),
            esc(str(v.get("updated_at") or v.get("created_at") or "")),
        )
    console.print(table)


@memory_app.command("show")
def show_command(key: str, workspace: Path | None = WORKSPACE) -> None:
    """Show one decision (by id or a unique id prefix) as JSON."""
    ws, persistence = _store(workspace)
    with persistence as (_, store):
        item = get_decision(store, ws.name, key)
    if item is None:
        err_console.print(f"no decision {esc(key)} in {esc(ws.name)}")
        raise typer.Exit(EXIT_CONFIG)
    console.print(esc(json.dumps({"id": item.key, **item.value}, indent=2, ensure_ascii=False)))


@memory_app.command("forget")
def forget_command(
    key: str = typer.Argument(None, help="The decision's id (or a unique id prefix)."),
    untrusted: bool = typer.Option(False, "--untrusted", help="Forget every untrusted decision."),
    workspace: Path | None = WORKSPACE,
) -> None:
    """Forget one decision, or every untrusted one (--untrusted)."""
    if bool(key) == untrusted:
        err_console.print("give a decision id, or --untrusted (not both)")
        raise typer.Exit(EXIT_CONFIG)
    ws, persistence = _store(workspace)
    with persistence as (_, store):
        if untrusted:
            n = forget_untrusted(store, ws.name)
            console.print(f"forgot {n} untrusted decision(s) of {esc(ws.name)}")
            return
        if not forget_decision(store, ws.name, key):
            err_console.print(f"no decision {esc(key)} in {esc(ws.name)}")
            raise typer.Exit(EXIT_CONFIG)
    console.print(f"forgot {esc(key)}")

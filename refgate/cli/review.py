"""``refgate review THREAD --verdict pass|fail --note TEXT`` and ``refgate audit``.

A review is a human's judgement of a stored answer, appended to the workspace's audit file; refgate
never computes pass or fail itself (human verdicts). ``audit`` lists runs newest first with the GATE's
verdict and the latest review.
"""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import typer
from rich.table import Table

from refgate.cli.app import app, console, err_console, esc, json_safe
from refgate.cli.common import WORKSPACE_HELP, open_workspace
from refgate.errors import EXIT_CONFIG, EXIT_ERROR, EXIT_OK
from refgate.memory.audit import (
    AuditError,
    ReviewRecord,
    append_review,
    list_runs,
    read_audit,
    thread_ids,
)


@app.command()
def review(
    thread: str = typer.Argument(
        ..., help="Thread id of the run you judged (see `refgate audit`)."
    ),
    verdict: str = typer.Option(..., "--verdict", help="Your judgement: pass or fail."),
    note: str = typer.Option("", "--note", help="Why: what was right or wrong in the answer."),
    workspace: Path = typer.Option(None, "--workspace", "-w", help=WORKSPACE_HELP),
    reviewer: str = typer.Option(None, "--reviewer", help="Who reviewed (default: your login)."),
) -> None:
    """Record a human review (pass or fail) of a run's answer in the audit file."""
    ws = open_workspace(workspace)
    verdict = verdict.strip().lower()
    if verdict not in ("pass", "fail"):
        err_console.print(f"[red]--verdict must be pass or fail[/red], got {esc(repr(verdict))}")
        raise typer.Exit(EXIT_CONFIG)
    known = thread_ids(ws)
    if thread not in known:
        recent = ", ".join(list(reversed(known))[:5]) or "none yet"
        err_console.print(
            f"[red]no run with thread {esc(repr(thread))}[/red] in {esc(ws.state_dir / 'audit.jsonl')}"
            f" (recent threads: {esc(recent)})"
        )
        raise typer.Exit(EXIT_ERROR)
    if reviewer is None:
        try:
            reviewer = getpass.getuser()
        except Exception:  # no login name in some containers
            reviewer = ""
    try:
        rec = append_review(ws, thread, verdict, note, reviewer=reviewer)
    except AuditError as exc:
        err_console.print(f"[red]{esc(exc)}[/red]")
        raise typer.Exit(EXIT_CONFIG) from exc
    console.print(f"review recorded: thread {esc(thread)} -> {esc(rec['verdict'])}")
    raise typer.Exit(EXIT_OK)


@app.command()
def audit(
    workspace: Path = typer.Option(None, "--workspace", "-w", help=WORKSPACE_HELP),
    limit: int = typer.Option(20, "--limit", "-n", min=0, help="Most runs shown (0: all)."),
    json_out: bool = typer.Option(False, "--json", help="Print the runs as JSON."),
) -> None:
    """List recorded runs, newest first, with the GATE's verdict and the human review."""
    ws = open_workspace(workspace)
    rows = list_runs(ws, limit=limit or None)
    unreadable = read_audit(ws).unreadable
    if json_out:
        print(json_safe(json.dumps(rows, ensure_ascii=False, default=str, indent=2)))
    elif not rows:
        console.print(f"no runs recorded yet in {esc(ws.state_dir / 'audit.jsonl')}")
    else:
        table = Table(title=f"refgate audit: {esc(ws.name)}")
        for col in ("when", "thread", "gate", "review", "note", "question"):
            table.add_column(col, overflow="fold")
        for row in rows:
            rev: ReviewRecord | dict[str, str] = row.get("review") or {}
            if row.get("kind") == "research":
                gate = f"research: {esc(row.get('status') or '?')}"
            else:
                gate = "[green]passed[/]" if row.get("gate_passed") else "[yellow]blocked[/]"
            verdict = {"pass": "[green]pass[/]", "fail": "[red]fail[/]"}.get(
                rev.get("verdict", ""), "-"
            )
            table.add_row(
                esc(str(row.get("recorded_at") or "")[:19].replace("T", " ")),
                esc(row.get("thread_id")),
                gate,
                verdict,
                esc(str(rev.get("note") or "")[:60]),
                esc(str(row.get("question") or "")[:80]),
            )
        console.print(table)
    if unreadable:
        err_console.print(
            f"[yellow]{len(unreadable)} unreadable line(s)[/] in the audit file "
            f"(lines {', '.join(map(str, unreadable[:10]))})"
        )
    raise typer.Exit(EXIT_OK)

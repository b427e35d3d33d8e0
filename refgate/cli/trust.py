"""``refgate trust [WS] [--revoke] [--list]``: let a workspace start its commands on this machine.

A workspace's refgate.toml may name programs (``[mcp.servers.NAME] command = [...]``); none
starts until the person trusts that workspace here (``refgate.trust``: per real path and a hash
of every setting that runs something). ``refgate ask`` asks at the terminal; this command does
it ahead of time, takes it back (``--revoke``) or lists what is trusted (``--list``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import IO

import typer
from rich.table import Table

from refgate.cli.app import app, console, err_console, esc
from refgate.cli.approval import ask_line
from refgate.cli.common import open_workspace
from refgate.errors import EXIT_CONFIG, EXIT_ERROR
from refgate.trust import (
    TrustError,
    commands,
    is_trusted,
    revoke,
    trust,
    trust_command,
    trust_file,
    trusted,
)
from refgate.workspace import Workspace

#: Seconds the terminal prompt of ``refgate ask`` waits for an answer (none: not trusted).
PROMPT_TIMEOUT_S = 120.0


def describe_commands(ws: Workspace) -> list[str]:
    """One line per command the workspace would start, as the person reviews it."""
    out = []
    for name, argv in commands(ws).items():
        spec = ws.mcp_servers[name]
        env = " ".join(f"{k}=..." for k, _ in spec.env)
        net = ", network" if spec.network else ""
        out.append(f"{name}: {' '.join(argv)}" + (f" (env: {env})" if env else "") + net)
    return out


def prompt_trust(ws: Workspace, stream: IO[str] | None = None) -> bool:
    """At a terminal, ask whether to trust ``ws`` (its commands shown); record a yes. Not at a
    terminal, or no answer in time: False, and the command to run is printed."""
    if is_trusted(ws):
        return True
    stdin = stream or sys.stdin
    lines = describe_commands(ws)
    err_console.print(
        f"\n[bold]workspace trust[/bold]: {esc(ws.root)} asks to start these programs "
        "(MCP servers, sandboxed):"
    )
    for shown in lines:
        err_console.print(f"  {esc(shown)}")
    if stream is None and not (stdin.isatty() and sys.stderr.isatty()):
        err_console.print(
            f"not started: the workspace is not trusted. Check them and run: "
            f"{esc(trust_command(ws))}"
        )
        return False
    err_console.print(
        f"Trust this workspace and let it start them? [y/N] "
        f"(no answer in {PROMPT_TIMEOUT_S:g} s: no) ",
        end="",
    )
    answer = ask_line(stdin, PROMPT_TIMEOUT_S)
    if answer is None or answer.strip().lower() not in ("y", "yes"):
        err_console.print(f"not trusted; later: {esc(trust_command(ws))}")
        return False
    try:
        trust(ws)
    except (TrustError, OSError) as exc:
        err_console.print(f"[red]cannot record trust:[/red] {esc(exc)}")
        return False
    return True


def _list() -> int:
    try:
        records = trusted()
    except TrustError as exc:
        err_console.print(f"[red]trust error:[/red] {esc(exc)}")
        return EXIT_CONFIG
    table = Table(title=f"Trusted workspaces ({len(records)}) in {esc(trust_file())}")
    for col in ("workspace", "commands", "trusted", "digest"):
        table.add_column(col)
    for r in records:
        cmds = "; ".join(f"{n}: {' '.join(c)}" for n, c in r.commands.items())
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.trusted_at))
        table.add_row(esc(r.path), esc(cmds[:120]), when, esc(r.digest[:19]))
    console.print(table)
    return 0


@app.command("trust")
def trust_cmd(
    workspace: Path | None = typer.Argument(
        None, help="The workspace folder (default: the nearest refgate.toml)."
    ),
    revoke_it: bool = typer.Option(
        False, "--revoke", help="Forget this workspace's trust: its commands stop starting."
    ),
    list_them: bool = typer.Option(False, "--list", help="List the trusted workspaces."),
) -> None:
    """Trust a workspace on this machine: let its commands (MCP servers) start, sandboxed."""
    if list_them:
        raise typer.Exit(_list())
    if revoke_it and workspace is not None and not (workspace / "refgate.toml").is_file():
        # a workspace that no longer loads can still be forgotten by its path
        raise typer.Exit(_revoke(workspace))
    ws = open_workspace(workspace)
    if revoke_it:
        raise typer.Exit(_revoke(ws.root))
    lines = describe_commands(ws)
    try:
        record = trust(ws)
    except (TrustError, OSError) as exc:
        err_console.print(f"[red]cannot record trust:[/red] {esc(exc)}")
        raise typer.Exit(EXIT_ERROR) from exc
    if not lines:
        console.print(f"trusted {esc(record.path)} (it names no command to start)")
        return
    console.print(f"trusted {esc(record.path)}; it may start, sandboxed:")
    for line in lines:
        console.print(f"  {esc(line)}")
    console.print("Changing these commands (or the files they run) asks for trust again.")


def _revoke(path: Path) -> int:
    try:
        was = revoke(path)
    except (TrustError, OSError) as exc:
        err_console.print(f"[red]trust error:[/red] {esc(exc)}")
        return EXIT_ERROR
    console.print(f"{'revoked' if was else 'was not trusted'}: {esc(path.resolve())}")
    return 0

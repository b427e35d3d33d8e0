"""Helpers shared by the CLI commands: workspace resolution, settings, JSON output."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer

from refgate.api.find_workspace import resolve_workspace
from refgate.cli.app import err_console, esc, json_safe
from refgate.config import ConfigError, Settings, load_settings
from refgate.errors import exit_code_for
from refgate.payloads import jsonable
from refgate.workspace import Workspace, WorkspaceError

#: The --workspace help shared by the commands.
WORKSPACE_HELP = (
    "Workspace folder (default: the nearest folder at or above the current one with a "
    "refgate.toml, else REFGATE_WORKSPACE; try examples/us-macro)."
)


def open_workspace(path: Path | None) -> Workspace:
    """The ``--workspace`` folder, else the nearest refgate.toml at or above the current folder,
    else ``REFGATE_WORKSPACE``; exit 2 with a clear message (pointing at ``refgate init`` and the
    sample) when there is none or it is invalid. Nothing is written."""
    try:
        return resolve_workspace(path)
    except WorkspaceError as exc:
        err_console.print(f"[red]workspace error:[/red] {esc(exc)}")
        raise typer.Exit(exit_code_for(exc)) from exc


def open_settings(workspace: Workspace | None, **overrides: object) -> Settings:
    """Settings from the environment and the workspace, or exit 2 with the problem named."""
    try:
        settings = load_settings(workspace_settings=workspace.settings if workspace else None)
    except ConfigError as exc:
        err_console.print(f"[red]configuration error:[/red] {esc(exc)}")
        raise typer.Exit(exit_code_for(exc)) from exc
    return settings.with_overrides(**overrides)


def dumps(value: object) -> str:
    return json_safe(json.dumps(jsonable(value), ensure_ascii=False, default=str, indent=2))


def resume_command(workspace: Path, thread: str) -> str:
    """The command that resumes ``thread`` from any folder (the workspace named)."""
    return f"refgate ask --workspace {shlex.quote(str(workspace))} --thread {shlex.quote(thread)}"

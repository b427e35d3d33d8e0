"""Threads belong to a workspace (thread owner).

A thread records the identity of the workspace that started it in its ``owner`` channel
(written by BRIEF on the thread's first run, then only compared). Every reader of a stored
thread checks it before anything of the thread is used or shown: ``refgate ask --thread``,
``refgate trace``, ``refgate report``, ``refgate.ask`` (so ``refgate mcp``'s ``ask``) and, in a
served graph, BRIEF itself. Two workspaces that share one ``REFGATE_DATABASE_URL`` share the
checkpoint tables; without this, a thread id from one would open the other's conversation.

A workspace's identity is its resolved folder (``workspace_identity``). Threads stored before
the owner channel existed are judged by their last run's ``workspace`` input.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from refgate.config import ConfigError

if TYPE_CHECKING:
    from refgate.workspace import Workspace

#: The state channel that holds the owner's identity.
OWNER_CHANNEL = "owner"


class ForeignThread(ConfigError):
    """A thread id that belongs to another workspace (the CLI exits 2, MCP answers a tool error).

    The message never names the other workspace: a client of one workspace learns nothing of
    another's."""


def workspace_identity(workspace: Workspace | None) -> str:
    """The identity a thread records: the workspace's resolved folder ("" for none)."""
    return str(Path(workspace.root).resolve()) if workspace is not None else ""


def thread_owner(values: Mapping[str, object]) -> str | None:
    """The identity of the workspace a stored thread belongs to; None for a new thread (or one
    stored before threads had owners that never named a workspace: the next run claims it)."""
    owner = values.get(OWNER_CHANNEL)
    if isinstance(owner, str):
        return owner
    legacy = values.get("workspace")
    if isinstance(legacy, str) and legacy.strip():
        return str(Path(legacy).expanduser().resolve())
    return None


def check_thread_owner(
    thread_id: str, values: Mapping[str, object], workspace: Workspace | None
) -> None:
    """Refuse (``ForeignThread``) a stored thread that another workspace started."""
    owner = thread_owner(values)
    if owner is None or owner == workspace_identity(workspace):
        return
    where = f"workspace {workspace.root}" if workspace is not None else "a run without a workspace"
    raise ForeignThread(
        f"thread {thread_id!r} belongs to another workspace; it cannot be read or continued from "
        f"{where}. Ask in the workspace that started it, or start a new thread (omit --thread)"
    )


def foreign_input_pending(values: Mapping[str, object]) -> bool:
    """True when the thread's pending step is an input that BRIEF refused (a served client of
    another workspace named this thread): its owner may start a new question over it."""
    owner = values.get(OWNER_CHANNEL)
    named = values.get("workspace")
    if not isinstance(owner, str) or not isinstance(named, str) or not named.strip():
        return False
    return str(Path(named).expanduser().resolve()) != owner


def is_own_store(target_url: str, workspace: Workspace | None) -> bool:
    """True when the checkpoints live in ``workspace``'s own SQLite file (the default): every
    thread in it is the workspace's, even after the folder was moved or renamed."""
    if workspace is None:
        return False
    try:
        Path(target_url).resolve().relative_to(Path(workspace.state_dir).resolve())
    except ValueError:
        return False
    return True

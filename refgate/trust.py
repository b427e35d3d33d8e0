"""Workspace trust: a workspace's commands run only after the person trusts it on this machine.

A workspace folder may come from anywhere (a download, a colleague's archive), and its
refgate.toml may name programs to start (``[mcp.servers.NAME] command = [...]``). As editors do
with workspace trust, refgate starts none of them until the person says so, once per machine:
``refgate trust WS`` (or yes at the terminal prompt of ``refgate ask``). The record is kept
outside the workspace (``trust_file``: ``$REFGATE_TRUST_FILE``, else
``$XDG_CONFIG_HOME/refgate/trusted-workspaces.json``), per real path AND ``commands_digest``:
the SHA-256 of every setting that runs something (each command server's name, command, env and
network switch) and of the workspace files its command names (``fx.sh``). Changing any of them
after trusting asks for trust again. A workspace without commands needs no trust.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from refgate.errors import SettingsError

if TYPE_CHECKING:
    from refgate.workspace import Workspace

#: Environment variable naming the trust file (tests, several profiles on one machine).
TRUST_FILE_ENV = "REFGATE_TRUST_FILE"
#: Largest workspace file named by a command whose content joins the digest.
MAX_HASHED_FILE = 64 << 20


class TrustError(SettingsError, ValueError):
    """The trust file cannot be read or written."""


def trust_file() -> Path:
    """Where trusted workspaces are recorded (outside every workspace)."""
    given = os.environ.get(TRUST_FILE_ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "refgate" / "trusted-workspaces.json"


def _file_digest(root: Path, part: str) -> str | None:
    """The content hash of a workspace file a command names (``fx.sh``, ``server.py``)."""
    candidate = (root / part).resolve() if not os.path.isabs(part) else Path(part).resolve()
    try:
        candidate.relative_to(root.resolve())
    except ValueError:
        return None  # a program outside the workspace (sh, python): its path is in the digest
    if not candidate.is_file() or candidate.stat().st_size > MAX_HASHED_FILE:
        return None
    return hashlib.sha256(candidate.read_bytes()).hexdigest()


def commands(ws: Workspace) -> dict[str, list[str]]:
    """The commands the workspace would start: ``{server: argv}``."""
    return {name: list(s.command) for name, s in sorted(ws.mcp_servers.items()) if s.command}


def commands_digest(ws: Workspace) -> str:
    """SHA-256 of every setting of ``ws`` that runs something, and of the files it runs."""
    body = [
        {
            "server": name,
            "command": list(spec.command),
            "env": [list(kv) for kv in spec.env],
            "network": spec.network,
            "files": {p: _file_digest(ws.root, p) for p in spec.command},
        }
        for name, spec in sorted(ws.mcp_servers.items())
        if spec.command
    ]
    text = json.dumps(body, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TrustRecord:
    """One trusted workspace: its real path, the digest trusted, when, and what it runs."""

    path: str
    digest: str
    trusted_at: float
    commands: dict[str, list[str]]


def _read(path: Path) -> list[TrustRecord]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise TrustError(f"cannot read the trust file {path}: {exc}") from None
    rows = raw.get("workspaces") if isinstance(raw, dict) else None
    if not isinstance(rows, list):
        raise TrustError(f"the trust file {path} is not a refgate trust file")
    out = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        p, d = row.get("path"), row.get("digest")
        cmds = row.get("commands")
        if isinstance(p, str) and isinstance(d, str):
            when = row.get("trusted_at")
            out.append(
                TrustRecord(
                    p,
                    d,
                    float(when) if isinstance(when, int | float) else 0.0,
                    cmds if isinstance(cmds, dict) else {},
                )
            )
    return out


def _write(path: Path, records: list[TrustRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = {
        "workspaces": [
            {"path": r.path, "digest": r.digest, "trusted_at": r.trusted_at, "commands": r.commands}
            for r in records
        ]
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trust-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=2, ensure_ascii=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _key(ws_or_path: Workspace | Path | str) -> str:
    root = ws_or_path if isinstance(ws_or_path, str | Path) else ws_or_path.root
    return str(Path(root).resolve())


def trusted(path: Path | None = None) -> list[TrustRecord]:
    """Every trusted workspace recorded on this machine."""
    return _read(path or trust_file())


def is_trusted(ws: Workspace) -> bool:
    """Trusted: this workspace's real path with exactly its current commands, or it has none."""
    if not commands(ws):
        return True
    digest, key = commands_digest(ws), _key(ws)
    try:
        return any(r.path == key and r.digest == digest for r in trusted())
    except TrustError:
        return False


def trust(ws: Workspace) -> TrustRecord:
    """Record ``ws`` (its real path and its current commands) as trusted on this machine."""
    path = trust_file()
    record = TrustRecord(_key(ws), commands_digest(ws), time.time(), commands(ws))
    kept = [r for r in _read(path) if r.path != record.path]
    _write(path, [*kept, record])
    return record


def revoke(ws_or_path: Workspace | Path | str) -> bool:
    """Forget a workspace's trust; True when it was trusted."""
    path, key = trust_file(), _key(ws_or_path)
    records = _read(path)
    kept = [r for r in records if r.path != key]
    if len(kept) != len(records):
        _write(path, kept)
    return len(kept) != len(records)


def trust_command(ws: Workspace) -> str:
    """The command that trusts ``ws`` (named in every refusal)."""
    return f"refgate trust {shlex.quote(str(ws.root))}"


def untrusted_reason(ws: Workspace) -> str | None:
    """Why ``ws``'s commands may not start now, else None."""
    if is_trusted(ws):
        return None
    changed = any(r.path == _key(ws) for r in _safe_trusted())
    what = ", ".join(f"{n}: {' '.join(c)}" for n, c in commands(ws).items())
    why = (
        "its commands changed since it was trusted"
        if changed
        else "this workspace is not trusted on this machine"
    )
    return (
        f"the workspace's MCP server commands ({what[:300]}) do not start: {why}. A workspace "
        f"may come from anywhere; to let it run them, check them and run: {trust_command(ws)}"
    )


def _safe_trusted() -> Iterator[TrustRecord]:
    with contextlib.suppress(TrustError):
        yield from trusted()

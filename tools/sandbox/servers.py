"""How a workspace's server command runs: inside bubblewrap, like RunPython's code.

A ``[mcp.servers.NAME] command`` is a program the workspace names, started only once the person
trusts the workspace (``refgate.trust``). Even then it runs confined (``server_argv``):

- **no parent environment, and no way to read it**: ``--clearenv`` (only ``PATH``, ``LANG``,
  ``HOME=/tmp`` and the server's own ``env``), its own PID namespace with a fresh ``/proc``, so
  ``/proc/$PPID/environ`` is bubblewrap's minimal init, never refgate's (with its API keys);
- **the workspace read-only** at its own path (the working folder), its ``.refgate`` state
  (checkpoints, audit, index) hidden under an empty tmpfs; ``/usr``, the Python installation(s),
  the files the command names by absolute path, and a private ``/tmp``; nothing of the home
  folder. It writes only its own state folder (``.refgate/mcp/<name>/``, ``$REFGATE_SERVER_STATE``);
- **no network** (its own empty network namespace) unless the server sets ``network = true``;
- its own IPC and UTS namespaces and session.

``REFGATE_SANDBOX=rlimits`` (the weaker mode, chosen explicitly) starts the command as is.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from refgate.tools.sandbox.confine import (
    _parents,
    _python_roots,
    _system_binds,
    find_bwrap,
)
from refgate.tools.sandbox.errors import SandboxUnavailable

#: The variable naming the server's writable folder inside the sandbox.
STATE_ENV = "REFGATE_SERVER_STATE"
#: The environment a server starts with, before its own ``env``.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}
#: Files a server with ``network = true`` needs to resolve names and check certificates.
NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def server_argv(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] = {},
    network: bool = False,
    state: Path | None = None,
) -> list[str]:
    """The bubblewrap command line running ``command`` confined (see the module doc);
    ``state``: the one folder it may write (created; ``$REFGATE_SERVER_STATE`` inside)."""
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxUnavailable(
            "the workspace's MCP server does not start: bubblewrap (bwrap) is not installed, so "
            "it cannot be confined. Install it (Debian/Ubuntu: apt-get install bubblewrap), or "
            "set REFGATE_SANDBOX=rlimits to start servers unconfined."
        )
    root = os.path.realpath(cwd)
    program = command[0] if command else ""
    found = (
        os.path.exists(os.path.join(root, program))
        if os.sep in program
        else shutil.which(program, path=BASE_ENV["PATH"]) is not None
    )
    if not found:
        raise FileNotFoundError(f"no program {program!r} (on {BASE_ENV['PATH']} or in {root})")
    argv = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--new-session", "--clearenv", "--hostname", "mcp-server"]
    extra = dict(env)
    if state is not None:
        state.mkdir(parents=True, exist_ok=True)
        extra[STATE_ENV] = os.path.realpath(state)
    for key, value in {**BASE_ENV, **extra}.items():
        argv += ["--setenv", key, value]
    argv += _system_binds()
    if network:
        for path in NETWORK_FILES:
            if os.path.exists(path):
                argv += ["--ro-bind", path, path]
    argv += ["--tmpfs", "/tmp"]
    binds = [(r, r) for r in _python_roots()]
    binds.append((root, root))
    # files the command names by absolute path (its script), read-only; never a folder
    inside = [r for r, _ in binds] + ["/usr", "/bin", "/lib", "/lib64", "/sbin"]
    for path in dict.fromkeys(p for p in command if os.path.isabs(p) and os.path.isfile(p)):
        if not any(_under(c, r) for c in (path, os.path.realpath(path)) for r in inside):
            binds.append((path, path))
    for parent in _parents(dest for _, dest in binds):
        argv += ["--perms", "0755", "--dir", parent]
    for src, dest in binds:
        argv += ["--ro-bind", src, dest]
    hidden = os.path.join(root, ".refgate")
    if os.path.isdir(hidden):
        argv += ["--tmpfs", hidden]  # checkpoints, audit and index stay refgate's
    if state is not None:
        argv += ["--bind", extra[STATE_ENV], extra[STATE_ENV]]
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", root]
    return [*argv, "--", *command]

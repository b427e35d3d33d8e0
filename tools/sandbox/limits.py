"""Host side of the per-call limits: the ``Limits`` a worker is given, the uid its calls run as,
and the rlimits frame sent with each call (the child applies it: ``worker/limits.py``)."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any

from refgate.tools.sandbox.errors import SandboxError

#: When the host runs as root, each worker's calls run as a uid of their own from this range (no
#: account needed). RLIMIT_NPROC counts a uid's processes machine-wide: under a uid shared with
#: every other sandbox (nobody), a call's process limit moved with how many processes the others
#: ran at that moment (a flood got 89 processes against a limit of 80 when theirs exited), and
#: one sandbox's processes could signal another's.
PRIVATE_UIDS = range(600_000, 1_600_000)


@dataclass(frozen=True)
class Limits:
    """Per-call resource limits."""

    memory_mb: int = 2048  # RLIMIT_AS of the call's process (the template is ~350 MB of it)
    extra_processes: int = 64  # RLIMIT_NPROC headroom above what the uid already runs
    file_mb: int = 64  # RLIMIT_FSIZE: largest file the code may write
    open_files: int = 256  # RLIMIT_NOFILE
    scratch_mb: int = 256  # size of the tmpfs holding the scratch dirs (bubblewrap)
    output_bytes: int = 64 * 1024  # stdout/stderr kept per stream; the rest is counted, dropped


def count_uid_processes(uid: int) -> int:
    """How many processes run as ``uid`` on this machine now."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


def private_uid() -> int:
    """A uid of ``PRIVATE_UIDS`` that runs no process now (drawn at random: two hosts starting
    workers at once do not pick the same one in practice)."""
    for _ in range(32):
        uid = PRIVATE_UIDS[secrets.randbelow(len(PRIVATE_UIDS))]
        if count_uid_processes(uid) == 0:
            return uid
    raise SandboxError("no free sandbox uid found (32 draws from the private range were in use)")


def limits_frame(limits: Limits, uid: int | None, timeout: float) -> dict[str, Any]:
    """The rlimits of one call: CPU seconds from its timeout, the process limit above what the
    call's uid (``uid``, else the host's own) already runs."""
    cpu = int(timeout) + 1
    nproc_base = count_uid_processes(uid if uid is not None else os.getuid())
    return {
        "cpu": [cpu, cpu + 1],
        "as": limits.memory_mb << 20,
        "fsize": limits.file_mb << 20,
        "nofile": limits.open_files,
        "nproc": nproc_base + limits.extra_processes,
    }

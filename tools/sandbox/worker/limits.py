"""Limits and cleanup for the calls the template forks: prctl flags, rlimits, and the sweep that
kills and reaps every process a call left behind. Standard library only."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

_libc = None


def prctl(option: int, arg: int) -> bool:
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.prctl(option, arg, 0, 0, 0) == 0


def status_kb(field: str) -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children() -> list[int]:
    me = os.getpid()
    try:  # direct children from the kernel (no scan of a host's whole /proc in rlimits mode)
        found = []
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children") as fh:
                found += [int(p) for p in fh.read().split()]
        return found
    except (OSError, ValueError):
        pass
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(entry))
    return found


def reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def sweep(pgid: int, pidns: bool = False) -> int:
    """Kill every process the call left behind; return how many were killed."""
    killed = 0
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        if pidns:
            # Alone in our PID namespace with init: -1 reaches exactly the call's processes.
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        kids = children()
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        reap_all()
        if not kids and not children():
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return killed
        time.sleep(0.002)
    return killed


def set_limits(limits: dict) -> None:
    def cap(which, value):
        if value is None:
            return
        soft, hard = (value, value) if not isinstance(value, list) else value
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))

    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_CPU, limits.get("cpu"))
    cap(resource.RLIMIT_AS, limits.get("as"))
    cap(resource.RLIMIT_FSIZE, limits.get("fsize"))
    cap(resource.RLIMIT_NOFILE, limits.get("nofile"))
    cap(resource.RLIMIT_NPROC, limits.get("nproc"))

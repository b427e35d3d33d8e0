"""Helpers for the sandbox tests (imported by name; conftest puts this folder on sys.path)."""

import os
import shutil
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "us-macro"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` on the host (by walking /proc parent links)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields and fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    out, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == current]
        out += kids
        frontier += kids
    return out


def worker_process(worker) -> int:
    """Host pid of the Python template (below bwrap's own processes)."""
    for pid in [worker.proc.pid, *descendants(worker.proc.pid)]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if b"bwrap" not in argv[0] and any(b"worker.template" in a for a in argv):
            return pid
    raise AssertionError("no sandbox worker process found")


def call_processes(worker) -> list[int]:
    """Processes left over from calls: everything below the template process."""
    return descendants(worker_process(worker))

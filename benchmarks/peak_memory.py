"""Peak memory of a command: its own process and its whole process tree (Linux, from /proc).

Samples the resident memory (VmRSS) of the command and of every process below it (the embedded
model server, the sandbox's workers) every 0.2 s, and prints the peak of the command alone and of
the tree's sum, with the command's exit code and time.

    .venv/bin/python benchmarks/peak_memory.py -- .venv/bin/refgate ask -w examples/us-macro "..."
    .venv/bin/python benchmarks/peak_memory.py -- .venv/bin/refgate eval QUESTIONS -c 2
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def tree(pid: int) -> list[int]:
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += children(p)
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        parser.error("give a command after --")
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    own = total = 0
    while proc.poll() is None:
        own = max(own, rss_kib(proc.pid))
        total = max(total, sum(rss_kib(p) for p in tree(proc.pid)))
        time.sleep(0.2)
    took = time.perf_counter() - started
    print(
        f"exit {proc.returncode} in {took:.0f} s; peak RSS: the command {own / 1024:.0f} MB, "
        f"its process tree {total / 1024:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

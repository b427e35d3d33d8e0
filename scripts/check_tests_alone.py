"""Run a sample of test files, each alone in its own pytest process.

A test file must pass on its own, whatever other files a worker imported before it (a file that
passes only after another registered something is a hidden dependency). Running all of them
alone takes long, so CI runs a sample: ``--sample N`` files drawn by a seed (default: the HEAD
commit, so each commit checks another sample and a failure reproduces). ``--all`` runs every file.

    .venv/bin/python scripts/check_tests_alone.py --sample 3
    .venv/bin/python scripts/check_tests_alone.py --all
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_files() -> list[Path]:
    return sorted(p.relative_to(REPO) for p in (REPO / "tests").rglob("test_*.py"))


def seed_of_head() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or "no-git"


def run_alone(path: Path, timeout: float) -> tuple[bool, str]:
    """(passed, last line) of ``pytest path`` in a fresh process (no xdist, no cache)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", str(path)]
    try:
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    lines = (out.stdout or out.stderr).strip().splitlines()
    # exit 5: every test of the file was deselected or skipped here (no PostgreSQL, no browser)
    return out.returncode in (0, 5), lines[-1] if lines else f"exit {out.returncode}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=3, help="how many files (default 3)")
    parser.add_argument("--seed", default=None, help="the draw's seed (default: HEAD's commit)")
    parser.add_argument("--all", action="store_true", help="run every test file alone")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per file")
    args = parser.parse_args()
    files = test_files()
    seed = args.seed or seed_of_head()
    chosen = files if args.all else random.Random(seed).sample(files, min(args.sample, len(files)))
    print(
        f"[alone] {len(chosen)} of {len(files)} test files, each in its own process (seed {seed})"
    )
    failed = []
    for path in chosen:
        start = time.monotonic()
        ok, last = run_alone(path, args.timeout)
        print(
            f"[alone] {'ok  ' if ok else 'FAIL'} {path} ({time.monotonic() - start:.0f} s): {last}"
        )
        if not ok:
            failed.append(path)
    if failed:
        print(f"[alone] {len(failed)} file(s) fail when run alone: {', '.join(map(str, failed))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Check that commit subjects stay at 72 characters or fewer.

Subjects are read from ``git log`` for the commits after ``FIRST_CHECKED_AFTER`` (the history
before it predates the rule). In a clone that lacks that commit (a shallow one), the commits the
clone has are checked. Exit 1 lists the offending commits.

    .venv/bin/python scripts/check_commit_subjects.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMIT = 72
#: The last commit before CI checked the rule (it landed with this round's merges, which hold 11
#: longer subjects); older subjects are history.
FIRST_CHECKED_AFTER = "597cadd"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, encoding="utf-8", check=False
    )


def subjects() -> list[tuple[str, str]]:
    """(short hash, subject) of each commit the rule covers, newest first."""
    if _git("rev-parse", "--git-dir").returncode != 0:
        return []
    known = _git("cat-file", "-e", f"{FIRST_CHECKED_AFTER}^{{commit}}").returncode == 0
    span = [f"{FIRST_CHECKED_AFTER}..HEAD"] if known else ["HEAD"]
    out = _git("log", "--format=%h%x00%s", *span).stdout
    pairs = (line.partition("\0") for line in out.splitlines())
    return [(sha, subject) for sha, sep, subject in pairs if sep]


def main() -> int:
    long = [(h, s) for h, s in subjects() if len(s) > LIMIT]
    for h, s in long:
        print(f"{h}: subject is {len(s)} characters (at most {LIMIT}): {s}", file=sys.stderr)
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())

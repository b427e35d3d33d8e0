"""Comments name a rule by its glossary name (docs/architecture.md), never a document outside
the repository ("seed 000" and the like)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("refgate", "graph", "nodes", "tools", "retrieval", "tests", "benchmarks", "scripts")
OUTSIDE = re.compile(r"\bseeds? 0\d\d\b", re.IGNORECASE)


def outside_references(root: Path = REPO) -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if path.resolve() == Path(__file__).resolve():
                continue  # this check's own examples
            text = path.read_text(encoding="utf-8")
            for n, line in enumerate(text.splitlines(), 1):
                if OUTSIDE.search(line):
                    found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return found


def test_no_comment_cites_a_document_outside_the_repository():
    assert outside_references() == []


def test_the_check_sees_one(tmp_path):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "x.py").write_text("# the whitelist (Seed 000)\nX = 1\n")
    assert outside_references(tmp_path) == ["tools/x.py:1: # the whitelist (Seed 000)"]


def test_the_glossary_defines_the_rules_comments_use():
    glossary = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for term in ("| B1 |", "| B2 |", "| B3 |", "| B4 |", "| B5 |", "| trust |", "| authority |"):
        assert term in glossary

"""Real text used as negatives: FOMC statements and minutes (in the repo) and TAT-QA dev
paragraphs (tests/data/provenance, CC BY 4.0, see SOURCE.txt)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATEMENTS = ROOT / "examples" / "us-macro" / "documents"
MINUTES = ROOT / "examples" / "us-macro" / "web" / "minutes"
TATQA = ROOT / "tests" / "data" / "provenance" / "tatqa_dev_paragraphs.jsonl"


def fomc_files() -> list[tuple[str, str]]:
    files = sorted(STATEMENTS.glob("*.txt")) + sorted(MINUTES.glob("*.txt"))
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]


def fomc_paragraphs() -> list[tuple[str, str]]:
    """Every paragraph of every statement (blank-line separated); minutes are one line each."""
    out = []
    for name, text in fomc_files():
        for i, para in enumerate(re.split(r"\n\s*\n", text)):
            if para.strip():
                out.append((f"{name}#{i}", para))
    return out


def tatqa_paragraphs() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in TATQA.read_text(encoding="utf-8").splitlines() if line]
    return [(r["uid"], r["text"]) for r in rows]

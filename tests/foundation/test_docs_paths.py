"""Every repository path the docs name exists, and the two pages meant to be read first stay
short: README.md at most 150 lines, docs/architecture.md (the one-screen map) at most 120."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Top-level folders and files whose paths the docs may name.
ROOTS = (
    "refgate",
    "graph",
    "nodes",
    "tools",
    "retrieval",
    "skills",
    "tests",
    "benchmarks",
    "scripts",
    "examples",
    "docs",
    ".ci",
)
#: A path in backquotes or a markdown link: a root folder, then path characters.
PATH = re.compile(
    r"(?:`|\]\()(?:\./)?((?:" + "|".join(re.escape(r) for r in ROOTS) + r")/[\w./*<>-]*)"
)


def docs() -> list[Path]:
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]


def named_paths(text: str) -> list[str]:
    """Paths ``text`` names: placeholders (``<pass>``) and globs are checked up to the first."""
    found = []
    for match in PATH.finditer(text):
        path = match.group(1).rstrip(".,;:")
        concrete = re.split(r"[<*]", path, maxsplit=1)[0]
        if concrete.endswith("/") or "/" not in concrete.rstrip("/"):
            concrete = concrete.rstrip("/")
        else:
            concrete = concrete if path == concrete else concrete.rsplit("/", 1)[0]
        found.append(concrete)
    return found


def missing_paths() -> list[str]:
    return [
        f"{doc.relative_to(REPO)}: {path}"
        for doc in docs()
        for path in named_paths(doc.read_text(encoding="utf-8"))
        if not (REPO / path).exists()
    ]


def test_every_path_the_docs_name_exists():
    assert missing_paths() == []


def test_the_check_reads_paths_placeholders_and_links():
    text = "see `nodes/<pass>_prompt.md`, [x](docs/gate.md) and `refgate/nope.py`."
    assert named_paths(text) == ["nodes", "docs/gate.md", "refgate/nope.py"]


def test_the_first_pages_stay_short():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 150
    assert len((REPO / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()) <= 120

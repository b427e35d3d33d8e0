"""Fixtures of the graph tests over a small workspace of their own (BRIEF, HARVEST and memory
tests share them): scripted settings and a one-dataset workspace. A module (or folder conftest)
opts in with ``from tests.support.graph_fixtures import settings, workspace``; its ``settings``
differs from tests/conftest.py's in one field: ``memory_min_score=0``, as these tests embed
with HashingEmbeddings."""

from pathlib import Path

import pytest

from refgate.config import Settings

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "us-macro"


@pytest.fixture
def settings() -> Settings:
    """Settings that never reach a network model (tests inject scripted models)."""
    # memory_min_score is calibrated on MiniLM cosines; these tests embed with HashingEmbeddings
    # (tests/memory/test_memory_containment.py checks the threshold with MiniLM)
    return Settings(
        model="scripted", api_key="test-key", work_max_rounds=4, max_rounds=3, memory_min_score=0
    )


@pytest.fixture
def workspace(tmp_path):
    """A small workspace of its own (so .refgate/ state never lands in the sample)."""
    from refgate.workspace import load_workspace

    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "data" / "macro.csv").write_text("year,quarter,realgdp\n2009,3,12990.341\n")
    (root / "NOTES.md").write_text("realgdp is in billions of chained 2005 dollars.\n")
    (root / "refgate.toml").write_text(
        'name = "ws-a"\n[datasets.macro]\npath = "data/macro.csv"\n'
        'description = "US quarterly macro"\n'
    )
    return load_workspace(root)

"""``refgate index`` killed midway (SIGKILL) resumes without redoing finished documents.

Each test runs the real command in a child process, kills it with SIGKILL once some work is
committed and not all, runs the command again to the end, and checks the caches' stamps (the
SQLite ``rowid`` of each cached parse and vector: a parse or a vector written again gets a new
one) and that the index equals a clean build of the same folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from refgate.retrieval import DocumentIndex, index_dir
from refgate.retrieval.index_files import CACHE, MANIFEST
from refgate.retrieval.parse_cache import FILE_NAME
from refgate.workspace import load_workspace
from tests.support.docfiles import write_scanned_pdf
from tests.support.ocr import requires_ocr

SCANS = 4
STATEMENTS = Path(__file__).resolve().parents[3] / "shared/data/fomc-statements/statements"


def stamps(db: Path, sql: str) -> dict[tuple[str, ...], int]:
    """``sql``'s rows (key columns, then rowid) from ``db``; empty while it is not there."""
    if not db.is_file():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return {tuple(row[:-1]): row[-1] for row in conn.execute(sql)}
    except sqlite3.OperationalError:  # created, table not there yet (or locked a moment)
        return {}


def parses(ws_root: Path) -> dict[tuple[str, ...], int]:
    return stamps(ws_root / ".refgate" / FILE_NAME, "SELECT source, rowid FROM parsed")


def vectors(ws_root: Path) -> dict[tuple[str, ...], int]:
    db = ws_root / ".refgate" / "index" / CACHE
    return stamps(db, "SELECT model, hash, rowid FROM vectors")


def workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refgate.toml").write_text(
        'name = "resume"\n[documents]\npath = "documents"\n', encoding="utf-8"
    )
    return root


def index_cmd(root: Path) -> list[str]:
    return [sys.executable, "-c", "from refgate.cli import app; app()", "index", "-w", str(root)]


def kill_when(root: Path, ready: Callable[[], bool], timeout: float = 240) -> None:
    """Run ``refgate index`` on ``root`` and SIGKILL it as soon as ``ready()``."""
    proc = subprocess.Popen(index_cmd(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while not ready() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"


def run_to_end(root: Path) -> None:
    res = subprocess.run(index_cmd(root), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]


def assert_same_index(a: Path, b: Path) -> None:
    """The two workspaces' FAISS indexes hold the same chunks and the same vectors."""
    first = DocumentIndex.load(index_dir(load_workspace(a)))
    second = DocumentIndex.load(index_dir(load_workspace(b)))
    assert [(c.chunk_id, c.text) for c in first.chunks] == [
        (c.chunk_id, c.text) for c in second.chunks
    ]
    assert first.faiss_index is not None and second.faiss_index is not None
    np.testing.assert_allclose(
        first.faiss_index.reconstruct_n(0, first.faiss_index.ntotal),
        second.faiss_index.reconstruct_n(0, second.faiss_index.ntotal),
        atol=1e-6,
    )


def clean_build_of(root: Path, tmp_path: Path) -> Path:
    """A fresh workspace with a copy of ``root``'s documents, indexed to the end."""
    clean = workspace(tmp_path / "clean")
    shutil.copytree(root / "documents", clean / "documents")
    run_to_end(clean)
    return clean


@requires_ocr
def test_a_run_killed_while_parsing_resumes_without_parsing_finished_files(tmp_path):
    root = workspace(tmp_path / "ws")
    (root / "documents").mkdir()
    for n in range(SCANS):  # image-only pages: each file takes seconds (OCR)
        write_scanned_pdf(root / "documents" / f"scan{n}.pdf", pages=2)
    kill_when(root, lambda: len(parses(root)) >= 1)
    finished = parses(root)
    assert 1 <= len(finished) < SCANS, finished  # killed midway, some files done
    assert not (root / ".refgate/index" / MANIFEST).exists()

    run_to_end(root)
    after = parses(root)
    assert {k: after[k] for k in finished} == finished  # finished files were not parsed again
    assert len(after) == SCANS
    assert_same_index(root, clean_build_of(root, tmp_path))


@pytest.mark.skipif(not STATEMENTS.is_dir(), reason="needs ../shared/data/fomc-statements")
def test_a_run_killed_while_embedding_resumes_without_embedding_finished_batches(tmp_path):
    root = workspace(tmp_path / "ws")
    (root / "documents").mkdir()
    for statement in sorted(STATEMENTS.glob("*.txt"))[-30:]:  # real FOMC statements
        shutil.copy(statement, root / "documents" / statement.name)
    kill_when(root, lambda: len(vectors(root)) >= 1)
    parsed, embedded = parses(root), vectors(root)
    assert len(parsed) == 30 and embedded  # every file parsed, some vectors committed
    assert not (root / ".refgate/index" / MANIFEST).exists()  # killed before the index

    run_to_end(root)
    after_parses, after_vectors = parses(root), vectors(root)
    assert after_parses == parsed  # nothing parsed again
    assert {k: after_vectors[k] for k in embedded} == embedded  # nothing embedded again
    assert len(after_vectors) > len(embedded)  # the rest was embedded on the second run
    assert_same_index(root, clean_build_of(root, tmp_path))


def test_stamps_change_when_a_row_is_written_again(tmp_path):
    """The stamp the tests read: INSERT OR REPLACE gives a row a new rowid."""
    db = tmp_path / "t.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE parsed (source TEXT PRIMARY KEY, parts BLOB)")
        conn.execute("INSERT OR REPLACE INTO parsed VALUES ('a', x'00')")
        conn.execute("INSERT OR REPLACE INTO parsed VALUES ('b', x'00')")
    before = stamps(db, "SELECT source, rowid FROM parsed")
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT OR REPLACE INTO parsed VALUES ('a', x'01')")
    after = stamps(db, "SELECT source, rowid FROM parsed")
    assert after[("a",)] != before[("a",)] and after[("b",)] == before[("b",)]
    os.remove(db)

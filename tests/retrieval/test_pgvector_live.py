"""The pgvector index shared and live, with real ``refgate index`` processes (MiniLM) against a
real PostgreSQL with pgvector (``REFGATE_TEST_PGVECTOR_URL``):

- two ``refgate index`` processes and a reader at once: every snapshot the reader takes holds
  whole documents only, its searches answer throughout, and the final index holds every
  document once;
- ``kill -9`` in the middle of indexing leaves whole documents only, and the next run finishes
  without redoing them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from refgate.retrieval.chunking import chunk_documents
from refgate.retrieval.documents import workspace_documents
from refgate.retrieval.pgvector.connection import connect
from refgate.retrieval.pgvector.index import PgIndex
from refgate.retrieval.pgvector.schema import Tables, registry_rows
from refgate.workspace import load_workspace
from tests.support.pgvector import PGVECTOR_URL, index_invariants, requires_pgvector

FOMC = Path(__file__).resolve().parents[2] / "examples" / "us-macro" / "documents"
pytestmark = [
    pytest.mark.postgres,
    requires_pgvector,
]


def workspace(root: Path, name: str, files: int) -> Path:
    (root / "documents").mkdir(parents=True)
    for path in sorted(FOMC.glob("*.txt"))[:files]:
        shutil.copy(path, root / "documents" / path.name)
    (root / "refgate.toml").write_text(
        f'name = "live"\n[documents]\npath = "documents"\ndate_from_filename = "%Y%m%d"\n'
        f'[index]\nbackend = "pgvector"\ndsn = "env:REFGATE_INDEX_DSN"\nname = "{name}"\n',
        encoding="utf-8",
    )
    return root


def start_index(ws: Path) -> subprocess.Popen[str]:
    """``refgate index --json`` on ``ws`` (stderr, its progress bars, to a file: a full pipe
    would stop the writer)."""
    env = {
        **os.environ,
        "REFGATE_INDEX_DSN": PGVECTOR_URL,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "refgate.cli", "index", "-w", str(ws), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(ws / f"index-{time.monotonic_ns()}.log", "w"),  # noqa: SIM115
        text=True,
    )


def indexed(conn, name: str) -> int:
    rows = registry_rows(conn, name)
    if not rows:
        return 0
    t = Tables(rows[0]["prefix"])
    row = conn.execute(f'SELECT count(*) FROM "{t.name("docs")}"').fetchone()
    return int(row[0]) if row else 0


def expected_chunks(ws: Path) -> dict[str, int]:
    docs = workspace_documents(load_workspace(ws))
    out: dict[str, int] = {}
    for c in chunk_documents(docs):
        out[c.doc_id] = out.get(c.doc_id, 0) + 1
    return out


def chunks_by_doc(conn, name: str) -> dict[str, int]:
    t = Tables(registry_rows(conn, name)[0]["prefix"])
    rows = conn.execute(f'SELECT doc_id, count(*) FROM "{t.name("chunks")}" GROUP BY doc_id')
    return {str(d): int(n) for d, n in rows}


def test_two_writers_and_a_reader_at_once(tmp_path):
    name = "live" + uuid.uuid4().hex[:8]
    ws = workspace(tmp_path / "ws", name, files=60)
    writers = [start_index(ws), start_index(ws)]
    snapshots = partial = searches = 0
    problems: list[str] = []
    reader: PgIndex | None = None
    with connect(PGVECTOR_URL) as conn:
        while any(w.poll() is None for w in writers):
            n = indexed(conn, name)
            if n == 0:
                time.sleep(0.05)
                continue
            problems += index_invariants(conn, name)
            snapshots += 1
            partial += int(n < 60)
            if reader is None:
                reader = PgIndex(PGVECTOR_URL, name=name)
            hits = reader.search("the Committee raised the federal funds rate", k=5)
            searches += 1
            assert hits and all(h.text and h.metadata["doc_id"] == h.doc_id for h in hits)
        outs = [w.communicate() for w in writers]
        assert [w.returncode for w in writers] == [0, 0], [o for o, _ in outs]
        assert problems == []
        assert partial >= 1, "the reader never ran while documents were being written"
        results = [json.loads(out) for out, _ in outs]
        # each document written by one writer; the other found it done and skipped it
        assert sum(r["added_documents"] for r in results) == 60
        assert index_invariants(conn, name) == []
        assert chunks_by_doc(conn, name) == expected_chunks(ws)
    assert reader is not None and len(reader.doc_ids) == 60 and searches >= 1
    reader.close()


def test_kill_9_mid_index_leaves_whole_documents(tmp_path):
    name = "kill" + uuid.uuid4().hex[:8]
    ws = workspace(tmp_path / "ws", name, files=120)
    writer = start_index(ws)
    with connect(PGVECTOR_URL) as conn:
        while writer.poll() is None and indexed(conn, name) < 3:
            time.sleep(0.02)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        assert writer.returncode == -signal.SIGKILL
        done = indexed(conn, name)
        assert 0 < done < 120, f"the kill came at {done} of 120 documents"
        assert index_invariants(conn, name) == []
        again = start_index(ws)
        out, _ = again.communicate(timeout=600)
        assert again.returncode == 0, out
        result = json.loads(out)
        assert result["unchanged_documents"] == done
        assert result["added_documents"] == 120 - done
        assert index_invariants(conn, name) == []
        assert chunks_by_doc(conn, name) == expected_chunks(ws)

"""``refgate index --backend pgvector``, ``--migrate`` and ``refgate search`` against a real
PostgreSQL with pgvector (``REFGATE_TEST_PGVECTOR_URL``): the same hits from both backends, and
bad input (a wrong DSN, a server without pgvector, a password in refgate.toml, another
embedder) refused with exit 2 and nothing written."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest
from psycopg import sql
from typer.testing import CliRunner

from refgate.cli.app import app
from refgate.retrieval import HashingEmbeddings
from refgate.retrieval.pgvector.connection import connect
from tests.support.pgvector import PGVECTOR_URL, index_invariants, requires_pgvector

FOMC = Path(__file__).resolve().parents[2] / "examples" / "us-macro" / "documents"
pytestmark = [
    pytest.mark.postgres,
    requires_pgvector,
]


def make_workspace(
    root: Path, name: str, *, dsn: str = "env:REFGATE_INDEX_DSN", files: int = 12
) -> Path:
    (root / "documents").mkdir(parents=True)
    for path in sorted(FOMC.glob("*.txt"))[:files]:
        shutil.copy(path, root / "documents" / path.name)
    (root / "refgate.toml").write_text(
        f'name = "pgv"\n[documents]\npath = "documents"\ndate_from_filename = "%Y%m%d"\n'
        f'entity = "FOMC"\n[index]\nbackend = "pgvector"\ndsn = "{dsn}"\nname = "{name}"\n',
        encoding="utf-8",
    )
    return root


@pytest.fixture
def hashing(env, monkeypatch):
    """The document embedder is the 64-dimension hashing one (fast; the ranking code is the
    same), and the DSN is the test server's."""
    from refgate import retrieval
    from refgate.retrieval import backend

    monkeypatch.setattr(
        retrieval, "document_embeddings", lambda settings=None: HashingEmbeddings(64)
    )
    monkeypatch.setattr(backend, "document_embeddings", lambda settings=None: HashingEmbeddings(64))
    env.setenv("REFGATE_INDEX_DSN", PGVECTOR_URL)
    return env


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def hits(ws: Path, *args: str) -> list[tuple[str, float]]:
    code, out = run("search", "-w", str(ws), *args, "--json")
    assert code == 0, out
    return [(h["chunk_id"], h["score"]) for h in json.loads(out)["hits"]]


def test_search_gives_the_same_hits_from_both_backends_and_migrate_embeds_nothing(
    tmp_path, hashing
):
    name = "c" + uuid.uuid4().hex[:10]
    ws = make_workspace(tmp_path / "ws", name)
    code, out = run("index", "-w", str(ws), "--json")
    assert code == 0, out
    assert json.loads(out[out.index("{") :])["backend"] == "pgvector"
    code, out = run("index", "-w", str(ws), "--backend", "faiss")
    assert code == 0, out
    for query, extra in (
        ("raise the federal funds rate", []),
        ("discount rate", ["--since", "1994-06-01", "--k", "3"]),
        ("inflation", ["--until", "1994-12-31", "--source", "documents/19940816.txt"]),
    ):
        pg = hits(ws, query, *extra)
        assert pg, query
        assert pg == hits(ws, query, *extra, "--backend", "faiss"), query
    # the FAISS folder copied into a new pgvector index: the same hits, nothing embedded
    migrated = "m" + uuid.uuid4().hex[:10]
    toml = (ws / "refgate.toml").read_text(encoding="utf-8").replace(name, migrated)
    (ws / "refgate.toml").write_text(toml, encoding="utf-8")
    code, out = run("index", "-w", str(ws), "--migrate", "--json")
    assert code == 0, out
    summary = json.loads(out[out.index("{") :])
    assert summary["embedded"] == 0 and summary["documents"] == 12
    assert hits(ws, "raise the federal funds rate") == hits(
        ws, "raise the federal funds rate", "--backend", "faiss"
    )
    with connect(PGVECTOR_URL) as conn:
        assert index_invariants(conn, migrated) == []


def test_a_wrong_dsn_is_exit_2_and_writes_nothing(tmp_path, hashing):
    ws = make_workspace(tmp_path / "ws", "wrong")
    hashing.setenv("REFGATE_INDEX_DSN", "postgresql://nobody@127.0.0.1:1/none")
    code, out = run("index", "-w", str(ws))
    assert code == 2, out
    assert "cannot connect" in out
    assert not (ws / ".refgate").exists()
    code, out = run("search", "-w", str(ws), "rates")
    assert code == 2 and "cannot connect" in out


def test_a_server_without_pgvector_is_exit_2_naming_create_extension(tmp_path, hashing):
    debian = os.environ.get("REFGATE_TEST_POSTGRES_URL")
    if not debian:
        pytest.skip("REFGATE_TEST_POSTGRES_URL (Debian's postgres, which has no pgvector) is unset")
    import psycopg

    ws = make_workspace(tmp_path / "ws", "nopgv")
    hashing.setenv("REFGATE_INDEX_DSN", debian)
    code, out = run("index", "-w", str(ws))
    assert code == 2, out
    assert "CREATE EXTENSION vector" in " ".join(out.split())
    assert not (ws / ".refgate").exists()
    with psycopg.connect(debian) as conn:
        n = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'rgx_%'"
            " OR tablename = 'refgate_index_registry'"
        ).fetchone()
    assert n is not None and n[0] == 0


def test_a_password_in_refgate_toml_is_refused(tmp_path, hashing):
    ws = make_workspace(
        tmp_path / "ws", "pw", dsn="postgresql://analyst:s3cret@db.example:5432/idx"
    )
    for command in (["index", "-w", str(ws)], ["search", "-w", str(ws), "rates"]):
        code, out = run(*command)
        assert code == 2, out
        text = " ".join(out.split())
        assert "password" in text and "env:REFGATE_INDEX_DSN" in text and "s3cret" not in text
    assert not (ws / ".refgate").exists()


def test_searching_with_another_embedder_is_refused_with_the_rebuild_command(
    tmp_path, hashing, monkeypatch
):
    from refgate.retrieval import backend

    name = "e" + uuid.uuid4().hex[:10]
    ws = make_workspace(tmp_path / "ws", name, files=3)
    assert run("index", "-w", str(ws))[0] == 0
    monkeypatch.setattr(backend, "document_embeddings", lambda settings=None: HashingEmbeddings(32))
    backend._open.clear()
    code, out = run("search", "-w", str(ws), "rates")
    assert code == 2, out
    assert "refgate index --backend pgvector --rebuild" in " ".join(out.split())
    with connect(PGVECTOR_URL) as conn:
        tables = conn.execute(
            sql.SQL("SELECT count(*) FROM refgate_index_registry WHERE name = %s"), [name]
        ).fetchone()
    assert tables is not None and tables[0] == 1

"""The Korean filters of the FAISS path on the pgvector backend, on REAL 엔씨소프트 filing text
(read from ../shared at test time) and a real PostgreSQL with pgvector
(``REFGATE_TEST_PGVECTOR_URL``): a filing's report period (the ``period`` filter and the
question's own period) and superseded sections (an amendment supersedes its original, section by
section), in SQL, the same hits as the FAISS index, kept true as filings arrive and leave."""

from __future__ import annotations

import uuid
from datetime import date
from pathlib import Path

import pytest
from langchain_core.documents import Document
from psycopg import sql

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.documents import read_documents
from refgate.retrieval.pgvector.connection import PgIndexError, connect
from refgate.retrieval.pgvector.index import PgIndex
from refgate.retrieval.pgvector.schema import REGISTRY, Tables, registry_rows
from refgate.retrieval.pgvector.writer import write_index
from tests.support.ncsoft_sections import AMENDED_2023, ANNUAL_2023, Q3_2022, write_filing
from tests.support.pgvector import PGVECTOR_URL, index_invariants, requires_pgvector

pytestmark = [
    pytest.mark.postgres,
    requires_pgvector,
]
TITLES = ("1. 외부감사에 관한 사항", "7. 기타 참고사항", "3. 원재료 및 생산설비")
#: (question, filters, day asked): periods named and not, superseded kept and not.
ASKED: list[tuple[str, dict[str, object] | None, date | None]] = [
    ("제27기 감사인 삼정회계법인 감사의견", None, None),
    ("삼정회계법인 감사의견", {"superseded": True}, None),
    ("삼정회계법인 감사의견", {"rcept_no": ANNUAL_2023}, None),
    ("원재료 및 생산설비", {"period": "2022Q3"}, None),
    ("원재료 및 생산설비", {"period": {"year": 2023}}, None),
    ("2022년 3분기 원재료 및 생산설비", None, None),
    ("2023년 말 원재료 및 생산설비", None, None),
    ("작년 말 원재료", None, date(2024, 4, 1)),
    ("2011년 원재료 및 생산설비", None, None),
    ("2022년 3분기 감사의견", {"company": "엔씨소프트"}, None),
    ("2023년 말 감사의견", {"company": "036570", "date_from": "2024-03-21"}, None),
]


def fresh_name() -> str:
    return "k" + uuid.uuid4().hex[:12]


def filings(root: Path, *rcepts: str) -> list[Document]:
    for rcept in rcepts:
        if not (root / f"{rcept}.dart").exists() and not list(root.glob(f"**/{rcept}*")):
            write_filing(root, rcept, TITLES)
    wanted = set(rcepts)
    return [d for d in read_documents(root).documents if d.metadata["rcept_no"] in wanted]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory):
    """The 2023 annual report, its [기재정정] amendment and 2022 Q3 in a FAISS folder and a
    pgvector index, each built in one run (equal scores rank in insertion order in both;
    a filing arriving later is ``test_an_amendment_arriving_or_leaving_resets_the_original``)."""
    root = tmp_path_factory.mktemp("ncsoft")
    emb = HashingEmbeddings(64)
    docs = filings(root / "docs", ANNUAL_2023, AMENDED_2023, Q3_2022)
    faiss = DocumentIndex.build(docs, root / "index", embeddings=emb)
    name = fresh_name()
    write_index(PGVECTOR_URL, docs, emb, name=name)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    yield faiss, pg, docs
    pg.close()


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_period_and_superseded_filters_give_the_faiss_hits(both, mode):
    faiss, pg, _ = both
    for question, filters, day in ASKED:
        a = faiss.search(question, k=10, filters=filters, mode=mode, mmr=False, as_of=day)
        b = pg.search(question, k=10, filters=filters, mode=mode, mmr=False, as_of=day)
        assert a, (question, filters)
        assert [h.chunk_id for h in b] == [h.chunk_id for h in a], (question, filters)
        assert [round(h.score, 4) for h in b] == [round(h.score, 4) for h in a]


def test_what_the_filters_keep(both):
    _, pg, _ = both
    hits = pg.search("제27기 감사인 삼정회계법인 감사의견", k=10, mode="bm25")
    assert AMENDED_2023 in {h.metadata["rcept_no"] for h in hits}
    assert ANNUAL_2023 not in {h.metadata["rcept_no"] for h in hits}  # superseded
    kept = pg.search("삼정회계법인 감사의견", k=10, mode="bm25", filters={"superseded": True})
    assert ANNUAL_2023 in {h.metadata["rcept_no"] for h in kept}
    q3 = pg.search("원재료 및 생산설비", k=10, filters={"period": "2022Q3"})
    assert q3 and {h.metadata["rcept_no"] for h in q3} == {Q3_2022}
    pinned = pg.search("2022년 3분기 원재료 및 생산설비", k=10, mode="dense")
    assert pinned and {h.metadata["rcept_no"] for h in pinned} == {Q3_2022}
    off = pg.search("2022년 3분기 원재료", k=10, mode="bm25", question_period=False)
    assert len({h.metadata["rcept_no"] for h in off}) == 2
    with pytest.raises(ValueError, match="quarter is 1 to 4"):
        pg.search("원재료", filters={"period": "2022Q7"})


def superseded_filings(conn, name: str) -> dict[str, set[bool]]:
    """Per filing, the superseded flags of its chunks and of their windows."""
    (row,) = registry_rows(conn, name)
    t = Tables(row["prefix"])
    out: dict[str, set[bool]] = {}
    for rcept, flag, window_flags in conn.execute(
        sql.SQL(
            "SELECT c.rcept_no, c.superseded, array_agg(DISTINCT w.superseded) FROM {} c"
            " JOIN {} w ON w.chunk = c.id GROUP BY c.id"
        ).format(t.chunks, t.windows)
    ):
        assert set(window_flags) == {flag}  # a window carries its chunk's flag
        out.setdefault(rcept, set()).add(flag)
    return out


def test_an_amendment_arriving_or_leaving_resets_the_original(tmp_path):
    emb = HashingEmbeddings(64)
    docs = filings(tmp_path / "docs", ANNUAL_2023, AMENDED_2023, Q3_2022)
    without = [d for d in docs if d.metadata["rcept_no"] != AMENDED_2023]
    name = fresh_name()
    write_index(PGVECTOR_URL, without, emb, name=name)
    with connect(PGVECTOR_URL) as conn:
        flags = superseded_filings(conn, name)
        assert flags[ANNUAL_2023] == {False}
        write_index(PGVECTOR_URL, docs, emb, name=name)
        flags = superseded_filings(conn, name)
        # the amendment carries these three sections again: every original chunk is superseded
        assert flags == {ANNUAL_2023: {True}, AMENDED_2023: {False}, Q3_2022: {False}}
        write_index(PGVECTOR_URL, without, emb, name=name)  # the amendment withdrawn
        assert superseded_filings(conn, name)[ANNUAL_2023] == {False}
        assert index_invariants(conn, name) == []


def test_period_filters_run_on_indexes(both):
    """The plans of a period-filtered search's two sides use the (bsns_year, quarter) btrees
    (sequential scans turned off: the tables here are small enough to read whole)."""
    _, pg, _ = both
    with connect(PGVECTOR_URL) as conn, conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        for table in (pg.tables.chunks, pg.tables.windows):
            plan = conn.execute(
                sql.SQL(
                    "EXPLAIN SELECT id FROM {} WHERE bsns_year = ANY(%s) AND quarter = ANY(%s)"
                    " AND NOT superseded"
                ).format(table),
                [["2022"], ["3"]],
            ).fetchall()
            text = "\n".join(r[0] for r in plan)
            assert "bsns_year_quarter_idx" in text or "_period" in text, text


def test_an_index_of_the_earlier_layout_is_refused_then_upgraded(tmp_path):
    """A table set written before the report-period columns existed: a reader names the
    command that brings it up to date, and that command does, giving the same hits."""
    emb = HashingEmbeddings(64)
    docs = filings(tmp_path / "docs", ANNUAL_2023, AMENDED_2023, Q3_2022)
    name = fresh_name()
    write_index(PGVECTOR_URL, docs, emb, name=name)
    before = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    want = [h.chunk_id for h in before.search("2023년 말 감사의견", k=10, mode="bm25")]
    before.close()
    with connect(PGVECTOR_URL) as conn:
        (row,) = registry_rows(conn, name)
        t = Tables(row["prefix"])
        for table, columns in (
            (t.windows, ("bsns_year", "quarter", "superseded")),
            (t.chunks, ("rcept_no", "bsns_year", "quarter", "section_key", "superseded")),
        ):
            for column in columns:
                conn.execute(
                    sql.SQL("ALTER TABLE {} DROP COLUMN {}").format(table, sql.Identifier(column))
                )
        conn.execute(
            sql.SQL("UPDATE {} SET spec = spec - 'schema' WHERE prefix = %s").format(
                sql.Identifier(REGISTRY)
            ),
            [t.prefix],
        )
    with pytest.raises(PgIndexError, match="refgate index --backend pgvector"):
        PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    again = write_index(PGVECTOR_URL, docs, emb, name=name)
    assert again.unchanged_documents == len(docs)  # nothing re-embedded or rewritten
    after = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    assert [h.chunk_id for h in after.search("2023년 말 감사의견", k=10, mode="bm25")] == want
    with connect(PGVECTOR_URL) as conn:
        assert superseded_filings(conn, name)[ANNUAL_2023] == {True}
    after.close()


def test_a_second_embedders_table_set_filters_alike(both, tmp_path):
    """One index name, two embedders (as a Korean dense model beside MiniLM would add): each
    has its own table set, and each reader gets its own embedder's ranking with the filters."""
    faiss64, _, docs = both
    name = fresh_name()
    emb32 = HashingEmbeddings(32)
    faiss32 = DocumentIndex.build(docs, tmp_path / "faiss32", embeddings=emb32)
    write_index(PGVECTOR_URL, docs, HashingEmbeddings(64), name=name)
    write_index(PGVECTOR_URL, docs, emb32, name=name)
    with connect(PGVECTOR_URL) as conn:
        assert len(registry_rows(conn, name)) == 2
    for emb, faiss in ((HashingEmbeddings(64), faiss64), (emb32, faiss32)):
        pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
        for question, filters, day in ASKED[:6]:
            a = faiss.search(question, k=10, filters=filters, mmr=False, as_of=day)
            b = pg.search(question, k=10, filters=filters, mmr=False, as_of=day)
            assert tie_groups(b) == tie_groups(a), (emb, question)
        pg.close()


def tie_groups(hits) -> list[tuple[float, frozenset[str]]]:
    """The ranking as groups of equal scores (within 1e-6): a cosine the backends compute in
    another summation order (FAISS's SIMD lanes, numpy's BLAS) may differ in its last bits, so
    two chunks of one exactly equal score can come in either order."""
    groups: list[tuple[float, set[str]]] = []
    for h in hits:
        if groups and abs(groups[-1][0] - h.score) <= 1e-6:
            groups[-1][1].add(h.chunk_id)
        else:
            groups.append((h.score, {h.chunk_id}))
    return [(round(score, 5), frozenset(ids)) for score, ids in groups]

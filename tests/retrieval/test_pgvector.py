"""The pgvector index backend against a real PostgreSQL with pgvector
(``scripts/start_postgres.sh --pgvector``; ``REFGATE_TEST_PGVECTOR_URL``, which scripts/test.sh
sets): the same ranking as the FAISS path, incremental and transactional writes, the refusals."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.pgvector.connection import PgIndexError, connect
from refgate.retrieval.pgvector.index import PgIndex
from refgate.retrieval.pgvector.writer import write_index
from tests.support.pgvector import PGVECTOR_URL, index_counts, index_invariants, requires_pgvector

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.postgres,
    requires_pgvector,
]

QUERIES = [
    "raise the federal funds rate",
    "inflation pressures and labor markets",
    "discount rate increase approved by the Board",
    "economic growth slowed",
    "reserve positions easing",
]


def fresh_name() -> str:
    return "t" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def fomc_40(fomc_docs):
    return fomc_docs[:40]


@pytest.fixture(scope="module")
def both(fomc_40, tmp_path_factory):
    """The same 40 FOMC statements in a FAISS folder and in a pgvector index."""
    emb = HashingEmbeddings(64)
    name = fresh_name()
    faiss = DocumentIndex.build(fomc_40, tmp_path_factory.mktemp("faiss"), embeddings=emb)
    write_index(PGVECTOR_URL, fomc_40, emb, name=name)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    yield faiss, pg
    pg.close()


@pytest.mark.parametrize("mode", ["hybrid", "dense", "bm25"])
@pytest.mark.parametrize(
    "filters",
    [None, {"date_from": "1996-01-01", "date_to": "1998-12-31"}, {"doc_id": ["19940204"]}],
)
def test_ranks_as_the_faiss_path(both, mode, filters):
    faiss, pg = both
    assert len(pg) == len(faiss)
    for q in QUERIES:
        a = faiss.search(q, k=10, filters=filters, mode=mode, mmr=False)
        b = pg.search(q, k=10, filters=filters, mode=mode, mmr=False)
        assert [h.chunk_id for h in b] == [h.chunk_id for h in a], q
        assert np.allclose([h.score for h in b], [h.score for h in a], atol=1e-4), q
        assert [h.metadata for h in b] == [h.metadata for h in a]
        if filters and "date_from" in filters:
            assert all("1996-01-01" <= h.metadata["date"] <= "1998-12-31" for h in b)


def test_mmr_and_rrf_are_the_faiss_paths(both):
    faiss, pg = both
    for q in QUERIES:
        for kw in ({"mmr": True, "lambda_mult": 0.5}, {"fusion": "rrf", "mmr": False}):
            a = [h.chunk_id for h in faiss.search(q, k=8, **kw)]
            assert [h.chunk_id for h in pg.search(q, k=8, **kw)] == a, (q, kw)


def test_update_writes_only_changed_documents(fomc_40, tmp_path):
    emb = HashingEmbeddings(64)
    name = fresh_name()
    docs = fomc_40[:10]
    first = write_index(PGVECTOR_URL, docs, emb, name=name)
    assert (first.added_documents, first.documents) == (10, 10)
    edited = Document(
        page_content=docs[3].page_content + " The Committee also noted heron migrations.",
        metadata=dict(docs[3].metadata),
    )
    new = Document(
        page_content="A new statement about plover tariffs.", metadata={"doc_id": "new1"}
    )
    again = write_index(PGVECTOR_URL, [*docs[:3], edited, *docs[5:], new], emb, name=name)
    assert again.unchanged_documents == 8
    # the chunks gone (the removed document's, the edited one's whose ids changed), as the FAISS
    # folder counts them
    faiss = DocumentIndex.build(docs, tmp_path / "faiss", embeddings=emb)
    faiss_again = faiss.update([*docs[:3], edited, *docs[5:], new])
    assert again.removed == faiss_again.removed > 0
    assert (again.changed_documents, again.added_documents, again.removed_documents) == (1, 1, 1)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    assert sorted(pg.doc_ids) == sorted(
        [d.metadata["doc_id"] for d in docs if d is not docs[4]] + ["new1"]
    )
    assert pg.search("heron migrations", k=1, mode="bm25")[0].doc_id == docs[3].metadata["doc_id"]
    # the same index built from scratch holds the same statistics
    rebuilt = fresh_name()
    write_index(PGVECTOR_URL, [*docs[:3], edited, *docs[5:], new], emb, name=rebuilt)
    fresh = PgIndex(PGVECTOR_URL, name=rebuilt, embeddings=emb)
    for q in QUERIES:
        a = [(h.chunk_id, round(h.score, 5)) for h in pg.search(q, k=5, mmr=False)]
        assert [(h.chunk_id, round(h.score, 5)) for h in fresh.search(q, k=5, mmr=False)] == a
    with connect(PGVECTOR_URL) as conn:
        assert index_invariants(conn, name) == []
    pg.close()
    fresh.close()


class _FixedId(Embeddings):
    """An embedder that names itself, whatever its dimension."""

    embeddings_id = "fixed-id"

    def __init__(self, dim: int) -> None:
        self.inner = HashingEmbeddings(dim)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_another_embedder_or_dimension_is_refused_with_the_rebuild_command(fomc_40):
    name = fresh_name()
    write_index(PGVECTOR_URL, fomc_40[:3], HashingEmbeddings(64), name=name)
    with pytest.raises(PgIndexError, match="refgate index --backend pgvector --rebuild"):
        PgIndex(PGVECTOR_URL, name=name, embeddings=HashingEmbeddings(32))
    write_index(PGVECTOR_URL, fomc_40[:3], _FixedId(64), name=name)
    with connect(PGVECTOR_URL) as conn:
        before = index_counts(conn, name)
    with pytest.raises(PgIndexError, match="--rebuild"):
        write_index(PGVECTOR_URL, fomc_40[:5], _FixedId(32), name=name)
    with connect(PGVECTOR_URL) as conn:
        assert index_counts(conn, name) == before  # nothing written


def test_a_wrong_dsn_or_a_server_without_pgvector_is_refused():
    with pytest.raises(PgIndexError, match="cannot connect"):
        connect("postgresql://nobody@127.0.0.1:1/none")
    debian = os.environ.get("REFGATE_TEST_POSTGRES_URL")
    if not debian:
        pytest.skip("REFGATE_TEST_POSTGRES_URL (Debian's postgres, no pgvector) is unset")
    with pytest.raises(PgIndexError, match="CREATE EXTENSION vector"):
        connect(debian)


def test_company_date_and_doc_type_filters_select_as_the_faiss_path(fomc_40, tmp_path):
    """Filings-like metadata on the FOMC texts: a company named by corp_code, stock code or
    name, a receipt-date range and a document type select the same chunks in both backends."""
    companies = [("00126380", "005930", "삼성전자"), ("00164779", "000660", "SK하이닉스")]
    docs = []
    for n, doc in enumerate(fomc_40[:24]):
        code, stock, name = companies[n % 2]
        meta = dict(doc.metadata)
        meta.update(
            corp_code=code,
            stock_code=stock,
            corp_name=name,
            detail_type="A001" if n % 3 else "A003",
        )
        docs.append(Document(page_content=doc.page_content, metadata=meta))
    emb = HashingEmbeddings(64)
    name = fresh_name()
    faiss = DocumentIndex.build(docs, tmp_path / "faiss", embeddings=emb)
    write_index(PGVECTOR_URL, docs, emb, name=name)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    for filters in (
        {"company": "00126380"},
        {"company": ["000660"], "date_from": "1995-01-01"},
        {"company": "삼성전자", "date_to": "1995-12-31", "doc_type": "A001"},
        {"doc_type": ["A003"]},
        {"company": "nobody"},
    ):
        for q in QUERIES[:3]:
            a = [h.chunk_id for h in faiss.search(q, k=10, filters=filters, mmr=False)]
            b = [h.chunk_id for h in pg.search(q, k=10, filters=filters, mmr=False)]
            assert b == a, (q, filters)
        if filters.get("company") != "nobody":
            assert a
    pg.close()


def test_search_documents_reads_the_pgvector_index_through_the_seam(tmp_path, monkeypatch):
    """WORK, the research graph, served graphs, the MCP server and the Python API reach the index
    through ``search_documents``: on a workspace with ``[index] backend = "pgvector"`` it answers
    with the same hits and docRefs as from the FAISS folder."""
    from dataclasses import replace

    from refgate.catalog.capabilities import EngineEnv
    from refgate.retrieval import backend, index_dir, workspace_documents
    from refgate.retrieval.capability import search_documents
    from refgate.workspace import load_workspace

    root = tmp_path / "ws"
    (root / "documents").mkdir(parents=True)
    for path in sorted((REPO / "examples/us-macro/documents").glob("1994*.txt")):
        (root / "documents" / path.name).write_text(
            path.read_text(encoding="utf-8"), encoding="utf-8"
        )
    name = fresh_name()
    (root / "refgate.toml").write_text(
        'name = "seam"\n[documents]\npath = "documents"\ndate_from_filename = "%Y%m%d"\n'
        f'[index]\nbackend = "pgvector"\ndsn = "env:REFGATE_INDEX_DSN"\nname = "{name}"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("REFGATE_INDEX_DSN", PGVECTOR_URL)
    monkeypatch.setattr(backend, "document_embeddings", lambda settings=None: HashingEmbeddings(64))
    ws = load_workspace(root)
    assert ws.index_options["backend"] == "pgvector"
    docs = workspace_documents(ws)
    write_index(PGVECTOR_URL, docs, HashingEmbeddings(64), name=name)
    DocumentIndex.build(docs, index_dir(ws), embeddings=HashingEmbeddings(64))
    func = search_documents
    faiss_ws = replace(ws, index_options={"backend": "faiss"})
    for kw in ({}, {"date_from": "1994-06-01"}, {"mmr": True}):
        pg = func("raise the federal funds rate", k=4, env=EngineEnv(workspace=ws), **kw)
        fa = func("raise the federal funds rate", k=4, env=EngineEnv(workspace=faiss_ws), **kw)
        assert pg.data["hits"] and pg.data["hits"] == fa.data["hits"], kw
        assert [r.payload for r in pg.refs] == [r.payload for r in fa.refs]
        assert pg.data["index"]["chunks"] == fa.data["index"]["chunks"]


KOREAN = [
    "삼성전자의 영업이익은 반도체 업황 부진으로 전년 대비 크게 감소했다.",
    "SK하이닉스는 고대역폭 메모리 판매 증가로 매출이 늘었다고 밝혔다.",
    "회사는 배당금 지급을 위해 이사회 결의를 거쳤으며 주주총회에서 승인되었다.",
    "영업이익률은 원재료 가격 상승과 환율 변동의 영향을 받았다.",
    "The board approved a dividend of 361 won per share.",
]


def test_korean_is_tokenised_to_morphemes_and_ranks_as_the_faiss_path(tmp_path):
    pytest.importorskip("kiwipiepy")
    docs = [Document(page_content=t, metadata={"doc_id": f"k{i}"}) for i, t in enumerate(KOREAN)]
    emb = HashingEmbeddings(64)
    name = fresh_name()
    faiss = DocumentIndex.build(docs, tmp_path / "faiss", embeddings=emb)
    write_index(PGVECTOR_URL, docs, emb, name=name)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    assert pg.spec["bm25"]["tokenizer"] == "kiwi" == faiss.manifest["bm25"].get("tokenizer")
    for q in ("삼성전자 영업이익 감소", "배당금 승인", "메모리 매출", "dividend per share"):
        a = [(h.chunk_id, round(h.score, 4)) for h in faiss.search(q, k=3, mode="bm25")]
        assert a, q
        assert [(h.chunk_id, round(h.score, 4)) for h in pg.search(q, k=3, mode="bm25")] == a
    # "삼성전자는" and "삼성전자의" share the morpheme 삼성전자: a particle does not hide it
    assert pg.search("삼성전자는", k=1, mode="bm25")[0].doc_id == "k0"
    pg.close()

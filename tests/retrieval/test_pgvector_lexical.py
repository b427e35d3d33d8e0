"""Unfiltered BM25 of the pgvector backend from its postings table (``pgvector/lexical.py``):
the same ranking as the FAISS path's bm25s and as scoring every chunk, proved by max-score
pruning on most queries; the postings kept with the chunks through edits and removals; an
index of the layout before the postings refused by readers and brought up to date by
``refgate index``. Against a real PostgreSQL with pgvector (``REFGATE_TEST_PGVECTOR_URL``)."""

from __future__ import annotations

import itertools
import uuid

import numpy as np
import pytest
from langchain_core.documents import Document
from psycopg import sql

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.pgvector.connection import PgIndexError, connect
from refgate.retrieval.pgvector.filters import SqlFilter
from refgate.retrieval.pgvector.index import PgIndex
from refgate.retrieval.pgvector.lexical import MaxScore, maxscore_top
from refgate.retrieval.pgvector.schema import REGISTRY, Tables, registry_rows
from refgate.retrieval.pgvector.writer import write_index
from tests.support.pgvector import PGVECTOR_URL, index_invariants, requires_pgvector

pytestmark = [
    pytest.mark.postgres,
    requires_pgvector,
]
VOCAB = 600


def zipf_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` words of a Zipf vocabulary: a few held by most chunks, most by few."""
    p = 1.0 / np.arange(1, VOCAB + 1) ** 1.05
    return [f"w{i}" for i in rng.choice(VOCAB, size=n, p=p / p.sum())]


def corpus(n: int = 240) -> list[Document]:
    """Short synthetic filings (one chunk each) of varied lengths; the first 20 sections come
    again in an amendment (a later rcept_no), which supersedes them."""
    rng = np.random.default_rng(7)
    docs = []
    for i in range(n):
        meta: dict[str, object] = {"doc_id": f"d{i:03d}", "corp_code": f"{i % 12:08d}"}
        if i < 40:  # d000-d019 superseded by d020-d039
            meta |= {"corp_code": "00000099", "rcept_no": f"2024{i // 20:010d}", "bsns_year": "2023", "quarter": "4",
                     "report_kind": "annual", "section_title": f"s{i % 20}"}  # fmt: skip
        text = " ".join(zipf_words(rng, int(rng.integers(8, 60))))
        docs.append(Document(page_content=text, metadata=meta))
    return docs


def queries() -> list[str]:
    rng = np.random.default_rng(11)
    out = [" ".join(zipf_words(rng, int(rng.integers(1, 7)))) for _ in range(40)]
    return [*out, "w0 w1 w2", "w0", "w599 w0 w1", "w3 w3 w5 w250"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    docs = corpus()
    emb = HashingEmbeddings(32)
    name = "t" + uuid.uuid4().hex[:12]
    write_index(PGVECTOR_URL, docs, emb, name=name)
    faiss = DocumentIndex.build(docs, tmp_path_factory.mktemp("faiss"), embeddings=emb)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    yield docs, emb, name, faiss, pg
    pg.close()


def tie_groups(hits: list) -> list[set[str]]:
    """The hits' chunk ids, grouped by exactly tied score, best first."""
    groups = itertools.groupby(hits, key=lambda h: round(h.score, 6))
    return [{h.chunk_id for h in group} for _, group in groups]


def assert_same_ranking(b: list, a: list) -> None:
    """The same chunks at the same scores, rank by rank. The synthetic chunks tie exactly
    (the same term counts and length): tied chunks may come in either order, and the last tie
    group, cut at k, may hold others."""
    assert np.allclose([h.score for h in b], [h.score for h in a], atol=1e-6)
    groups_b, groups_a = tie_groups(b), tie_groups(a)
    assert len(groups_b) == len(groups_a) and groups_b[:-1] == groups_a[:-1]


def test_unfiltered_bm25_ranks_as_bm25s(built):
    _, _, _, faiss, pg = built
    for q in queries():
        for k in (3, 10, 40):
            a = faiss.search(q, k=k, mode="bm25", mmr=False)
            b = pg.search(q, k=k, mode="bm25", mmr=False)
            assert_same_ranking(b, a)
            assert not {h.doc_id for h in b} & {f"d{i:03d}" for i in range(20)}  # superseded
        a = faiss.search(q, k=10, mmr=False)
        assert [h.chunk_id for h in pg.search(q, k=10, mmr=False)] == [h.chunk_id for h in a]


def test_max_score_proves_the_top_list_without_scoring_every_chunk(built):
    """The pruned list equals scoring every chunk holding a term; most queries are proved by
    the postings (None would send them to the full scan)."""
    _, _, _, _, pg = built
    proved = 0
    with connect(PGVECTOR_URL) as conn:
        chunks, total_terms, _, _ = pg._stats(conn)
        avgdl = total_terms / chunks
        where = SqlFilter()
        for q in queries():
            terms = pg._query_terms(conn, q, chunks)
            assert terms is not None

            def complete(ids: list[int], terms=terms) -> list[tuple[int, float]]:
                return pg._bm25(conn, terms, where, avgdl, top=len(ids), ids=ids)

            for n in (5, 20):
                full = pg._bm25(conn, terms, where, avgdl, top=n)
                top = maxscore_top(conn, pg.tables.postings, terms, avgdl, n, complete)
                if top is not None:
                    proved += 1
                    assert [c for c, _ in top] == [c for c, _ in full], (q, n)
                    assert np.allclose([s for _, s in top], [s for _, s in full]), (q, n)
    print(f"proved {proved} of {2 * len(queries())}")
    assert proved >= 0.8 * 2 * len(queries())


def test_max_score_split_follows_the_nth_score():
    ms = MaxScore((["common", "rare", "mid"], [1, 1, 2], [0.5, 4.0, 1.0]))
    assert ms.terms[0] == ["rare", "mid", "common"]
    assert ms.tail == pytest.approx([6.5, 2.5, 0.5, 0.0])
    assert ms.split(3.0) == 1  # "mid" and "common" together (2.5) cannot reach 3
    assert ms.split(1.0) == 2
    assert ms.split(0.4) == 3


def test_postings_follow_edits_and_removals(built, tmp_path):
    docs, emb, _, _, _ = built
    name = "t" + uuid.uuid4().hex[:12]
    write_index(PGVECTOR_URL, docs[:60], emb, name=name)
    edited = Document(
        page_content=docs[45].page_content + " w1 w1 heron", metadata=docs[45].metadata
    )
    write_index(PGVECTOR_URL, [*docs[:45], edited, *docs[50:70]], emb, name=name)
    with connect(PGVECTOR_URL) as conn:
        assert index_invariants(conn, name) == []
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    faiss = DocumentIndex.build([*docs[:45], edited, *docs[50:70]], tmp_path, embeddings=emb)
    for q in ("heron", "w1 heron", "w0 w1", "w7 w30 w2"):
        a = [h.chunk_id for h in faiss.search(q, k=10, mode="bm25", mmr=False)]
        assert [h.chunk_id for h in pg.search(q, k=10, mode="bm25", mmr=False)] == a, q
    pg.close()


def test_an_index_without_postings_is_refused_then_upgraded(built):
    """A table set of layout 2 (before the postings table): readers name the command that
    brings it up to date; that command fills the postings from the chunks, embedding nothing,
    and the hits are the same."""
    docs, emb, _, _, _ = built
    name = "t" + uuid.uuid4().hex[:12]
    write_index(PGVECTOR_URL, docs[:80], emb, name=name)
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    want = [[h.chunk_id for h in pg.search(q, k=10, mmr=False)] for q in queries()[:10]]
    pg.close()
    with connect(PGVECTOR_URL) as conn:
        (row,) = registry_rows(conn, name)
        t = Tables(row["prefix"])
        conn.execute(sql.SQL("DROP TABLE {}").format(t.postings))
        conn.execute(
            sql.SQL("UPDATE {} SET spec = jsonb_set(spec, '{{schema}}', '2') WHERE prefix = %s")
            .format(sql.Identifier(REGISTRY)),
            [t.prefix],
        )  # fmt: skip
    with pytest.raises(PgIndexError, match="refgate index --backend pgvector"):
        PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    again = write_index(PGVECTOR_URL, docs[:80], emb, name=name)
    assert (again.unchanged_documents, again.embedded) == (80, 0)
    with connect(PGVECTOR_URL) as conn:
        assert index_invariants(conn, name) == []
    pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
    assert [[h.chunk_id for h in pg.search(q, k=10, mmr=False)] for q in queries()[:10]] == want
    pg.close()


def test_what_max_score_cannot_prove_goes_to_the_full_scan(built):
    """Candidates the completion drops (superseded sections) leave the list unproved: None
    (``PgIndex._bm25_top`` then scores every chunk holding a term)."""
    pg = built[4]
    with connect(PGVECTOR_URL) as conn:
        chunks, total_terms, _, _ = pg._stats(conn)
        terms = pg._query_terms(conn, "w0 w1 w40", chunks)
        assert terms is not None
        top = maxscore_top(conn, pg.tables.postings, terms, total_terms / chunks, 5, lambda ids: [])
        assert top is None

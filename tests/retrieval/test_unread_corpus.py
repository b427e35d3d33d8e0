"""The unread corpus rule: an embedder that does not read a corpus's language (MiniLM on Korean
filings) gets ``fusion.UNREAD_WEIGHT`` in the hybrid search, with no decisive shift, on both
backends. Real 엔씨소프트 sections (read from ../shared at test time); the embedder is a
deterministic stand-in whose vectors point every question at the wrong section, as an embedder
reading no Korean may."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from refgate.retrieval import DocumentIndex
from refgate.retrieval.bm25 import KIWI
from refgate.retrieval.documents import read_documents
from refgate.retrieval.embedder_choice import reads_corpus
from refgate.retrieval.fusion import LONG_QUERY_WORDS, UNREAD_WEIGHT
from refgate.retrieval.ranking import SearchPlan
from tests.support.ncsoft_sections import Q3_2022, write_filing
from tests.support.pgvector import PGVECTOR_URL, requires_pgvector

AUDIT, MATERIALS = "1. 외부감사에 관한 사항", "3. 원재료 및 생산설비"
#: Asked of the audit section; BM25 ranks it first (its auditor and opinion are named).
QUESTION = "감사인 삼정회계법인 감사의견"


class MisreadingEmbeddings(Embeddings):
    """Vectors that make the materials section the dense side's clear winner for any question
    (as an embedder that reads no Korean may), named as an English-only (``minilm:``) embedder
    or as one that reads Korean."""

    def __init__(self, embeddings_id: str) -> None:
        self.embeddings_id = embeddings_id

    @staticmethod
    def _vec(text: str) -> list[float]:
        v = np.full(8, 0.05)
        v[0 if "원재료" in text else 1 + len(text) % 7] = 1.0
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec("원재료")


def sections(root: Path) -> list[Document]:
    write_filing(root, Q3_2022, (AUDIT, MATERIALS))
    return read_documents(root).documents


def top_section(index, query: str = QUESTION) -> str:
    return str(index.search(query, k=3)[0].metadata["section_title"])


def test_minilm_does_not_read_a_korean_corpus():
    assert not reads_corpus("minilm:all-MiniLM-L6-v2:int8", KIWI)
    assert reads_corpus("minilm:all-MiniLM-L6-v2:int8", None)  # English text: unchanged
    for other in ("e5:multilingual-e5-small", "hashing:256", "openai:text-embedding-3-small"):
        assert reads_corpus(other, KIWI)


def test_the_unread_weight_moves_neither_with_the_query_nor_the_lists():
    plan = SearchPlan.of({}, 0.5)
    dense = [(0, 0.9), *((i, 0.1) for i in range(1, 20))]  # a dense list with a clear winner
    flat_bm25 = [1.0] * 20
    long_query = " ".join(["매출"] * (LONG_QUERY_WORDS + 5))
    for query in ("감사의견", long_query):
        assert plan.dense_weight(query, 0.2, dense, flat_bm25, reads_corpus=False) == UNREAD_WEIGHT
        assert plan.dense_weight(query, 0.2, dense, flat_bm25) > 0.85  # read: the usual rule


def test_faiss_search_lets_bm25_decide_when_the_embedder_reads_no_korean(tmp_path: Path):
    docs = sections(tmp_path / "docs")
    unread = DocumentIndex.build(
        docs, tmp_path / "unread", embeddings=MisreadingEmbeddings("minilm:stand-in")
    )
    read = DocumentIndex.build(
        docs, tmp_path / "read", embeddings=MisreadingEmbeddings("reads-korean:stand-in")
    )
    assert top_section(unread) == AUDIT
    # the same vectors from an embedder said to read Korean: the dense side wins, as before
    assert top_section(read) == MATERIALS


@pytest.mark.postgres
@requires_pgvector
def test_pgvector_search_follows_the_same_rule(tmp_path: Path):
    # deferred: psycopg and the pgvector backend only where a server is given
    from refgate.retrieval.pgvector.index import PgIndex
    from refgate.retrieval.pgvector.writer import write_index

    docs = sections(tmp_path / "docs")
    for emb_id, expected in (("minilm:stand-in", AUDIT), ("reads-korean:stand-in", MATERIALS)):
        emb = MisreadingEmbeddings(emb_id)
        name = "u" + uuid.uuid4().hex[:12]
        write_index(PGVECTOR_URL, docs, emb, name=name)
        pg = PgIndex(PGVECTOR_URL, name=name, embeddings=emb)
        try:
            assert top_section(pg) == expected
        finally:
            pg.close()

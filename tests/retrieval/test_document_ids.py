"""Both index backends refuse documents without a doc_id or with a repeated one, before writing
anything (``refresh.document_hashes``, the one check both use)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from langchain_core.documents import Document

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.refresh import document_hashes
from tests.support.pgvector import PGVECTOR_URL, requires_pgvector

GOOD = Document(page_content="Revenue rose 4% in 2023.", metadata={"doc_id": "a", "source": "a"})
BAD = {
    "every document needs metadata\\['doc_id'\\]": [GOOD, Document(page_content="No id.")],
    "duplicate doc_id 'a'": [GOOD, Document(page_content="Again.", metadata={"doc_id": "a"})],
}


def test_hashes_follow_the_documents_order():
    b = Document(page_content="Costs fell.", metadata={"doc_id": "b"})
    hashes = document_hashes([b, GOOD])
    assert list(hashes) == ["b", "a"]
    assert hashes["a"] == document_hashes([GOOD])["a"]


@pytest.mark.parametrize("message", list(BAD))
def test_faiss_refuses_and_writes_nothing(tmp_path: Path, message: str):
    with pytest.raises(ValueError, match=message):
        DocumentIndex.build(BAD[message], tmp_path / "index", embeddings=HashingEmbeddings(16))
    assert not (tmp_path / "index" / "manifest.json").exists()


@pytest.mark.postgres
@requires_pgvector
@pytest.mark.parametrize("message", list(BAD))
def test_pgvector_refuses_and_writes_nothing(message: str):
    # deferred: psycopg and the pgvector backend only where a server is given
    from refgate.memory.embeddings import embeddings_id
    from refgate.retrieval.pgvector.connection import connect
    from refgate.retrieval.pgvector.schema import table_prefix
    from refgate.retrieval.pgvector.writer import write_index

    name, emb = "d" + uuid.uuid4().hex[:12], HashingEmbeddings(16)
    chunks = f"{table_prefix(name, embeddings_id(emb))}_chunks"
    before = Document(page_content="Margins held.", metadata={"doc_id": "z", "source": "z"})
    write_index(PGVECTOR_URL, [before], emb, name=name)
    with pytest.raises(ValueError, match=message):
        write_index(PGVECTOR_URL, BAD[message], emb, name=name)
    with connect(PGVECTOR_URL) as conn:  # the index holds what it held before
        ids = conn.execute(f"SELECT DISTINCT doc_id FROM {chunks}").fetchall()
    assert ids == [("z",)]  # not even the good document "a" went in

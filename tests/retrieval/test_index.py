"""DocumentIndex mechanics with a fast hashing embedder: persistence, incremental update,
filters, MMR, lazy embedding on load."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from refgate.retrieval import DocumentIndex, HashingEmbeddings, Hit
from refgate.retrieval.cache import EmbeddingCache
from refgate.retrieval.index_files import CACHE


class Counting(HashingEmbeddings):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self, dimension: int = 128) -> None:
        super().__init__(dimension)
        self.documents = 0
        self.queries = 0
        self.calls: list[int] = []

    def embed_documents(self, texts):
        self.documents += len(texts)
        self.calls.append(len(texts))
        return super().embed_documents(texts)

    def embed_query(self, text):
        self.queries += 1
        return super().embed_query(text)


TOPICS = {
    "rates": "The committee raised the federal funds rate target by 25 basis points to 2 percent.",
    "jobs": "Payroll employment grew strongly and the unemployment rate fell to 4 percent.",
    "housing": "Housing starts declined and mortgage delinquencies rose across many regions.",
    "energy": "Energy prices surged because crude oil supply was disrupted by a hurricane.",
    "trade": "Exports weakened as the dollar appreciated and foreign demand slowed.",
}


def make_docs(n: int = 20, long: bool = False) -> list[Document]:
    docs = []
    names = list(TOPICS)
    for i in range(n):
        topic = names[i % len(names)]
        body = f"Statement {i}. " + TOPICS[topic]
        if long:  # several chunks per document
            body = "\n\n".join(
                f"{body} Paragraph {j} adds detail number {i * 100 + j}." * 12 for j in range(12)
            )
        docs.append(
            Document(
                page_content=body,
                metadata={
                    "doc_id": f"d{i:02d}",
                    "entity": "FOMC" if i % 2 == 0 else "ECB",
                    "date": f"20{10 + i:02d}-06-15",
                    "topic": topic,
                },
            )
        )
    return docs


@pytest.fixture()
def built(tmp_path):
    emb = Counting(128)
    docs = make_docs(20, long=True)
    index = DocumentIndex.build(docs, tmp_path / "idx", embeddings=emb)
    return index, emb, docs, tmp_path / "idx"


def test_build_embeds_in_batches_of_100_and_search_finds_topic(built):
    index, emb, docs, _ = built
    assert len(index) > 100  # several chunks per document
    assert emb.calls and max(emb.calls) == 100 and sum(emb.calls) == index.faiss_index.ntotal
    assert index.last_result.embedded == len(index) and index.last_result.reused == 0
    hits = index.search("crude oil hurricane energy prices", k=5, mmr=False)
    assert len(hits) == 5 and all(isinstance(h, Hit) for h in hits)
    assert hits[0].metadata["topic"] == "energy"
    assert hits[0].score >= hits[-1].score
    h = hits[0]
    doc = next(d for d in docs if d.metadata["doc_id"] == h.doc_id)
    assert doc.page_content[h.start : h.end] == h.text
    assert h.chunk_id.startswith(h.doc_id + "#")


def test_persistence_round_trip_embeds_nothing_on_load(built):
    index, _, _, path = built
    before = [(h.chunk_id, round(h.score, 6)) for h in index.search("mortgage housing", k=7)]
    counting = Counting(128)
    loaded = DocumentIndex.load(path, embeddings=counting)
    assert counting.documents == 0 and counting.queries == 0
    assert len(loaded) == len(index) and loaded.doc_ids == index.doc_ids
    after = [(h.chunk_id, round(h.score, 6)) for h in loaded.search("mortgage housing", k=7)]
    assert after == before
    assert counting.documents == 0 and counting.queries == 1
    # the manifest rebuilds the same embedder on its own
    assert isinstance(DocumentIndex.load(path).embeddings, HashingEmbeddings)


def test_bm25_only_search_never_embeds(built):
    _, _, _, path = built
    counting = Counting(128)
    loaded = DocumentIndex.load(path, embeddings=counting)
    hits = loaded.search("unemployment payroll", k=3, mode="bm25")
    assert hits and hits[0].metadata["topic"] == "jobs"
    assert counting.queries == 0 and counting.documents == 0


def test_update_after_edit_and_delete_counts_embedded_vs_reused(built):
    index, _, docs, path = built
    per_doc = {d: sum(1 for c in index.chunks if c.doc_id == d) for d in index.doc_ids}
    docs = list(docs)
    # edit the last paragraph of d03, delete d05, add d99
    d3 = docs[3]
    docs[3] = Document(
        page_content=d3.page_content + " A brand new closing sentence.", metadata=d3.metadata
    )
    removed = docs.pop(5)
    docs.append(
        Document(
            page_content="Statement 99. Inflation expectations drifted up.",
            metadata={"doc_id": "d99", "date": "2031-01-01"},
        )
    )
    emb = Counting(128)
    loaded = DocumentIndex.load(path, embeddings=emb)
    result = loaded.update(docs)
    assert (
        result.changed_documents == 1
        and result.removed_documents == 1
        and result.added_documents == 1
    )
    # only d03's last chunk (its text changed) and d99 are embedded
    assert result.embedded == 2 == emb.documents
    assert result.reused == len(loaded) - 2
    assert result["embedded"] == 2 and result.reuse_rate > 0.98
    assert result.removed == per_doc[removed.metadata["doc_id"]]
    assert removed.metadata["doc_id"] not in loaded.doc_ids
    assert all(h.doc_id != "d05" for h in loaded.search("Statement 5 exports dollar", k=20))
    assert loaded.search("inflation expectations drifted", k=1, mmr=False)[0].doc_id == "d99"
    # persisted: a reload sees the update; updating again with the same set embeds nothing
    again = DocumentIndex.load(path, embeddings=emb)
    assert again.doc_ids == loaded.doc_ids
    assert again.update(docs).embedded == 0


def test_rebuild_at_same_path_reuses_the_cache_but_not_across_embedders(built):
    _, _, docs, path = built
    emb = Counting(128)
    rebuilt = DocumentIndex.build(docs, path, embeddings=emb)
    assert emb.documents == 0 and rebuilt.last_result.reused == len(rebuilt)
    other = Counting(64)  # another model: nothing may be reused
    DocumentIndex.build(docs, path, embeddings=other)
    assert other.documents == rebuilt.faiss_index.ntotal  # one text per window
    with EmbeddingCache(path / CACHE) as cache:
        assert cache.get_many("hashing:128", [rebuilt.window_hashes[0][0]]) != {}


def test_filters_apply_before_ranking(built):
    index, _, _, _ = built
    q = "crude oil hurricane energy prices"
    best = index.search(q, k=1, mmr=False)[0]
    other = "ECB" if best.metadata["entity"] == "FOMC" else "FOMC"
    hits = index.search(q, k=10, filters={"entity": other})
    assert hits and all(h.metadata["entity"] == other for h in hits)
    assert hits[0].metadata["topic"] == "energy"  # the best match of that entity, not any chunk
    only = index.search(q, k=10, filters={"doc_id": ["d01", "d02"]})
    assert {h.doc_id for h in only} <= {"d01", "d02"} and len(only) > 0
    ranged = index.search(q, k=30, filters={"date_from": "2015-01-01", "date_to": "2019-12-31"})
    assert ranged and all("2015-01-01" <= h.metadata["date"] <= "2019-12-31" for h in ranged)
    assert {h.doc_id for h in ranged} <= {f"d{i:02d}" for i in range(5, 10)}
    assert index.search(q, k=10, filters={"date": {"from": "2050-01-01"}}) == []
    assert index.search(q, k=5, filters={"topic": "rates"})[0].metadata["topic"] == "rates"


def test_mmr_diversifies_near_duplicates(tmp_path):
    text = "The committee raised the federal funds rate target to 2 percent citing inflation."
    docs = [
        Document(page_content=text + f" Copy {i}.", metadata={"doc_id": f"dup{i}"})
        for i in range(6)
    ]
    docs.append(
        Document(
            page_content="The federal funds rate target was raised; housing weakened.",
            metadata={"doc_id": "other"},
        )
    )
    docs.append(
        Document(
            page_content="Unrelated note about sports results and weather.",
            metadata={"doc_id": "noise"},
        )
    )
    index = DocumentIndex.build(docs, tmp_path / "i", embeddings=HashingEmbeddings(256))
    q = "committee raised federal funds rate target inflation"
    plain = index.search(q, k=3, mmr=False)
    diverse = index.search(q, k=3, mmr=True, lambda_mult=0.5)
    assert all(h.doc_id.startswith("dup") for h in plain)
    assert diverse[0].doc_id == plain[0].doc_id and "other" in {h.doc_id for h in diverse}

    def redundancy(hits):
        vecs = np.stack([index.chunk_vector(index._by_id[h.chunk_id]) for h in hits])
        sims = vecs @ vecs.T
        return float(sims[np.triu_indices(len(hits), 1)].mean())

    assert redundancy(diverse) < redundancy(plain)
    # lambda 1.0 is pure relevance: the same order as without MMR
    assert [h.doc_id for h in index.search(q, k=3, lambda_mult=1.0)] == [h.doc_id for h in plain]


def test_k_and_empty_inputs(tmp_path):
    index = DocumentIndex.build(make_docs(3), tmp_path / "s", embeddings=HashingEmbeddings(32))
    assert len(index.search("rates", k=50)) == len(index)
    assert index.search("", k=5) == [] and index.search("rates", k=0) == []
    empty = DocumentIndex.build([], tmp_path / "e", embeddings=HashingEmbeddings(32))
    assert len(empty) == 0 and empty.search("anything") == []
    assert len(DocumentIndex.load(tmp_path / "e")) == 0
    with pytest.raises(ValueError, match="doc_id"):
        DocumentIndex.build(
            [Document(page_content="x")], tmp_path / "bad", embeddings=HashingEmbeddings(32)
        )


def test_langchain_fake_embedding_round_trips_through_the_manifest(tmp_path):
    emb = DeterministicFakeEmbedding(size=48)
    index = DocumentIndex.build(make_docs(5), tmp_path / "f", embeddings=emb)
    loaded = DocumentIndex.load(tmp_path / "f")
    assert (
        isinstance(loaded.embeddings, DeterministicFakeEmbedding) and loaded.embeddings.size == 48
    )
    q = "energy"
    assert [h.chunk_id for h in loaded.search(q, k=3)] == [h.chunk_id for h in index.search(q, k=3)]

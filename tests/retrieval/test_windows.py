"""Window mode: one vector per window of a chunk, the chunk scored by its best window."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.chunking import count_tokens
from refgate.retrieval.windows import chunk_windows, prose_windows, window_spans

FILLER = " ".join(f"routine{i} administrative{i} matters{i}." for i in range(120))


def _docs(extra: str = "") -> list[Document]:
    needle = "The committee approved the amended swap line with the central bank of Norway."
    return [
        Document(page_content=FILLER + " " + needle + " " + FILLER, metadata={"doc_id": "long"}),
        Document(
            page_content="Swap lines with central banks were discussed briefly. " + extra,
            metadata={"doc_id": "short"},
        ),
        Document(page_content="Inflation expectations remained stable.", metadata={"doc_id": "x"}),
    ]


def test_window_spans_cover_the_text_in_order():
    spans = window_spans(HashingEmbeddings(), FILLER, 40)
    assert len(spans) > 5
    assert "".join(FILLER[a:b] for a, b in spans) == FILLER
    assert all(b == a2 for (_, b), (a2, _) in zip(spans, spans[1:], strict=False))
    assert len(chunk_windows(HashingEmbeddings(), "short text", 40)) == 1


def test_a_wide_korean_table_is_embedded_by_its_head_cut_at_the_window_size():
    """A table-only Korean chunk (a wide DART table: rows of thousands of tokens) gives one
    window of its first rows, no longer than the window size."""
    cells = " | ".join(f"제{i}기 매출액 {i * 1234:,}백만원" for i in range(300))
    table = f"| 구분 | {cells} |\n|---|---|\n| 연결 | {cells} |\n| 별도 | {cells} |"
    (window,) = prose_windows(table, 254)
    assert window.startswith("| 구분 | 제0기 매출액")
    assert 200 < count_tokens(window) <= 254
    # a narrow table keeps its two head rows whole
    narrow = (
        "| 구분 | 2023년 | 2024년 |\n|---|---|---|\n| 매출액 | 1,000 | 1,200 |\n| 이익 | 1 | 2 |"
    )
    assert prose_windows(narrow, 254) == ["| 구분 | 2023년 | 2024년 |\n| 매출액 | 1,000 | 1,200 |"]


@pytest.fixture()
def built(tmp_path):
    emb = HashingEmbeddings(512)
    index = DocumentIndex.build(
        _docs(), tmp_path / "w", embeddings=emb, dense="window", window_tokens=48
    )
    return index, emb, tmp_path


def test_a_chunk_scores_as_its_best_window(built):
    index, emb, _ = built
    assert index.dense_unit == "window" and index.faiss_index.ntotal > len(index)
    query = "amended swap line with the central bank of Norway"
    qvec = index.embed_query(query)
    hits = index.search(query, k=3, mode="dense", mmr=False)
    assert hits[0].doc_id == "long"
    long_row = index._by_id[hits[0].chunk_id]
    windows = [t for _, t in chunk_windows(emb, index.chunks[long_row].text, 48)]
    assert len(windows) > 3
    best = max(float(np.dot(emb.embed_query(query), emb.embed_documents([w])[0])) for w in windows)
    assert hits[0].score == pytest.approx(best, abs=1e-5)
    mean = DocumentIndex.build(_docs(), built[2] / "m", embeddings=emb, dense="chunk")
    mean_hits = mean.search(query, k=3, mode="dense", mmr=False)
    assert mean_hits[0].score < hits[0].score  # the mean of 10+ windows blurs the needle
    assert float(index.chunk_vector(long_row) @ qvec[0]) < hits[0].score


def test_window_index_reloads_filters_and_updates_incrementally(built):
    index, emb, tmp_path = built
    query = "swap line central bank"
    before = [(h.chunk_id, round(h.score, 6)) for h in index.search(query, k=3)]
    again = DocumentIndex.load(tmp_path / "w", embeddings=emb)
    assert again.dense_unit == "window"
    assert [(h.chunk_id, round(h.score, 6)) for h in again.search(query, k=3)] == before
    only = again.search(query, k=3, filters={"doc_id": "short"}, mode="dense")
    assert [h.doc_id for h in only] == ["short"]
    result = again.update(_docs(extra="A new sentence."))
    assert result.changed_documents == 1 and result.unchanged_documents == 2
    assert result.embedded == 1 and result.reused == len(again) - 1


def test_a_big_index_is_an_hnsw_graph_that_filters_and_reloads(tmp_path, monkeypatch):
    import refgate.retrieval.dense as dense_module

    docs = [
        Document(
            page_content=f"page {i} about topic{i % 17} and item{i % 29} value {i}",
            metadata={"doc_id": f"d{i}", "entity": "A" if i % 2 else "B"},
        )
        for i in range(300)
    ]
    emb = HashingEmbeddings(64)
    flat = DocumentIndex.build(docs, tmp_path / "flat", embeddings=emb)
    monkeypatch.setattr(dense_module, "FLAT_MAX_VECTORS", 50)
    graph = DocumentIndex.build(docs, tmp_path / "hnsw", embeddings=emb)
    assert flat.manifest["faiss"] == "flat" and graph.manifest["faiss"] == "hnsw"
    query = "topic3 item5"
    assert [h.doc_id for h in graph.search(query, k=5, mode="dense")] == [
        h.doc_id for h in flat.search(query, k=5, mode="dense")
    ]
    for filters in ({"entity": "A"}, {"doc_id": ["d1", "d2", "d3"]}):
        got = graph.search(query, k=5, filters=filters)
        want = flat.search(query, k=5, filters=filters)
        assert [h.doc_id for h in got] == [h.doc_id for h in want]
    again = DocumentIndex.load(tmp_path / "hnsw", embeddings=emb)
    assert type(again.faiss_index).__name__ == "IndexHNSWFlat"
    assert [h.doc_id for h in again.search(query, k=5)] == [
        h.doc_id for h in flat.search(query, k=5)
    ]

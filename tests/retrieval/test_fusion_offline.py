"""The offline fusion search (benchmarks/fusion_pools.py, fusion_search.py) ranks exactly as
DocumentIndex.search: its figures stand for the search it reimplements."""

from __future__ import annotations

import fusion_pools
import fusion_search as fs
import numpy as np
from langchain_core.documents import Document

from refgate.retrieval import DocumentIndex, HashingEmbeddings

WORDS = [
    "rates",
    "inflation",
    "swap",
    "lines",
    "banks",
    "credit",
    "dollar",
    "housing",
    "labor",
    "energy",
    "prices",
    "reserves",
    "treasury",
    "securities",
    "purchases",
    "outlook",
    "growth",
    "spending",
    "exports",
    "deficit",
]


def corpus() -> list[Document]:
    rng = np.random.default_rng(7)
    docs = []
    for d in range(6):
        for page in range(1, 6):
            text = " ".join(rng.choice(WORDS, size=40))
            meta = {"doc_id": f"r{d}#p{page}", "file_id": f"r{d}", "page": page}
            docs.append(Document(page_content=text, metadata=meta))
    return docs


def test_the_offline_rules_rank_as_search_does(tmp_path):
    index = DocumentIndex.build(corpus(), tmp_path / "i", embeddings=HashingEmbeddings(64))
    questions = [
        ("swap lines with foreign banks", {"r1#p2"}),
        ("energy prices and inflation", {"r3#p1", "r3#p4"}, {"doc_id": "r3"}),
        ("treasury purchases", {"r0#p5"}, {"doc_id": "r0"}),
    ]
    pools = fusion_pools.pools(index, questions, lambda m: m["doc_id"], "tuning")
    rules = {
        "BM25": fs.bm25_rule,
        "dense": fs.dense_rule,
        "RRF": fs.rrf_rule(),
        "shipped default": fs.convex_rule(None, 0.5),
    }
    for q in pools:
        fs.prepare(q, index.homogeneity)
        assert len(q["rows"]) == (30 if q["q"].startswith("swap") else 5)
        for label, rule in rules.items():
            assert list(rule(q)[: len(q["searched"][label])]) == q["searched"][label], label
        # one vector per chunk here: the best windows are the best chunks (float ties aside),
        # and RRF over windows is RRF over chunks
        assert set(q["window_list"].tolist()) == set(q["dense_list"].tolist())
        q["dense_list"] = q["window_list"]
        fs.prepare(q, index.homogeneity)
        assert list(fs.window_rrf_rule()(q)) == list(fs.rrf_rule()(q))
    # the shipped weight moved by decisiveness is not the fixed weight: the check can fail
    q = pools[0]
    assert fs.shipped_alpha(q, 0.5) != fs.shipped_alpha(q, 0.0)


def test_measure_counts_units_once_and_the_first_gold_rank():
    q = {"units": ["a", "a", "b", "c"], "gold": {"b", "c", "z"}}
    recall, rr = fs.measure(q, [0, 1, 2, 3])
    assert (recall, rr) == (2 / 3, 1 / 3)
    assert fs.measure(q, [0, 1]) == (0.0, 0.0)

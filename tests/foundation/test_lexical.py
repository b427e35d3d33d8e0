"""One lexical ranker (refgate.lexical.LexicalRanker, bm25s): BM25 scores as the textbook
formula gives them, and the web snapshot, skill search and memory recall all rank through it."""

from __future__ import annotations

import json
import math

import pytest
from langgraph.store.memory import InMemoryStore

from refgate import lexical
from refgate.lexical import LexicalRanker, terms

DOCS = [
    ["fed", "rate", "rate", "cut"],
    ["inflation", "cpi"],
    ["rate", "fed", "fed", "hike", "hike", "hike"],
    [],
]


def reference_bm25(docs, query, k1=1.5, b=0.75):
    """Lucene BM25 written out: idf log(1 + (N - df + .5) / (df + .5)), tf / (tf + k1 * norm)."""
    n = len(docs)
    avg = sum(len(d) for d in docs) / n
    out = []
    for d in docs:
        score = 0.0
        for t in dict.fromkeys(query):
            df = sum(1 for x in docs if t in x)
            tf = d.count(t)
            if df and tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + k1 * (1 - b + b * len(d) / avg))
        out.append(score)
    return out


def test_scores_are_bm25():
    ranker = LexicalRanker(DOCS)
    for query in (["rate"], ["fed", "hike"], ["rate", "rate", "cpi"], ["absent"]):
        assert ranker.scores(query) == pytest.approx(reference_bm25(DOCS, query), rel=1e-5)


def test_rank_is_best_first_positive_only_and_ties_by_index():
    ranker = LexicalRanker([["a", "b"], ["c"], ["a", "b"]])
    assert [i for i, _ in ranker.rank(["a"])] == [0, 2]
    assert ranker.rank(["a"], limit=1)[0][0] == 0
    assert ranker.rank(["zzz"]) == [] and ranker.rank([]) == []
    assert LexicalRanker([]).rank(["a"]) == [] and LexicalRanker([[], []]).rank(["a"]) == []


@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = LexicalRanker.rank

    def rank(self, query, limit=None):
        calls.append(list(query))
        return real(self, query, limit)

    monkeypatch.setattr(lexical.LexicalRanker, "rank", rank)
    return calls


def test_web_snapshot_search_ranks_through_it(counted, tmp_path):
    from refgate.tools.web_providers import SnapshotCorpus

    (tmp_path / "a.txt").write_text("The Committee cut the federal funds rate.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Inflation stayed low.", encoding="utf-8")
    pages = [
        {"url": "https://x.test/a", "file": "a.txt", "title": "Rate"},
        {"url": "https://x.test/b", "file": "b.txt", "title": "Prices"},
    ]
    (tmp_path / "index.json").write_text(json.dumps({"pages": pages}))
    hits = SnapshotCorpus(tmp_path).search("funds rate cut")
    assert [h.url for h in hits] == ["https://x.test/a"]
    assert counted == [terms("funds rate cut")]


def test_skill_search_ranks_through_it(counted):
    from refgate.catalog.skillbook import load_skillbook

    top = load_skillbook().search("largest market cap companies")
    assert top and top[0].skill.id == "ranking-top-n"
    assert len(counted) == 1


def test_memory_fallback_recall_ranks_through_it(counted):
    from refgate.memory.decisions import _lexical_rank

    store = InMemoryStore()
    store.put(("ns",), "k1", {"decision": "Rank companies by market cap", "why": "size"})
    store.put(("ns",), "k2", {"decision": "Use monthly CPI", "why": "inflation"})
    items = list(store.search(("ns",)))
    found = _lexical_rank(items, "market cap ranking of companies", 5)
    assert [item.key for item, _ in found] == ["k1"]
    assert len(counted) == 1

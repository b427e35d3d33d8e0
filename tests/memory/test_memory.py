"""Decisions in a LangGraph Store: namespaced by workspace, recalled by semantic search."""

from langgraph.store.memory import InMemoryStore

from refgate.catalog.toolspec import ToolContext
from refgate.memory.decisions import (
    has_index,
    namespace_for,
    open_store,
    recall_decisions,
    remember_decision,
)
from refgate.memory.embeddings import HashingEmbeddings
from refgate.refs import RefLedger
from refgate.workspace import load_workspace


def ctx_for(settings, workspace, pass_name="harvest"):
    return ToolContext(
        pass_name=pass_name, ledger=RefLedger(), settings=settings, workspace=workspace
    )


def other_workspace(tmp_path):
    root = tmp_path / "other"
    root.mkdir()
    (root / "refgate.toml").write_text('name = "ws-b"\n')
    return load_workspace(root)


DECISIONS = [
    (
        "For inflation questions use the monthly cpi dataset, not the quarterly macro infl column",
        "the gate blocked an annualised quarterly figure",
    ),
    (
        "Rank S&P 500 companies by the raw Market Cap column and state the USD scale",
        "a ranking answer mixed billions and raw dollars",
    ),
]


def test_recall_is_semantic_and_namespaced_by_workspace(settings, workspace, tmp_path):
    store = InMemoryStore(
        index={"dims": 256, "embed": HashingEmbeddings(256), "fields": ["decision", "why"]}
    )
    writer = ctx_for(settings, workspace)
    for decision, why in DECISIONS:
        remember_decision(store, writer, decision, why)
    reader = ctx_for(settings, workspace, "brief")
    ids, events = recall_decisions(store, reader, "What was CPI inflation in 2008?", limit=1)
    assert events[0]["mode"] == "semantic"
    ref = reader.ledger.get(ids[0])
    assert ref.kind == "decisionRef" and ref.payload["recalled"] is True
    assert ref.payload["decision"].startswith("For inflation questions")
    ids, _ = recall_decisions(store, reader, "top companies by market cap", limit=1)
    assert reader.ledger.get(ids[0]).payload["decision"].startswith("Rank S&P 500")
    # Another workspace sees none of them.
    other = ctx_for(settings, other_workspace(tmp_path), "brief")
    assert namespace_for(other) != namespace_for(reader)
    assert recall_decisions(store, other, "What was CPI inflation in 2008?")[0] == []


def test_sqlite_store_under_the_workspace_persists_and_recalls(settings, workspace):
    emb = HashingEmbeddings(384)
    with open_store(workspace, settings, embeddings=emb) as store:
        assert has_index(store)
        for decision, why in DECISIONS:
            remember_decision(store, ctx_for(settings, workspace), decision, why)
    assert (workspace.state_dir / "refgate.sqlite").is_file()
    with open_store(workspace, settings, embeddings=emb) as store:
        reader = ctx_for(settings, workspace, "brief")
        ids, events = recall_decisions(store, reader, "inflation in 2008, monthly cpi", limit=2)
        assert events[0]["mode"] == "semantic" and len(ids) == 2
        assert reader.ledger.get(ids[0]).payload["decision"].startswith("For inflation")


def test_a_store_without_index_recalls_by_word_overlap(settings, workspace):
    store = InMemoryStore()
    for decision, why in DECISIONS:
        remember_decision(store, ctx_for(settings, workspace), decision, why)
    reader = ctx_for(settings, workspace, "brief")
    ids, events = recall_decisions(store, reader, "market cap ranking of companies")
    assert events[0]["mode"] == "lexical"
    assert [reader.ledger.get(i).payload["decision"][:4] for i in ids] == ["Rank"]


def test_a_broken_store_is_recorded_not_raised(settings, workspace):
    class Broken:
        index_config = {"dims": 3}

        def search(self, *a, **k):
            raise RuntimeError("disk on fire")

    ids, events = recall_decisions(Broken(), ctx_for(settings, workspace, "brief"), "q")
    assert ids == [] and events[0]["type"] == "recall_failed"
    assert "disk on fire" in events[0]["error"]


class CountingEmbeddings(HashingEmbeddings):
    """Hashing embeddings that count the texts they embed (a model load would happen there)."""

    def __init__(self) -> None:
        super().__init__(256)
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += len(texts)
        return super().embed_documents(texts)

    def embed_query(self, text):
        self.calls += 1
        return super().embed_query(text)


def test_recall_from_an_empty_memory_embeds_nothing(settings, workspace):
    emb = CountingEmbeddings()
    with open_store(workspace, settings, embeddings=emb) as store:
        reader = ctx_for(settings, workspace, "brief")
        ids, events = recall_decisions(store, reader, "What was CPI inflation in 2008?")
        assert ids == [] and events[0]["mode"] == "empty"
        assert emb.calls == 0
        remember_decision(store, ctx_for(settings, workspace), *DECISIONS[0])
        written = emb.calls
        ids, events = recall_decisions(store, reader, "What was CPI inflation in 2008?")
        assert events[0]["mode"] == "semantic" and len(ids) == 1
        assert emb.calls == written + 1  # the question, once the memory holds a decision

"""The memory relevance threshold's value (``memory_min_score``, set by
benchmarks/memory_relevance.py): with the real MiniLM embeddings, a repeat of a question recalls
its decisions, and a near miss on another series (about 0.45) recalls none at the default."""

from __future__ import annotations

from langgraph.store.memory import InMemoryStore

from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.memory.decisions import recall_decisions, remember_decision
from refgate.memory.embeddings import default_embeddings
from refgate.memory.store import STORE_FIELDS
from refgate.refs import RefLedger

QUESTION = "What was the US unemployment rate in 2009Q3?"
NEAR_MISS = "What was US real GDP growth in 2009?"


def test_the_default_threshold_recalls_a_repeat_and_not_a_near_miss(workspace):
    settings = Settings(model="scripted", api_key="test")
    assert settings.memory_min_score == 0.6
    store = InMemoryStore(
        index={"dims": 384, "embed": default_embeddings(), "fields": list(STORE_FIELDS)}
    )
    writer = ToolContext("harvest", RefLedger(), settings, workspace=workspace)
    remember_decision(store, writer, "inspect dataset macro", f"made for: {QUESTION}")
    reader = ToolContext("brief", RefLedger(), settings, workspace=workspace)
    ids, _ = recall_decisions(store, reader, QUESTION)
    assert len(ids) == 1
    ids, events = recall_decisions(store, reader, NEAR_MISS)
    assert ids == [] and events[0]["below_threshold"] == 1
    # the near miss is a real candidate, kept out by the threshold alone
    (hit,) = store.search(tuple(events[0]["namespace"].split("/")), query=NEAR_MISS, limit=1)
    assert 0.35 < hit.score < 0.6

"""Refs in checkpoints are registered types: running, reading the history of and resuming a
workbench run reads no unregistered type (LangGraph's "Deserializing unregistered type ... will
be blocked in a future version" warning, seen here as its serde event), whichever saver it gets (a plain
InMemorySaver or SqliteSaver from the caller, or refgate's own), and the caller's saver is left
as it was."""

from __future__ import annotations

import sqlite3

import pytest
from foundation_helpers import cite_first
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.checkpoint.sqlite import SqliteSaver

from refgate.graph import build_graph
from refgate.persistence import STATE_TYPES, open_persistence, with_state_types
from refgate.refs import Ref
from refgate.testing import ScriptedChatModel, calls, tool_call

PLAN = '{"lens": "single value", "criteria": ["value matches the dataset"]}'
GOOD = cite_first("val", "Real GDP in 2009Q3 was 12,990.3 billion USD [{ref}].")


def script():
    return ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": "emit_result(values=...)"})),
            "val_ holds realgdp 2009Q3",
            '["units are billions of chained 2005 dollars"]',
            GOOD,
        ]
    )


@pytest.fixture
def events():
    """Every msgpack type event LangGraph emits while the test runs (its log line is printed
    once per process; these events are not deduplicated)."""
    seen: list[dict] = []
    remove = register_serde_event_listener(seen.append)
    yield seen
    remove()


def unregistered(events) -> list[dict]:
    """Events for types read without registration (allowed with the warning, or blocked)."""
    kinds = {"msgpack_unregistered_allowed", "msgpack_blocked", "msgpack_method_blocked"}
    return [e for e in events if e.get("kind") in kinds]


def run_and_read(saver, settings) -> dict:
    graph = build_graph(model=script(), checkpointer=saver, settings=settings)
    config = {"configurable": {"thread_id": "types"}}
    out = graph.invoke({"question": "What was real GDP in 2009Q3?"}, config)
    history = list(graph.get_state_history(config))
    assert len(history) >= 6
    assert all(isinstance(r, Ref) for r in graph.get_state(config).values["refs"].values())
    graph.invoke(None, config)  # resume a finished thread: reads the last checkpoint again
    return out


def test_a_plain_in_memory_saver_reads_refs_without_the_warning(settings, gdp_tool, events):
    saver = InMemorySaver()
    out = run_and_read(saver, settings)
    assert out["gate"]["passed"] is True
    assert unregistered(events) == []
    # The caller's own saver was not changed (the graph holds a registered clone).
    assert saver.serde is not with_state_types(saver).serde


def test_a_plain_sqlite_saver_and_refgates_own_read_refs_without_the_warning(
    settings, gdp_tool, events, tmp_path
):
    conn = sqlite3.connect(tmp_path / "c.sqlite", check_same_thread=False)
    try:
        run_and_read(SqliteSaver(conn), settings)
    finally:
        conn.close()
    with open_persistence(settings, tmp_path, semantic=False) as (checkpointer, _store):
        run_and_read(checkpointer, settings)
    assert unregistered(events) == []


def test_the_check_sees_the_warning_when_a_saver_is_not_registered(events):
    """The control: the same read through an unregistered saver does log it (so the tests
    above would fail if registration were lost)."""
    saver = InMemorySaver()
    ref = Ref.new("valueRef", {"values": {"x": 1.0}})
    typed = saver.serde.dumps_typed({"r": ref})
    assert saver.serde.loads_typed(typed) == {"r": ref}
    assert unregistered(events)
    events.clear()
    assert with_state_types(saver).serde.loads_typed(typed) == {"r": ref}
    assert unregistered(events) == []


@pytest.mark.parametrize("value", [None, True, False])
def test_no_checkpointer_passes_through(value):
    assert with_state_types(value) is value
    assert ("refgate.refs", "Ref") in STATE_TYPES

"""Graph state is plain data, so no checkpointer needs an allowlist.

Refs live in state as ``RefData`` dicts (validated into ``Ref`` where nodes read them). Every
local path that writes or reads checkpoints (a run with its history, a failed run resumed, an
outbound approval resumed) therefore emits neither of LangGraph's serde events behind its two log
lines: ``msgpack_unregistered_allowed`` ("Deserializing unregistered type ... will be blocked in a
future version", LangGraph's default serializer) and ``msgpack_blocked`` ("Blocked deserialization
of ...", strict msgpack: what ``langgraph dev`` and LangGraph Server use, and the next default).
Both savers are used below because each emits only one of them. The log lines themselves are
printed once per process, the events every time, so the events are what the tests count.
The state read back from each saver equals the state the run held, refgate's SQLite and
PostgreSQL savers included. The research graph's resume is in tests/nodes/research/test_plain_state.py,
the dev server's approval in tests/graph/test_dev_server.py.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command

from refgate.config import Settings
from refgate.graph import build_graph
from refgate.memory.persistence import checkpoint_serde, open_persistence
from refgate.refs import Ref, as_ref_map, ref_data
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.workspace import load_workspace
from tests.support.evidence import cite_first
from tests.support.serving import Hook

PLAN = '{"lens": "single value", "criteria": ["value matches the dataset"]}'
GOOD = cite_first("val", "Real GDP in 2009Q3 was 12,990.3 billion USD [{ref}].")
QUESTION = {"question": "What was real GDP in 2009Q3?"}
PG_URL = os.environ.get("REFGATE_TEST_POSTGRES_URL", "")


def strict_saver() -> InMemorySaver:
    """The dev server's case: strict msgpack with LangGraph's safe types and nothing else."""
    return InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))


SAVERS = {"strict": strict_saver, "default": InMemorySaver}


def script(*, fail_critique: bool = False) -> ScriptedChatModel:
    critique = ['["units are billions of chained 2005 dollars"]']
    if fail_critique:
        critique.insert(0, RuntimeError("model endpoint went away"))
    return ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": "emit_result(values=...)"})),
            "val_ holds realgdp 2009Q3",
            *critique,
            GOOD,
            "nothing to remember",
        ]
    )


def read_everything(graph, config) -> dict:
    """The latest state and every checkpoint of the thread with its pending writes (tasks'
    results, interrupts), as ``get_state_history`` deserializes them."""
    history = list(graph.get_state_history(config))
    assert len(history) >= 6
    for snap in history:
        for task in snap.tasks:
            _ = task.result, task.interrupts
    return graph.get_state(config).values


def assert_plain(values: dict, refs_seen: dict) -> None:
    """The state is JSON as it is, and its refs validate into the refs the run issued."""
    assert json.loads(json.dumps(values)) == values
    assert all(type(r) is dict for r in values["refs"].values())
    assert as_ref_map(values["refs"]) == as_ref_map(refs_seen)
    kinds = {r.kind for r in as_ref_map(values["refs"]).values()}
    assert {"executionRef", "valueRef", "verifyRef"} <= kinds


@pytest.mark.parametrize("kind", sorted(SAVERS))
def test_a_run_its_history_and_a_finished_resume_read_only_plain_data(
    kind, settings, gdp_tool, serde_events
):
    graph = build_graph(model=script(), checkpointer=SAVERS[kind](), settings=settings)
    config = {"configurable": {"thread_id": "ask"}}
    *_, held = graph.stream(QUESTION, config, stream_mode="values")
    assert held["gate"]["passed"] is True
    values = read_everything(graph, config)
    assert values == held  # read back through the serializer: unchanged
    assert_plain(values, held["refs"])
    out = graph.invoke(None, config)  # resuming a finished thread reads the last checkpoint
    assert out["refs"] == held["refs"]
    assert serde_events.unregistered() == []


@pytest.mark.parametrize("kind", sorted(SAVERS))
def test_a_failed_run_resumes_from_plain_checkpoints(kind, settings, gdp_tool, serde_events):
    graph = build_graph(
        model=script(fail_critique=True), checkpointer=SAVERS[kind](), settings=settings
    )
    config = {"configurable": {"thread_id": "crash"}}
    with pytest.raises(RuntimeError, match="went away"):
        graph.invoke(QUESTION, config)
    before = graph.get_state(config)
    assert before.next == ("critique",) and before.values["refs"]
    out = graph.invoke(None, config)
    assert out["gate"]["passed"] is True
    assert gdp_tool.func.executed == ["emit_result(values=...)"], "WORK was re-run"
    assert before.values["refs"].items() <= out["refs"].items()
    assert_plain(read_everything(graph, config), out["refs"])
    assert serde_events.unregistered() == []


@pytest.fixture
def hook():
    h = Hook()
    yield h
    h.close()


def webhook_workspace(tmp_path, url: str):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refgate.toml").write_text(
        f'name = "out"\n[outbound]\nwebhook_url = "{url}"\n', encoding="utf-8"
    )
    return load_workspace(root)


def run_to_approval(graph, config) -> dict:
    *_, held = graph.stream(QUESTION, config, stream_mode="values")
    held.pop("__interrupt__", None)  # the stream's marker, not a state channel
    snap = graph.get_state(config)
    assert snap.next == ("deliver",) and snap.values == held
    (request,) = [i.value for t in snap.tasks for i in t.interrupts]
    assert request["approve_outbound"] == "PostReport"
    json.dumps(request)  # the interrupt's payload is plain data too
    return held


@pytest.mark.parametrize("kind", sorted(SAVERS))
def test_an_outbound_approval_resumes_from_plain_checkpoints(
    kind, settings, gdp_tool, serde_events, hook, tmp_path
):
    ws = webhook_workspace(tmp_path, hook.url)
    graph = build_graph(model=script(), checkpointer=SAVERS[kind](), workspace=ws,
                        settings=settings)  # fmt: skip
    config = {"configurable": {"thread_id": "approve"}}
    held = run_to_approval(graph, config)
    assert hook.received == []
    *_, after = graph.stream(Command(resume={"approved": True}), config, stream_mode="values")
    (body,) = hook.received
    assert body["answer"] == held["answer"] and body["gate_passed"] is True
    assert after["refs"] == held["refs"]
    assert_plain(read_everything(graph, config), held["refs"])
    assert serde_events.unregistered() == []


BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not PG_URL, reason="REFGATE_TEST_POSTGRES_URL is unset"),
        ],
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_refgates_savers_keep_the_state_unchanged_across_sessions(
    backend, gdp_tool, serde_events, hook, tmp_path
):
    """Run to the approval in one session, resume it in another (a new connection): the state
    read back equals the state the run held, and the report goes out."""
    settings = Settings(model="scripted", api_key="k", work_max_rounds=4, max_rounds=3,
                        database_url=PG_URL if backend == "postgres" else None)  # fmt: skip
    ws = webhook_workspace(tmp_path, hook.url)
    # a server outlives a test session: the thread id must be new in each
    config = {"configurable": {"thread_id": f"sessions-{uuid.uuid4().hex}"}}
    with open_persistence(settings, ws, semantic=False) as (checkpointer, store):
        graph = build_graph(model=script(), checkpointer=checkpointer, store=store,
                            workspace=ws, settings=settings)  # fmt: skip
        held = run_to_approval(graph, config)
    with open_persistence(settings, ws, semantic=False) as (checkpointer, store):
        graph = build_graph(model=script(), checkpointer=checkpointer, store=store,
                            workspace=ws, settings=settings)  # fmt: skip
        assert graph.get_state(config).values == held
        graph.invoke(Command(resume={"approved": True}), config)
        assert len(hook.received) == 1
        assert_plain(read_everything(graph, config), held["refs"])
    assert serde_events.unregistered() == []


def test_the_check_sees_a_ref_object_in_a_checkpoint(serde_events):
    """The control: a ``Ref`` object in a checkpoint is reported by both savers above (so the
    tests would fail if one came back), and refgate's serializer reads such a checkpoint from an
    earlier version without either message, into the same ref."""
    ref = Ref.new("valueRef", {"values": {"x": 1.0}})
    for make in SAVERS.values():
        serde = make().serde
        typed = serde.dumps_typed({"r": ref})
        serde_events.clear()
        serde.loads_typed(typed)
        assert serde_events.unregistered(), make
    serde_events.clear()
    old = checkpoint_serde().loads_typed(InMemorySaver().serde.dumps_typed({"r": ref}))
    assert serde_events.unregistered() == []
    assert as_ref_map(old) == as_ref_map(ref_data([ref])) == {ref.id: ref}

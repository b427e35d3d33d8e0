"""The research graph's state is plain data: an interrupted run resumes, and its history is read,
through LangGraph's default serializer and through strict msgpack (the dev server's) without
either serde event behind "Deserializing unregistered type" / "Blocked deserialization" (see
tests/foundation/test_plain_state.py), and the state read back is the state the run held."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from refgate.graph.research import build_research_graph, run_config

QUESTION = "What is known about the Aurora rail tunnel?"
SAVERS = {
    "strict": lambda: InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None)),
    "default": InMemorySaver,
}


@pytest.mark.parametrize("kind", sorted(SAVERS))
def test_an_interrupted_research_run_resumes_from_plain_checkpoints(
    kind, script, tiny_web, serde_events
):
    failed = {"n": 0}

    def verify(text):
        if "voter 2/3" in text and failed["n"] == 0:
            failed["n"] += 1
            raise ConnectionError("rate limited; try later")
        return s.default("verify", text)

    s = script(verify=verify)
    graph = build_research_graph(model=s.model(), web_search=tiny_web, web_fetch=tiny_web,
                                 checkpointer=SAVERS[kind]())  # fmt: skip
    config = run_config(thread_id="plain")
    with pytest.raises(ConnectionError):
        graph.invoke({"question": QUESTION}, config)
    stopped = graph.get_state(config, subgraphs=True)
    assert "verify" in stopped.next and stopped.values["sources"]
    *_, held = graph.stream(None, config, stream_mode="values")
    assert held["report"]["status"] == "complete"
    history = list(graph.get_state_history(config))
    assert len(history) >= 4
    for snap in history:
        for task in snap.tasks:
            _ = task.result, task.error
    values = graph.get_state(config).values
    assert values == held
    assert json.loads(json.dumps(values)) == values
    assert serde_events.unregistered() == []

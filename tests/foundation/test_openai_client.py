"""The real ChatOpenAI client against a scripted OpenAI-compatible server on loopback."""

import openai
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from refgate.config import Settings
from refgate.graph import build_graph
from refgate.testing_openai import OpenAIStub, http_error, tool, tool_reply
from tests.support.evidence import ids_in
from tests.support.stub_answers import PLAN


def answer(req) -> str:
    ids = ids_in(req.text, "val")
    return f"Real GDP in 2009Q3 was 12,990.3 billion USD [{ids[-1]}]."


def settings_for(stub: OpenAIStub, retries: int) -> Settings:
    return Settings(
        model="stub-model",
        base_url=stub.base_url,
        api_key="stub-key",
        max_retries=retries,
        timeout=20,
        work_max_rounds=4,
        max_rounds=3,
    )


def test_tool_calls_and_a_429_retry_through_the_real_client(gdp_tool):
    script = [
        PLAN,
        http_error(429, "slow down"),
        tool_reply(tool("RunPython", code="emit")),
        "done",
        "[]",
        answer,
    ]
    with OpenAIStub(script=script) as stub:
        graph = build_graph(checkpointer=InMemorySaver(), settings=settings_for(stub, retries=2))
        out = graph.invoke(
            {"question": "What was real GDP in 2009Q3?"}, {"configurable": {"thread_id": "oa"}}
        )
        assert stub.remaining == 0
        requests = stub.chat_requests()
    assert out["gate"]["passed"] is True
    assert gdp_tool.func.executed == ["emit"]
    # WORK's requests carried exactly its whitelist; COMPOSE's none.
    work_tools = requests[1].tools
    assert sorted(work_tools) == sorted(
        ["RunPython", "InspectDataset", "EngineCall", "WebSearch", "SaveArtifact"]
    )
    assert requests[-1].tools == []
    assert len(requests) == 6  # the 429 was retried by the client


def test_a_500_past_the_retries_is_a_clear_error_and_nothing_is_lost(gdp_tool):
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "oa500"}}
    with OpenAIStub(script=[PLAN, http_error(500), http_error(500)]) as stub:
        graph = build_graph(checkpointer=saver, settings=settings_for(stub, retries=1))
        with pytest.raises(openai.InternalServerError):
            graph.invoke({"question": "What was real GDP in 2009Q3?"}, config)
        snapshot = graph.get_state(config)
        assert snapshot.next == ("work",)
        assert snapshot.values["plan"]["lens"] == "single value"
        stub.add(tool_reply(tool("RunPython", code="emit")), "done", "[]", answer)
        out = graph.invoke(None, config)
        assert stub.remaining == 0
    assert out["gate"]["passed"] is True
    passes = [
        e["pass"] for e in graph.get_state(config).values["trace"] if e["type"] == "pass_start"
    ]
    assert passes == ["brief", "work", "critique", "compose", "gate", "harvest"]

"""The scripted OpenAI-compatible server, through the real langchain-openai client."""

from __future__ import annotations

import concurrent.futures as cf

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from refgate.testing_openai import OpenAIStub, Reply, http_error, tool, tool_reply


def _model(stub: OpenAIStub, **kw) -> ChatOpenAI:
    kw.setdefault("max_retries", 0)
    return ChatOpenAI(base_url=stub.base_url, api_key="k", model="stub-model", timeout=10, **kw)


def test_plain_and_tool_call_replies_in_order():
    with OpenAIStub(["hello there", tool_reply(tool("Lookup", "c1", q="gdp", n=3))]) as stub:
        model = _model(stub)
        assert model.invoke("hi").content == "hello there"
        bound = model.bind_tools(
            [
                {
                    "type": "function",
                    "function": {
                        "name": "Lookup",
                        "description": "x",
                        "parameters": {
                            "type": "object",
                            "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                        },
                    },
                }
            ]
        )
        msg = bound.invoke("find it")
        assert msg.tool_calls == [
            {"name": "Lookup", "args": {"q": "gdp", "n": 3}, "id": "c1", "type": "tool_call"}
        ]
        assert msg.usage_metadata["total_tokens"] > 0
        assert stub.remaining == 0
        reqs = stub.chat_requests()
        assert len(reqs) == 2 and reqs[1].tools == ["Lookup"]
        assert reqs[0].text == "hi"


def test_streaming_text_and_tool_calls():
    with OpenAIStub(
        [
            Reply(content="a streamed answer of some length"),
            tool_reply(tool("Lookup", "c9", q="rates")),
        ],
        chunk_size=5,
    ) as stub:
        model = _model(stub, streaming=True, stream_usage=True)
        chunks = list(model.stream("go"))
        assert len(chunks) > 3
        assert "".join(c.content for c in chunks) == "a streamed answer of some length"
        full = None
        for c in model.stream("again"):
            full = c if full is None else full + c
        assert full.tool_calls[0]["name"] == "Lookup"
        assert full.tool_calls[0]["args"] == {"q": "rates"}
        assert all(r.stream for r in stub.chat_requests())


def test_keyed_rules_and_responder_answer_by_prompt():
    def responder(req):
        if "echo:" in req.text:
            return "ECHO " + req.text.split("echo:", 1)[1].strip()
        return None

    with OpenAIStub(
        rules=[("planner", "PLAN"), (lambda r: "Lookup" in r.tools, "TOOLS")],
        responder=responder,
        default="DEFAULT",
    ) as stub:
        model = _model(stub)
        assert (
            model.invoke([SystemMessage("you are the planner"), HumanMessage("x")]).content
            == "PLAN"
        )
        assert model.invoke("echo: kestrel").content == "ECHO kestrel"
        assert model.invoke("nothing").content == "DEFAULT"
        assert stub.chat_requests()[0].system == "you are the planner"


def test_429_is_retried_by_the_client_and_500_raises():
    with OpenAIStub([http_error(429), "after the limit", http_error(500, "boom")]) as stub:
        assert _model(stub, max_retries=2).invoke("x").content == "after the limit"
        assert [r.status for r in stub.chat_requests()] == [429, 200]
        with pytest.raises(openai.InternalServerError):
            _model(stub).invoke("y")


def test_exhausted_script_answers_500_and_records_the_miss():
    with OpenAIStub(["only one"]) as stub:
        model = _model(stub)
        model.invoke("first")
        with pytest.raises(openai.InternalServerError):
            model.invoke("second prompt")
        assert [m.text for m in stub.misses] == ["second prompt"]


def test_concurrent_requests_are_answered_independently():
    with OpenAIStub(responder=lambda r: "re: " + r.text) as stub:
        model = _model(stub)
        with cf.ThreadPoolExecutor(8) as pool:
            out = list(pool.map(lambda i: model.invoke(f"word{i}").content, range(24)))
        assert out == [f"re: word{i}" for i in range(24)]
        assert len(stub.chat_requests()) == 24

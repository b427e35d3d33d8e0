"""COMPOSE's answer streamed as it is written (``answer_delta`` events) and the asyncio API
(``refgate.aask``): through the real OpenAI client against the scripted stub on loopback (its
replies arrive as server-sent chunks), on a copy of the sample workspace."""

from __future__ import annotations

import asyncio
import threading

import pytest
from typer.testing import CliRunner

import refgate
from refgate.cli import app
from refgate.testing_openai import OpenAIStub
from tests.support.serving import FIRST_QUESTION, conversation_responder


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub(responder=conversation_responder) as s:
        s.chunk_size = 4  # many small pieces, as a real model streams
        monkeypatch.setenv("OPENAI_BASE_URL", s.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
        monkeypatch.setenv("REFGATE_MODEL", "stub-model")
        monkeypatch.delenv("REFGATE_DATABASE_URL", raising=False)
        yield s


def test_aask_streams_the_answer_to_an_async_handler_on_the_loop(sample, stub):
    seen: list[dict] = []
    threads: set[int] = set()

    async def on_event(chunk: dict) -> None:
        threads.add(threading.get_ident())
        seen.append(chunk)

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        answer = await refgate.aask(FIRST_QUESTION, workspace=sample, on_event=on_event)
        await asyncio.sleep(0)  # let the last handler tasks run
        task.cancel()
        return answer, ticks, threading.get_ident()

    answer, ticks, loop_thread = asyncio.run(main())
    assert answer.passed, answer.gate
    assert ticks > 10  # the event loop kept running while the graph worked
    assert threads == {loop_thread}  # handlers ran on the loop, not in the worker thread
    kinds = [e.get("event") for e in seen]
    deltas = [e for e in seen if e.get("event") == "answer_delta"]
    assert len(deltas) > 5 and {e["pass"] for e in deltas} == {"compose"}
    assert "".join(e["text"] for e in deltas).strip() == answer.answer
    first, last = kinds.index("answer_delta"), len(kinds) - 1 - kinds[::-1].index("answer_delta")
    assert kinds.index("pass_started", 0) < first and last < kinds.index("gate_verdict")
    # the streamed reply still reports its tokens (stream_options.include_usage)
    assert answer.usage.per_pass["compose"]["total_tokens"] > 0
    compose = [r for r in stub.chat_requests() if "You are COMPOSE" in r.system]
    assert compose and all(r.stream for r in compose)


def test_ask_calls_a_plain_handler_with_the_same_deltas(sample, stub):
    seen: list[dict] = []
    answer = refgate.ask(FIRST_QUESTION, workspace=sample, on_event=seen.append)
    text = "".join(e["text"] for e in seen if e.get("event") == "answer_delta")
    assert text.strip() == answer.answer


def test_the_cli_shows_the_answer_as_it_is_written_then_the_verdict(sample, stub):
    result = CliRunner().invoke(app, ["ask", FIRST_QUESTION, "-w", str(sample)])
    assert result.exit_code == 0, result.output
    err = result.stderr
    assert "as COMPOSE writes it" in err
    streamed = err.split("as COMPOSE writes it", 1)[1]
    assert "The US unemployment rate was 9.6% in 2009Q3" in "".join(streamed.split("\n"))
    out = result.output
    assert out.index("as COMPOSE writes it") < out.index("GATE passed")

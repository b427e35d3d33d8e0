"""Follow-ups on a thread: a finished thread takes a new question, the full pass graph runs with
the earlier turns as context, the new answer may cite the first answer's refs, and the GATE
checks those citations like any other. Through the Python API and the CLI, on a copy of the
sample workspace, against the scripted OpenAI-compatible stub (the real client path)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import refgate
from refgate.cli import app
from refgate.config import ConfigError
from refgate.refs import cited_ids
from refgate.testing_openai import OpenAIStub, Reply
from tests.support.serving import (
    FIRST_QUESTION,
    FOLLOW_UP,
    conversation_responder,
    pass_of,
)


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub(responder=conversation_responder) as s:
        monkeypatch.setenv("OPENAI_BASE_URL", s.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
        monkeypatch.setenv("REFGATE_MODEL", "stub-model")
        monkeypatch.delenv("REFGATE_DATABASE_URL", raising=False)
        yield s


def compose_prompts(stub) -> list[str]:
    return [r.text for r in stub.chat_requests() if pass_of(r.system) == "compose"]


def test_a_follow_up_cites_a_ref_of_the_first_answer_and_passes_the_gate(sample, stub):
    first = refgate.ask(FIRST_QUESTION, workspace=sample, thread="conv")
    assert first.passed, first.gate
    first_cited = cited_ids(first.answer, first.refs)
    assert len(first_cited) == 1 and first.refs[first_cited[0]].payload["period"] == "2009Q3"
    calls_after_first = len(stub.chat_requests())

    second = refgate.ask(FOLLOW_UP, workspace=sample, thread="conv")
    assert second.thread == "conv" and second.question == FOLLOW_UP
    assert second.passed, second.gate
    cited = cited_ids(second.answer, second.refs)
    assert first_cited[0] in cited, second.answer  # the first turn's ref, checked by the GATE
    assert any(second.refs[c].payload["period"] == "2008Q3" for c in cited)
    # the whole pass graph ran again, with the first turn as context
    prompt = compose_prompts(stub)[-1]
    assert f"Q1: {FIRST_QUESTION}" in prompt and "A1: The US unemployment rate was 9.6%" in prompt
    assert f"A1 cited: {first_cited[0]}" in prompt
    passes = {pass_of(r.system) for r in stub.chat_requests()[calls_after_first:]}
    assert passes == {"brief", "work", "critique", "compose"}
    # the conversation is in the record (and so in --json and the reports)
    turns = second.to_dict()["turns"]
    assert [t["question"] for t in turns] == [FIRST_QUESTION, FOLLOW_UP]
    assert turns[0]["cited"] == first_cited and turns[1]["passed"] is True
    # this turn's tokens only: the stub reports usage per request
    assert 0 < second.usage.total["total_tokens"] < first.usage.total["total_tokens"] * 2


def test_a_follow_up_citing_an_earlier_ref_for_a_wrong_value_is_blocked(sample, stub):
    refgate.ask(FIRST_QUESTION, workspace=sample, thread="wrong")

    def misquote(request):
        if pass_of(request.system) == "compose" and "Q1:" in request.text:
            reply = conversation_responder(request)
            return reply.replace("against 9.6%", "against 7.5%")
        return conversation_responder(request)

    stub.responder = misquote
    second = refgate.ask(FOLLOW_UP, workspace=sample, thread="wrong")
    assert not second.passed
    assert any("7.5" in u["claim"] for u in second.unverified), second.unverified


def test_an_interrupted_thread_still_refuses_another_question_and_resumes(sample, stub):
    def failing_compose(request):
        if pass_of(request.system) == "compose":
            return Reply(status=400, error="scripted failure in COMPOSE")
        return conversation_responder(request)

    stub.responder = failing_compose
    with pytest.raises(refgate.RunFailed):
        refgate.ask(FIRST_QUESTION, workspace=sample, thread="cut")
    stub.responder = conversation_responder
    with pytest.raises(ConfigError, match="interrupted on another question"):
        refgate.ask(FOLLOW_UP, workspace=sample, thread="cut")
    resumed = refgate.ask(None, workspace=sample, thread="cut")
    assert resumed.passed and resumed.question == FIRST_QUESTION
    # a finished thread given its own question again (or none) returns the stored answer
    n = len(stub.chat_requests())
    again = refgate.ask(FIRST_QUESTION, workspace=sample, thread="cut")
    assert again.answer == resumed.answer and len(stub.chat_requests()) == n


def test_the_cli_takes_a_follow_up_on_a_thread(sample, stub):
    runner = CliRunner()
    args = ["-w", str(sample), "--thread", "cli-conv", "--json"]
    first = runner.invoke(app, ["ask", FIRST_QUESTION, *args])
    assert first.exit_code == 0, first.output
    first_doc = json.loads(first.stdout)
    second = runner.invoke(app, ["ask", FOLLOW_UP, *args])
    assert second.exit_code == 0, second.output
    doc = json.loads(second.stdout)
    first_ids = cited_ids(first_doc["answer"], first_doc["refs"])
    assert set(first_ids) & set(cited_ids(doc["answer"], doc["refs"]))
    assert doc["passed"] is True
    assert [t["question"] for t in doc["turns"]] == [FIRST_QUESTION, FOLLOW_UP]
    # reports show the conversation: the earlier question and answer, then this one
    for ext in ("md", "html"):
        out = sample.parent / f"conv.{ext}"
        written = runner.invoke(app, ["report", "cli-conv", "-w", str(sample), "-o", str(out)])
        assert written.exit_code == 0, written.output
        text = out.read_text(encoding="utf-8")
        assert "Earlier in this conversation" in text
        assert FOLLOW_UP in text.split("Earlier in this conversation", 1)[0]  # the title
        earlier = text.split("Earlier in this conversation", 1)[1].split("6.0% in 2008Q3")[0]
        assert FIRST_QUESTION in earlier and "9.6% in 2009Q3" in earlier


def test_report_json_is_the_ask_json_document(sample, stub):
    """`refgate report THREAD --output x.json` writes what `refgate ask --json` printed:
    passed, unverified and usage included (only the timestamps differ)."""
    runner = CliRunner()
    args = ["-w", str(sample), "--thread", "json-doc", "--json"]
    asked = runner.invoke(app, ["ask", FIRST_QUESTION, *args])
    assert asked.exit_code == 0, asked.output
    printed = json.loads(asked.stdout)
    out = sample.parent / "run.json"
    written = runner.invoke(app, ["report", "json-doc", "-w", str(sample), "-o", str(out)])
    assert written.exit_code == 0, written.output
    stored = json.loads(out.read_text(encoding="utf-8"))
    assert stored["passed"] is True and stored["unverified"] == []
    assert stored["usage"]["total"]["total_tokens"] > 0
    for doc in (printed, stored):
        doc.pop("created_at"), doc.pop("duration_s")
    assert stored == printed

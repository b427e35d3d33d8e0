"""Boundary B3 for real: DELIVER posts the finished report to the workspace's webhook (a loopback
HTTP server) only after a person approves through a LangGraph interrupt; reject and timeout send
nothing. Through the graph (what Studio drives) and through `refgate ask` (the CLI prompt)."""

from __future__ import annotations

import json
import time
from html import unescape

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from refgate.config import Settings
from refgate.graph import build_graph
from refgate.memory.audit import audit_path, read_audit
from refgate.report.html import render_run_html
from refgate.report.markdown import render_run_markdown
from refgate.report.run import run_record
from refgate.testing import ScriptedChatModel
from refgate.workspace import WorkspaceError, load_workspace
from tests.support.serving import Hook

SCRIPT = ['{"lens": "overview"}', "nothing to compute", "[]", "A plain answer.",
          "still nothing", "A plain answer."]  # fmt: skip


@pytest.fixture
def hook():
    h = Hook()
    yield h
    h.close()


def workspace_with(tmp_path, url: str, timeout: float = 300):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "refgate.toml").write_text(
        f'name = "out"\n[outbound]\nwebhook_url = "{url}"\napproval_timeout_s = {timeout}\n',
        encoding="utf-8",
    )
    return load_workspace(root)


def run_to_approval(ws, thread="t1", *, audit=False):
    settings = Settings(model="scripted", api_key="k", work_max_rounds=2, max_rounds=2)
    graph = build_graph(model=ScriptedChatModel(responses=list(SCRIPT)), audit=audit,
                        checkpointer=InMemorySaver(), workspace=ws, settings=settings)  # fmt: skip
    config = {"configurable": {"thread_id": thread}}
    graph.invoke({"question": "What is refgate?"}, config)
    snap = graph.get_state(config)
    assert snap.next == ("deliver",)
    (request,) = [i.value for t in snap.tasks for i in t.interrupts]
    return graph, config, request


def deliver_events(graph, config) -> list[dict]:
    trace = graph.get_state(config).values["trace"]
    return [e for e in trace if e.get("pass") == "deliver"]


def test_an_approved_report_is_posted_to_the_configured_webhook(tmp_path, hook):
    graph, config, request = run_to_approval(workspace_with(tmp_path, hook.url))
    assert request["approve_outbound"] == "PostReport" and request["to"] == hook.url
    assert request["args"]["report"]["answer"].startswith("A plain answer.")
    assert hook.received == []  # nothing leaves before the approval
    graph.invoke(Command(resume={"approved": True}), config)
    (body,) = hook.received
    assert body["type"] == "refgate.report" and body["question"] == "What is refgate?"
    assert body["answer"] == graph.get_state(config).values["answer"]
    assert body["thread_id"] == "t1" and body["gate_passed"] is False and body["unverified"]
    assert deliver_events(graph, config)[-1]["type"] == "report_posted"
    assert graph.get_state(config).next == ()
    # the post is listed as sent (audit record, both reports) with the webhook it went to
    state = graph.get_state(config).values
    (sent,) = state["provenance"]["sent"]
    assert sent["tool"] == "PostReport" and hook.url in sent["to"]
    record = run_record(state, thread_id="t1")
    for report in (render_run_markdown(record), unescape(render_run_html(record))):
        assert f"sent to the workspace webhook {hook.url} (PostReport)" in report


def test_a_served_runs_post_is_kept_in_the_audit_file(tmp_path, hook):
    # served graphs write the run record in HARVEST, before DELIVER: the post is appended
    ws = workspace_with(tmp_path, hook.url)
    graph, config, _ = run_to_approval(ws, audit=True)
    graph.invoke(Command(resume={"approved": True}), config)
    lines = [json.loads(x) for x in audit_path(ws).read_text(encoding="utf-8").splitlines()]
    assert [x["type"] for x in lines] == ["run", "outbound"]
    (sent,) = lines[1]["sent"]
    assert lines[1]["thread_id"] == "t1" and sent["tool"] == "PostReport"
    assert hook.url in sent["to"]
    log = read_audit(ws)  # the post joins its run's record, no line is left unreadable
    assert not log.unreadable and log.runs[0]["outbound"][-1] == sent


def test_a_rejected_report_is_not_sent(tmp_path, hook):
    graph, config, _ = run_to_approval(workspace_with(tmp_path, hook.url))
    graph.invoke(Command(resume={"approved": False}), config)
    assert hook.received == []
    assert not (graph.get_state(config).values.get("provenance") or {}).get("sent")
    last = deliver_events(graph, config)[-1]
    assert last["type"] == "report_not_posted" and "did not approve" in last["reason"]
    assert graph.get_state(config).next == ()


def test_an_approval_after_the_timeout_sends_nothing(tmp_path, hook):
    graph, config, request = run_to_approval(workspace_with(tmp_path, hook.url, timeout=0.5))
    assert request["args"]["expires_at"] <= time.time() + 0.5
    time.sleep(0.8)
    graph.invoke(Command(resume={"approved": True}), config)
    assert hook.received == []
    last = deliver_events(graph, config)[-1]
    assert last["type"] == "report_not_posted" and "expired" in last["reason"]


def test_no_webhook_no_interrupt_and_bad_config_is_refused(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "refgate.toml").write_text('name = "plain"\n', encoding="utf-8")
    settings = Settings(model="scripted", api_key="k", work_max_rounds=2, max_rounds=2)
    graph = build_graph(model=ScriptedChatModel(responses=list(SCRIPT)),
                        checkpointer=InMemorySaver(), workspace=load_workspace(root),
                        settings=settings)  # fmt: skip
    config = {"configurable": {"thread_id": "p"}}
    graph.invoke({"question": "What is refgate?"}, config)
    assert graph.get_state(config).next == ()
    for bad in ('webhook_url = "file:///etc/passwd"', 'webhook_url = "http://"',
                'approval_timeout_s = 0', 'url = "http://x"'):  # fmt: skip
        (root / "refgate.toml").write_text(f'name = "plain"\n[outbound]\n{bad}\n')
        with pytest.raises(WorkspaceError, match="outbound"):
            load_workspace(root)


# --- the CLI: `refgate ask` prompts at the terminal ---------------------------------------------


@pytest.fixture
def stub_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REFGATE_MODEL", "REFGATE_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REFGATE_MAX_RETRIES", "1")
    monkeypatch.setenv("REFGATE_STORE_EMBED", "hashing")
    return monkeypatch


@pytest.mark.parametrize(("typed", "sent"), [("y\n", True), ("n\n", False), ("", False)])
def test_refgate_ask_asks_before_posting(tmp_path, hook, stub_env, typed, sent):
    from typer.testing import CliRunner

    from refgate.cli import app
    from refgate.testing_openai import OpenAIStub

    ws = workspace_with(tmp_path, hook.url)
    with OpenAIStub(script=[*SCRIPT, "nothing to remember"]) as stub:
        stub_env.setenv("OPENAI_BASE_URL", stub.base_url)
        stub_env.setenv("OPENAI_API_KEY", "stub-key")
        stub_env.setenv("REFGATE_MODEL", "stub-model")
        result = CliRunner().invoke(
            app, ["ask", "What is refgate?", "-w", str(ws.root), "--thread", "c1"], input=typed
        )
    assert result.exit_code == 3, result.output  # the answer went out with unmet claims
    assert "approval needed" in result.stderr and hook.url in result.stderr
    assert len(hook.received) == (1 if sent else 0)
    if sent:
        assert hook.received[0]["thread_id"] == "c1"


def test_the_terminal_prompt_refuses_when_nobody_answers_in_time():
    import os

    from refgate.cli.approval import terminal_approver

    r, w = os.pipe()  # a terminal nobody types into
    stream = os.fdopen(r, "r")
    try:
        started = time.monotonic()
        answer = terminal_approver(0.3, stream)({"approve_outbound": "PostReport", "to": "x"})
        assert answer == {"approved": False, "reason": "timeout"}
        assert time.monotonic() - started < 5
    finally:
        os.close(w)  # the reader thread sees end of input and lets go of the stream
        time.sleep(0.1)
        stream.close()

"""WORK's McpCall against a real MCP server (tests/tools/mcp_fixture_server.py, the official
SDK), started over stdio and over streamable HTTP: its output is fenced as untrusted, secondary
evidence; a write-like tool needs a person's approval of that exact call; arguments are
outbound (checked and listed); bad configuration and failing servers give clear errors; a served
graph starts a client-named workspace's servers only under REFGATE_ALLOWED_WORKSPACES.

Each session starts a Python MCP server (seconds on a loaded machine), so the tests share
sessions where they can."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import refgate
from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.graph import build_graph
from refgate.provenance import RunProvenance
from refgate.refs import RefLedger, as_ref_map
from refgate.report.cards import sent_lines, source_of
from refgate.testing import KeyedChatModel, ScriptedChatModel, calls, tool_call
from refgate.tools.executor import execute_tool_call
from refgate.tools.mcp_call import pass_sessions
from refgate.trust import trust
from refgate.workspace import WorkspaceError, load_served_workspace, load_workspace

SERVER = Path(__file__).parent / "mcp_fixture_server.py"
QUESTION = "What is the EUR rate the fx server reports?"
PLAN = '{"lens": "single value", "criteria": []}'
ANSWER = "The fx server reported a EUR rate; it is secondary evidence."


def write_workspace(root: Path, servers: str, *, trusted: bool = True) -> Path:
    """A workspace naming ``servers``, trusted on this machine (refgate trust) unless not."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "refgate.toml").write_text(f'name = "mcp"\n{servers}', encoding="utf-8")
    if trusted:
        with contextlib.suppress(WorkspaceError):
            trust(load_workspace(root))
    return root


def fx(extra: str = "", name: str = "fx") -> str:
    return (
        f"[mcp.servers.{name}]\n"
        f"command = {json.dumps([sys.executable, str(SERVER)])}\n"
        'description = "USD exchange rates (fixture)"\n'
        f"start_timeout_s = 120\n{extra}"
    )


@pytest.fixture
def settings(monkeypatch) -> Settings:
    monkeypatch.setenv("REFGATE_STORE_EMBED", "hashing")
    return Settings(
        model="scripted", api_key="k", work_max_rounds=4, max_rounds=2, memory_min_score=0
    )


def is_work(text: str) -> bool:
    return "You are WORK" in text


def compose(text: str) -> str:
    """Cite the MCP result for its number when there is one (secondary: the GATE blocks it)."""
    found = re.search(r"\b(doc_[0-9a-f]{10})\b", text)
    if found is None:
        return ANSWER
    return f"The fx server reported a USD/EUR rate of 1.0842 [{found.group(1)}]."


def work_then(first_call, *, then=None):
    """Replies keyed on the pass: WORK's first round makes ``first_call`` (and ``then`` after
    a first result), everything else a fixed reply."""

    def work(text: str):
        results = text.count('"untrustedContent"')
        if "MCP fx.rate result" in text:  # a GATE retry: the evidence is in "Refs so far"
            return "done: nothing more to fetch"
        if results == 0:
            return calls(first_call)
        if then is not None and results == 1:
            return calls(then)
        return "done: the MCP result is the evidence"

    return KeyedChatModel(
        rules=[
            (lambda t: "You are BRIEF" in t, PLAN),
            (is_work, work),
            (lambda t: "You are CRITIQUE" in t, "[]"),
            (lambda t: "You are COMPOSE" in t, compose),
        ],
        default="nothing to remember",
    )


def work_calls(model) -> list[dict]:
    return [c for c in model.calls if is_work(c["text"])]


def tool_messages(call: dict) -> list[ToolMessage]:
    return [m for m in call["messages"] if isinstance(m, ToolMessage)]


def test_work_calls_a_read_only_tool_and_its_output_is_fenced_secondary_evidence(
    tmp_path, settings
):
    ws = load_workspace(write_workspace(tmp_path / "ws", fx()))
    model = work_then(tool_call("McpCall", {"server": "fx", "tool": "rate",
                                            "arguments": {"currency": "EUR"}}))  # fmt: skip
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=ws, settings=settings)
    config = {"configurable": {"thread_id": "fenced"}}
    graph.invoke({"question": QUESTION}, config)
    state = graph.get_state(config).values

    first, second = work_calls(model)[:2]
    assert "McpCall" in first["tools"] and "fx: USD exchange rates (fixture)" in first["text"]
    (result,) = tool_messages(second)
    body = json.loads(result.content)
    assert body["ok"] is True and body["untrustedContent"] is True
    output = body["data"]["output"]
    assert output.startswith("⟦UNTRUSTED:") and "USD/EUR 1.0842" in output
    # B1: the turn that read the server's output has no write tool
    assert "SaveArtifact" in first["tools"] and "SaveArtifact" not in second["tools"]
    (ref,) = [r for r in as_ref_map(state["refs"]).values() if r.source == "mcp:fx/rate"]
    assert ref.kind == "docRef" and ref.is_external and ref.is_secondary
    assert "1.0842" in ref.payload["excerpt"] and ref.id == body["data"]["ref"]
    card_source = source_of(ref.model_dump(mode="json"))
    assert card_source["label"].startswith("MCP server tool") and not card_source["linkable"]
    assert ("server", "fx") in card_source["details"]
    # later passes see it fenced, as any untrusted text
    compose = next(c for c in model.calls if "You are COMPOSE" in c["text"])
    fenced = compose["text"].split(ref.id, 1)[1]
    assert "⟦UNTRUSTED:" in fenced.split("1.0842")[0]
    # secondary evidence backs no number alone: the GATE blocks the rate cited to it
    codes = {i["code"] for i in state["gate"]["issues"] if i.get("severity", "block") == "block"}
    assert "external_only_numeric" in codes, state["gate"]["issues"]
    # the argument it sent is listed for the reports and the audit
    assert {"tool": "McpCall", "to": "the MCP server 'fx'", "slot": "arguments.currency",
            "text": "EUR"} in state["provenance"]["sent"]  # fmt: skip


def test_a_write_like_tool_is_refused_without_approval_and_runs_with_it(tmp_path, settings):
    root = write_workspace(tmp_path / "ws", fx())
    note = tool_call("McpCall", {"server": "fx", "tool": "post_note",
                                 "arguments": {"text": "EUR rate checked"}})  # fmt: skip
    requests: list[dict] = []

    model = work_then(note)
    refgate.ask(QUESTION, workspace=root, model=model, settings=settings, thread="no")
    notes = root / ".refgate" / "mcp" / "fx" / "notes.txt"  # its state folder (sandboxed)
    assert not notes.exists()  # nothing reached the server's write
    (refusal,) = tool_messages(work_calls(model)[-1])
    assert "a person did not approve this call" in refusal.content

    def approve(request: dict) -> dict:
        requests.append(request)
        return {"approved": True}

    model = work_then(note)
    answered = refgate.ask(QUESTION, workspace=root, model=model, settings=settings,
                           thread="yes", approve=approve)  # fmt: skip
    # what went to the server is listed in the reports (and the audit record)
    assert sent_lines(answered.to_dict()["outbound"]) == [
        "sent to the MCP server 'fx' (McpCall): \"EUR rate checked\""
    ]
    (request,) = requests
    assert request["approve_outbound"] == "McpCall" and request["to"] == "the MCP server 'fx'"
    assert request["args"]["arguments"] == {"text": "EUR rate checked"} and request["call"]
    assert "write-like" in request["reason"]
    # the resumed WORK ran the model again and the approved call once
    assert notes.read_text() == "EUR rate checked\n"


def test_an_approval_names_its_call_and_untrusted_turns_never_write(tmp_path, settings):
    ws = load_workspace(write_workspace(tmp_path / "ws", fx()))
    note = tool_call("McpCall", {"server": "fx", "tool": "post_note",
                                 "arguments": {"text": "hello"}})  # fmt: skip
    graph = build_graph(model=work_then(note), checkpointer=InMemorySaver(), workspace=ws,
                        settings=settings)  # fmt: skip
    config = {"configurable": {"thread_id": "bind"}}
    graph.invoke({"question": QUESTION}, config)
    (request,) = [i.value for t in graph.get_state(config).tasks for i in t.interrupts]
    assert request["resume_with"] == {
        "approved": True, "call": request["call"], "requested_at": request["requested_at"]
    }  # fmt: skip
    graph.invoke(Command(resume={**request["resume_with"], "call": "another-call"}), config)
    assert not (ws.root / ".refgate" / "mcp" / "fx" / "notes.txt").exists()

    # an approval that comes after approval_timeout_s is refused, as DELIVER's is
    late = load_workspace(
        write_workspace(tmp_path / "late", fx() + "[outbound]\napproval_timeout_s = 0.5\n")
    )
    graph = build_graph(model=work_then(note), checkpointer=InMemorySaver(), workspace=late,
                        settings=settings)  # fmt: skip
    config = {"configurable": {"thread_id": "late"}}
    graph.invoke({"question": QUESTION}, config)
    (request,) = [i.value for t in graph.get_state(config).tasks for i in t.interrupts]
    time.sleep(0.8)
    graph.invoke(Command(resume=request["resume_with"]), config)
    assert not (late.root / ".refgate" / "mcp" / "fx" / "notes.txt").exists()
    late_error = [e for e in graph.get_state(config).values["trace"] if e.get("tool") == "McpCall"]
    assert "within approval_timeout_s" in late_error[-1]["error"]

    # B1: after reading the server's output, a write-like tool is refused without asking,
    # and an argument the person did not write does not leave (outbound policy)
    read = tool_call("McpCall", {"server": "fx", "tool": "rate", "arguments": {"currency": "EUR"}})
    krw = tool_call("McpCall", {"server": "fx", "tool": "rate", "arguments": {"currency": "KRW"}})
    # the question's own words: the outbound policy lets them go, B1 still refuses the write
    echo = tool_call("McpCall", {"server": "fx", "tool": "post_note",
                                 "arguments": {"text": "the EUR rate"}})  # fmt: skip
    model = ScriptedChatModel(responses=[PLAN, calls(read), calls(echo, krw), "done", "[]",
                                         ANSWER, *["nothing"] * 6])  # fmt: skip
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=ws, settings=settings)
    config = {"configurable": {"thread_id": "b1"}}
    graph.invoke({"question": QUESTION}, config)
    assert graph.get_state(config).next == ()  # no approval was asked
    trace = graph.get_state(config).values["trace"]
    wrote, sent = [e for e in trace if e.get("tool") == "McpCall"][1:]
    assert "write-like" in wrote["error"] and "boundary B1" in wrote["error"]
    assert sent["status"] == "refused" and "KRW" in sent["error"]
    assert not (ws.root / ".refgate" / "mcp" / "fx" / "notes.txt").exists()


def tool_ctx(ws, settings) -> ToolContext:
    return ToolContext(
        pass_name="work", ledger=RefLedger(), settings=settings, workspace=ws,
        provenance=RunProvenance(),
    )  # fmt: skip


def call(ctx: ToolContext, server: str, tool: str, **arguments) -> dict:
    outcome = execute_tool_call(
        {"name": "McpCall", "id": "c", "args": {"server": server, "tool": tool,
                                                "arguments": arguments}},
        ["McpCall"], ctx,
    )  # fmt: skip
    return {"status": outcome.event["status"], **json.loads(outcome.message.content)}


def test_failing_servers_and_tools_are_clear_errors(tmp_path, settings):
    quits = json.dumps([sys.executable, "-c", "import sys; sys.exit(3)"])
    servers = (
        fx("timeout_s = 2\n")
        + f'[mcp.servers.gone]\ncommand = ["{tmp_path}/no-such-server"]\n'
        + f"[mcp.servers.quits]\ncommand = {quits}\n"
    )
    ws = load_workspace(write_workspace(tmp_path / "ws", servers))
    ctx = tool_ctx(ws, settings)
    unknown = call(ctx, "nope", "rate")
    assert "no MCP server 'nope'" in unknown["error"] and "fx, gone, quits" in unknown["error"]
    gone = call(ctx, "gone", "rate")
    assert "could not start" in gone["error"] and "FileNotFoundError" in gone["error"]
    exited = call(ctx, "quits", "rate")
    assert "closed the connection" in exited["error"] and "quits.log" in exited["error"]
    started = time.monotonic()
    slow = call(ctx, "fx", "slow", seconds=60)
    assert "did not answer within 2 s" in slow["error"]
    assert time.monotonic() - started < 60
    died = call(ctx, "fx", "die")
    assert "closed the connection" in died["error"]
    for result in (unknown, gone, exited, slow, died):
        assert result["ok"] is False and "Traceback" not in result["error"]
    assert ctx.ledger.issued == []  # nothing half-issued


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in _proc_state(pid)


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1]
    except (FileNotFoundError, IndexError):
        return "Z"


def starts(root: Path) -> list[int]:
    log = root / "starts.log"
    return [int(x) for x in log.read_text().split()] if log.exists() else []


def test_a_pass_starts_a_stdio_server_once_and_stops_it_when_the_pass_ends(tmp_path, settings):
    settings = settings.with_overrides(sandbox="rlimits")  # host pids: unconfined
    root = write_workspace(tmp_path / "ws", fx())
    ws = load_workspace(root)
    model = work_then(tool_call("McpCall", {"server": "fx", "tool": "pid"}),
                      then=tool_call("McpCall", {"server": "fx", "tool": "rate",
                                                 "arguments": {"currency": "EUR"}}))  # fmt: skip
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=ws, settings=settings)
    config = {"configurable": {"thread_id": "kept"}}
    graph.invoke({"question": QUESTION}, config)
    state = graph.get_state(config).values
    refs = as_ref_map(state["refs"]).values()
    excerpts = {r.source: r.payload["excerpt"] for r in refs if r.source.startswith("mcp:")}
    assert "USD/EUR 1.0842" in excerpts["mcp:fx/rate"]  # two calls answered
    (pid,) = starts(root)  # by one server, started once
    assert excerpts["mcp:fx/pid"] == str(pid)
    assert not alive(pid)  # and stopped when the pass ended
    assert [e["status"] for e in state["trace"] if e.get("tool") == "McpCall"] == ["ok", "ok"]


def server_pid(ctx: ToolContext) -> int:
    output = call(ctx, "fx", "pid")["data"]["output"]  # fenced: the number on a line of its own
    return int(re.search(r"^(\d+)$", output, re.M).group(1))


def test_a_kept_session_restarts_a_server_that_timed_out_or_died(tmp_path, settings):
    settings = settings.with_overrides(sandbox="rlimits")  # host pids: unconfined
    root = write_workspace(tmp_path / "ws", fx("timeout_s = 2\n"))
    ws = load_workspace(root)
    ctx = tool_ctx(ws, settings)
    with pass_sessions(ctx):
        first = server_pid(ctx)
        assert server_pid(ctx) == server_pid(ctx) == first
        unknown = call(ctx, "fx", "nope")  # refgate's own verdict: the session stays
        assert "has no tool 'nope'" in unknown["error"]
        slow = call(ctx, "fx", "slow", seconds=60)
        assert "did not answer within 2 s" in slow["error"]
        assert call(ctx, "fx", "rate", currency="KRW")["ok"] is True  # a new server answers
        died = call(ctx, "fx", "die")
        assert "closed the connection" in died["error"]
        assert call(ctx, "fx", "rate", currency="EUR")["ok"] is True
        pids = starts(root)
        assert len(pids) == 3 and pids[0] == first  # started again after the timeout and the death
        assert alive(pids[-1]) and not alive(first)
    assert not any(alive(p) for p in pids)  # the pass's end stops the last one
    assert "mcp_sessions" not in ctx.extra


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('command = ["x"]\nurl = "http://h/mcp"', "exactly one of command"),
        ('url = "file:///etc/passwd"', "http(s) URL"),
        ('command = ["x"]\nport = 3', "unknown key(s) port"),
        ('command = ["x"]\ntimeout_s = 0', "timeout_s"),
        ("command = []", "the command is empty"),
        ('url = "http://h/mcp"\nenv = { A = "b" }', "only a command"),
    ],
)
def test_malformed_mcp_entries_name_the_field(tmp_path, entry, message):
    root = write_workspace(tmp_path / "ws", f"[mcp.servers.s]\n{entry}\n")
    with pytest.raises(WorkspaceError, match="mcp.servers.s") as err:
        load_workspace(root)
    assert message in str(err.value)


def test_a_served_graph_starts_a_named_workspaces_servers_only_when_allowlisted(
    tmp_path, settings, monkeypatch
):
    marker = tmp_path / "ws" / "started"
    probe = json.dumps([sys.executable, "-c", f"open({str(marker)!r}, 'w')"])
    root = write_workspace(tmp_path / "ws", f"[mcp.servers.probe]\ncommand = {probe}\n")
    monkeypatch.delenv("REFGATE_ALLOWED_WORKSPACES", raising=False)
    assert load_served_workspace(root).may_start_servers is False
    assert load_workspace(root).may_start_servers is True

    probe_call = tool_call("McpCall", {"server": "probe", "tool": "x"})
    model = work_then(probe_call)
    graph = build_graph(model=model, checkpointer=InMemorySaver(), settings=settings, audit=True)
    config = {"configurable": {"thread_id": "served"}}
    graph.invoke({"question": QUESTION, "workspace": str(root)}, config)
    first = work_calls(model)[0]
    assert "McpCall" not in first["tools"] and "MCP servers (McpCall)" not in first["text"]
    (disabled,) = [e for e in graph.get_state(config).values["trace"]
                   if e["type"] == "mcp_servers_disabled"]  # fmt: skip
    assert "REFGATE_ALLOWED_WORKSPACES" in disabled["reason"]
    assert not marker.exists()  # the command never ran

    # `refgate mcp`'s tools load a named workspace the same way (and refgate.ask keeps the
    # Workspace it is given: the graph's own)
    from refgate.cli.mcp_server import _workspace

    assert _workspace(str(root)).may_start_servers is False
    monkeypatch.setenv("REFGATE_ALLOWED_WORKSPACES", str(tmp_path))
    assert load_served_workspace(root).may_start_servers is True
    assert _workspace(str(root)).may_start_servers is True

    # the server's own REFGATE_WORKSPACE is the operator's choice: its servers may start
    monkeypatch.delenv("REFGATE_ALLOWED_WORKSPACES")
    monkeypatch.setenv("REFGATE_WORKSPACE", str(root))
    quiet = work_then(tool_call("McpCall", {"server": "probe", "tool": ""}))
    quiet.rules[1] = (is_work, "done: nothing to call")
    graph = build_graph(model=quiet, checkpointer=InMemorySaver(), settings=settings, audit=True)
    graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "operator"}})
    assert "McpCall" in work_calls(quiet)[0]["tools"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_streamable_http_server_answers_the_same_way(tmp_path, settings):
    port = _free_port()
    log = (tmp_path / "http.log").open("wb")
    proc = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, (tmp_path / "http.log").read_text()
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}/mcp"
        servers = (
            f'[mcp.servers.web]\nurl = "{url}"\nmax_result_chars = 500\n'
            f'[mcp.servers.down]\nurl = "http://127.0.0.1:{_free_port()}/mcp"\n'
        )
        ws = load_workspace(write_workspace(tmp_path / "ws", servers))
        ctx = tool_ctx(ws, settings)
        answered = call(ctx, "web", "rate", currency="KRW")
        listing = call(ctx, "web", "")
        injected = call(ctx, "web", "bulletin")
        big = call(ctx, "web", "big", n=5000)
        missing = call(ctx, "web", "no_such_tool")
        down = call(ctx, "down", "rate", currency="KRW")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()
    assert answered["ok"] is True and "1391.5" in answered["data"]["output"]
    assert answered["data"]["output"].startswith("⟦UNTRUSTED:")
    ref = ctx.ledger.issued[0]
    assert ref.source == "mcp:web/rate" and ref.is_external and ref.is_secondary
    tools = {t["name"]: t for t in listing["data"]["tools"]}
    assert tools["rate"]["read_only"] is True and tools["post_note"]["read_only"] is False
    assert tools["rate"]["description"].startswith("⟦UNTRUSTED:")  # the server's words
    assert "could not be reached" in down["error"]
    # B5: a high-confidence injection in a server's output is withheld, not shown
    assert injected["status"] == "withheld" and "ignore all" not in json.dumps(injected)
    assert "withheld by refgate" in injected["data"]["output"]
    assert big["data"]["truncated"] == "output cut at 500 characters"
    assert len(ctx.ledger.issued[-1].payload["excerpt"]) == 500
    assert "has no tool 'no_such_tool'" in missing["error"] and "rate" in missing["error"]


def test_the_terminal_prompt_shows_the_call_and_why_it_needs_approval(capsys):
    import io

    from refgate.cli.approval import terminal_approver

    request = {
        "approve_outbound": "McpCall",
        "to": "the MCP server 'fx'",
        "args": {"server": "fx", "tool": "post_note", "arguments": {"text": "EUR rate"}},
        "reason": "fx.post_note is write-like (no readOnlyHint); a person approves each call",
        "call": "0123456789abcdef",
    }
    answer = terminal_approver(5, io.StringIO("y\n"))(request)
    shown = capsys.readouterr().err
    assert answer == {"approved": True}
    assert "the MCP server 'fx'" in shown and "post_note" in shown and "EUR rate" in shown
    assert "write-like" in shown


def test_a_server_that_cannot_start_costs_one_call_and_the_run_goes_on(tmp_path, settings):
    root = write_workspace(tmp_path / "ws", f'[mcp.servers.gone]\ncommand = ["{tmp_path}/nope"]\n')
    ws = load_workspace(root)
    model = work_then(tool_call("McpCall", {"server": "gone", "tool": "rate"}))
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=ws, settings=settings)
    config = {"configurable": {"thread_id": "gone"}}
    out = graph.invoke({"question": QUESTION}, config)
    state = graph.get_state(config)
    assert state.next == () and out["answer"] == ANSWER  # the run finished, checkpointed
    (failed,) = [e for e in state.values["trace"] if e.get("tool") == "McpCall"]
    assert failed["status"] == "error" and "could not start" in failed["error"]
    assert state.values["provenance"]["sent"] == []  # nothing was sent


def test_the_cli_names_a_malformed_mcp_entry_and_exits_2(tmp_path, env):
    from typer.testing import CliRunner

    from refgate.cli import app

    root = write_workspace(tmp_path / "ws", '[mcp.servers.s]\nurl = "ftp://x"\n')
    result = CliRunner().invoke(app, ["ask", "What is the EUR rate?", "-w", str(root)])
    assert result.exit_code == 2, result.output
    assert "mcp.servers.s.url" in result.output and "Traceback" not in result.output

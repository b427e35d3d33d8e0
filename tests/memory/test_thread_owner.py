"""Threads belong to a workspace (issue 46, item 2): two workspaces that share one
``REFGATE_DATABASE_URL`` share the checkpoint tables, and a thread id of one must not open the
other's conversation through the CLI, the Python API, ``refgate mcp`` or a served graph. Each
case runs on a shared SQLite file and, when REFGATE_TEST_POSTGRES_URL is set, on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

import refgate
from refgate.config import load_settings
from refgate.graph import build_graph
from refgate.memory.persistence import open_persistence
from refgate.memory.threads import ForeignThread
from refgate.testing_openai import OpenAIStub
from tests.support.serving import FIRST_QUESTION, FOLLOW_UP, conversation_responder, copy_sample

PG_URL = os.environ.get("REFGATE_TEST_POSTGRES_URL", "")
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(
                not PG_URL,
                reason="REFGATE_TEST_POSTGRES_URL is unset (start one with "
                "scripts/start_postgres.sh)",
            ),
        ],
    ),
]
REFUSED = "belongs to another workspace"


@pytest.fixture(params=BACKENDS)
def shared_db(request, tmp_path, env) -> str:
    """One database URL both workspaces use, set in the environment as a user would."""
    url = PG_URL if request.param == "postgres" else f"sqlite:///{tmp_path / 'shared.sqlite'}"
    env.setenv("REFGATE_DATABASE_URL", url)
    env.setenv("REFGATE_STORE_EMBED", "hashing")
    return url


@pytest.fixture
def stub(env):
    with OpenAIStub(responder=conversation_responder) as s:
        for name, value in s.env().items():
            env.setenv(name, value)
        env.setenv("REFGATE_MODEL", "stub-model")
        yield s


@pytest.fixture
def two_workspaces(tmp_path) -> tuple[Path, Path]:
    return copy_sample(tmp_path / "wsA"), copy_sample(tmp_path / "wsB")


def _thread_of_a(ws_a: Path) -> str:
    thread = f"a-{uuid.uuid4().hex[:10]}"
    first = refgate.ask(FIRST_QUESTION, workspace=ws_a, thread=thread)
    assert "9.6%" in first.answer
    return thread


def test_the_api_refuses_a_thread_of_another_workspace(shared_db, stub, two_workspaces):
    ws_a, ws_b = two_workspaces
    thread = _thread_of_a(ws_a)
    with pytest.raises(ForeignThread, match=REFUSED) as refused:
        refgate.ask(FOLLOW_UP, workspace=ws_b, thread=thread)
    assert str(ws_a) not in str(refused.value)  # B learns nothing of A, not even its folder
    # A's thread is untouched and goes on in A
    follow = refgate.ask(FOLLOW_UP, workspace=ws_a, thread=thread)
    assert "6.0%" in follow.answer
    assert [t["question"] for t in follow.record["turns"]] == [FIRST_QUESTION, FOLLOW_UP]
    assert len(follow.record["turns"]) == 2


def test_the_cli_refuses_a_thread_of_another_workspace_with_exit_2(shared_db, stub, two_workspaces):
    from refgate.cli import app

    ws_a, ws_b = two_workspaces
    thread = _thread_of_a(ws_a)
    runner = CliRunner()
    res = runner.invoke(app, ["ask", "-w", str(ws_b), "--thread", thread, FOLLOW_UP])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert REFUSED in out and "9.6" not in out
    for command in (["trace", thread, "-w", str(ws_b)],
                    ["report", thread, "-w", str(ws_b), "-o", str(ws_b / "r.md")]):  # fmt: skip
        res = runner.invoke(app, command)
        assert res.exit_code == 2, res.output
        assert REFUSED in " ".join(res.output.split())
    assert not (ws_b / "r.md").exists()


def test_mcp_ask_refuses_a_thread_of_a_workspace_outside_the_allowlist(
    shared_db, stub, two_workspaces
):
    pytest.importorskip("mcp.client")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    ws_a, ws_b = two_workspaces
    thread = _thread_of_a(ws_a)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFGATE_", "OPENAI_"))}
    env.update(stub.env(), REFGATE_MODEL="stub-model", REFGATE_DATABASE_URL=shared_db,
               REFGATE_STORE_EMBED="hashing", REFGATE_ALLOWED_WORKSPACES=str(ws_b))  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "refgate.cli", "mcp"], env=env
    )

    async def session():
        async with Client(params, read_timeout_seconds=240) as client:
            return await client.call_tool(
                "ask", {"question": FOLLOW_UP, "workspace": str(ws_b), "thread": thread}
            )

    result = asyncio.run(session())
    text = " ".join(c.text for c in result.content if hasattr(c, "text"))
    assert result.is_error, text
    assert REFUSED in text and "9.6" not in text


def test_a_served_graph_refuses_a_thread_of_another_workspace(shared_db, stub, two_workspaces):
    ws_a, ws_b = two_workspaces
    thread = f"served-{uuid.uuid4().hex[:10]}"
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 50}
    with open_persistence(load_settings(), ws_a) as (checkpointer, store):
        # as langgraph.json serves it: no workspace of its own, the client names one
        graph = build_graph(checkpointer=checkpointer, store=store)
        out = graph.invoke({"question": FIRST_QUESTION, "workspace": str(ws_a)}, config)
        assert "9.6%" in out["answer"]
        asked = len(stub.chat_requests())
        with pytest.raises(ForeignThread, match=REFUSED):
            graph.invoke({"question": FOLLOW_UP, "workspace": str(ws_b)}, config)
        assert len(stub.chat_requests()) == asked  # refused before any model saw A's thread
    # the thread's owner goes on asking on it
    follow = refgate.ask(FOLLOW_UP, workspace=ws_a, thread=thread)
    assert "6.0%" in follow.answer
    assert [t["question"] for t in follow.record["turns"]] == [FIRST_QUESTION, FOLLOW_UP]


def test_a_moved_workspace_keeps_its_threads_in_its_own_sqlite_file(stub, tmp_path, env):
    """Without a shared database the checkpoints are the workspace's own file: a thread asked
    before the folder was renamed goes on after it."""
    ws = copy_sample(tmp_path / "before")
    thread = _thread_of_a(ws)
    moved = ws.rename(tmp_path / "after")
    follow = refgate.ask(FOLLOW_UP, workspace=moved, thread=thread)
    assert "6.0%" in follow.answer
    assert [t["question"] for t in follow.record["turns"]] == [FIRST_QUESTION, FOLLOW_UP]
    res = CliRunner().invoke(app_cli(), ["trace", thread, "-w", str(moved)])
    assert res.exit_code == 0, res.output


def app_cli():
    from refgate.cli import app

    return app

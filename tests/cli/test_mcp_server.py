"""`refgate mcp`: refgate's tools served to MCP clients, driven by the official SDK's own client
over stdio (a subprocess, as Claude Desktop runs it) and streamable HTTP on loopback. The ask
tool's model is the scripted OpenAI-compatible stub; the workspace is a copy of the sample."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time

import pytest

from refgate.refs import cited_ids
from refgate.testing_openai import OpenAIStub
from tests.support.serving import FIRST_QUESTION, conversation_responder

mcp_client = pytest.importorskip("mcp.client")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

TOOLS = {"ask", "research", "check", "search_documents"}


@pytest.fixture
def stub():
    with OpenAIStub(responder=conversation_responder) as s:
        yield s


def server_env(stub, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFGATE_", "OPENAI_"))}
    env.update(stub.env() if stub else {})
    env.update(REFGATE_MODEL="stub-model", **extra)
    return env


def stdio(env: dict[str, str]) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "refgate.cli", "mcp"], env=env
    )
    return Client(params, read_timeout_seconds=240)


def test_an_mcp_client_lists_the_tools_and_gets_a_gated_answer(sample, stub):
    async def session():
        async with stdio(server_env(stub)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            asked = await client.call_tool(
                "ask", {"question": FIRST_QUESTION, "workspace": str(sample)}
            )
            doc = asked.structured_content
            checked = await client.call_tool(
                "check", {"answer": doc["answer"], "refs": doc["refs"]}
            )
            wrong = doc["answer"].replace("9.6%", "8.1%")
            blocked = await client.call_tool("check", {"answer": wrong, "refs": doc["refs"]})
            return tools, asked, checked, blocked

    tools, asked, checked, blocked = asyncio.run(session())
    assert tools >= TOOLS
    assert not asked.is_error, asked.content
    doc = asked.structured_content
    assert doc["passed"] is True and doc["unverified"] == []
    (cited,) = cited_ids(doc["answer"], doc["refs"])
    assert doc["refs"][cited]["payload"]["values"]["unemp"] == 9.6
    assert doc["usage"]["total"]["total_tokens"] > 0
    assert checked.structured_content["passed"] is True
    assert blocked.structured_content["passed"] is False
    assert any("8.1" in i["claim"] for i in blocked.structured_content["issues"])


def test_the_served_allowlist_and_missing_index_are_clear_tool_errors(sample, tmp_path):
    elsewhere = tmp_path / "allowed"
    elsewhere.mkdir()

    async def session():
        env = server_env(None, REFGATE_ALLOWED_WORKSPACES=str(elsewhere))
        async with stdio(env) as client:
            refused = await client.call_tool(
                "ask", {"question": FIRST_QUESTION, "workspace": str(sample)}
            )
        async with stdio(server_env(None)) as client:
            no_index = await client.call_tool(
                "search_documents", {"query": "inflation", "workspace": str(sample)}
            )
        return refused, no_index

    refused, no_index = asyncio.run(session())
    assert refused.is_error and "REFGATE_ALLOWED_WORKSPACES" in refused.content[0].text
    assert no_index.is_error and "refgate index" in no_index.content[0].text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http_on_loopback_serves_the_same_tools(tmp_path):
    port = _free_port()
    log = (tmp_path / "mcp.log").open("wb")
    cmd = [sys.executable, "-m", "refgate.cli", "mcp", "--http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=server_env(None), stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, (tmp_path / "mcp.log").read_text()
            time.sleep(0.3)

        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                ref = {"id": "val_0123456789", "kind": "valueRef",
                       "payload": {"values": {"unemp": 9.6}, "units": {"unemp": "%"}}}  # fmt: skip
                checked = await client.call_tool(
                    "check", {"answer": "Unemployment was 9.6% [val_0123456789].", "refs": [ref]}
                )
                return names, checked

        names, checked = asyncio.run(session())
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()
    assert names >= TOOLS
    assert checked.structured_content["passed"] is True


def test_http_is_refused_off_loopback():
    done = subprocess.run(
        [sys.executable, "-m", "refgate.cli", "mcp", "--http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "loopback" in done.stderr

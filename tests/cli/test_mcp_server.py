"""`refgate mcp`: refgate's tools served to MCP clients, driven by the official SDK's own client
over stdio (a subprocess, as Claude Desktop runs it) and streamable HTTP on loopback. The ask
tool's model is the scripted OpenAI-compatible stub; the workspace is a copy of the sample."""

from __future__ import annotations

import asyncio
import json
import os
import re
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


def _start_http(tmp_path, port: int, env: dict[str, str]) -> subprocess.Popen:
    log = (tmp_path / "mcp.log").open("wb")
    cmd = [sys.executable, "-m", "refgate.cli", "mcp", "--http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        assert proc.poll() is None, (tmp_path / "mcp.log").read_text()
        time.sleep(0.3)
    proc.kill()
    raise AssertionError("the HTTP server did not start")


def _post_initialize(port: int, authorization: str | None) -> int:
    """The HTTP status of an MCP ``initialize`` request."""
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}}).encode()  # fmt: skip
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body, headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _client(port: int, token: str) -> Client:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http))


def test_streamable_http_on_loopback_serves_the_same_tools(tmp_path):
    port = _free_port()
    token = "a-token-for-this-test-only"
    proc = _start_http(tmp_path, port, server_env(None, REFGATE_MCP_TOKEN=token))
    try:

        async def session():
            async with _client(port, token) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                ref = {"id": "val_0123456789", "kind": "valueRef",
                       "payload": {"values": {"unemp": 9.6}, "units": {"unemp": "%"}}}  # fmt: skip
                checked = await client.call_tool(
                    "check", {"answer": "Unemployment was 9.6% [val_0123456789].", "refs": [ref]}
                )
                return names, checked

        names, checked = asyncio.run(session())
        refused = [_post_initialize(port, None), _post_initialize(port, "Bearer wrong-token"),
                   _post_initialize(port, token)]  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert names >= TOOLS
    assert checked.structured_content["passed"] is True
    assert refused == [401, 401, 401]  # no header, a wrong token, the token without "Bearer"


def test_http_without_a_token_in_the_environment_prints_a_new_one_and_requires_it(tmp_path):
    port = _free_port()
    proc = _start_http(tmp_path, port, server_env(None))
    try:
        deadline = time.monotonic() + 30
        while "Bearer " not in (tmp_path / "mcp.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        printed = re.search(r"Bearer ([\w-]{20,})", (tmp_path / "mcp.log").read_text())
        assert printed, (tmp_path / "mcp.log").read_text()
        statuses = [_post_initialize(port, None), _post_initialize(port, f"Bearer {printed[1]}")]
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert statuses == [401, 200]


def test_http_is_refused_off_loopback():
    done = subprocess.run(
        [sys.executable, "-m", "refgate.cli", "mcp", "--http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "loopback" in done.stderr

"""The GATE alone has a size cap (issue 46, item 5): ``refgate check`` and MCP ``check`` refuse
an answer over ``max_check_chars`` (or a ledger over ``max_check_refs``) at once with a clear
error, instead of spending half a minute on a 3 MB answer; an answer under the cap is checked."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from typer.testing import CliRunner

from refgate.cli import app

REF = {"id": "val_0123456789", "kind": "valueRef",
       "payload": {"values": {"unemp": 9.6}, "units": {"unemp": "%"}}}  # fmt: skip
SENTENCE = "Unemployment was 9.6% [val_0123456789]. "
#: 3.1 MB, the size of the answer that took 30 s of server CPU.
HUGE = SENTENCE * (3_100_000 // len(SENTENCE))


@pytest.fixture
def refs_file(tmp_path):
    path = tmp_path / "refs.json"
    path.write_text(json.dumps([REF]))
    return path


def test_refgate_check_refuses_an_answer_over_the_cap_at_once(tmp_path, refs_file, env):
    answer = tmp_path / "answer.md"
    answer.write_text(HUGE)
    started = time.perf_counter()
    res = CliRunner().invoke(app, ["check", str(answer), "--refs", str(refs_file)])
    assert time.perf_counter() - started < 5
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "the limit is 100,000 (REFGATE_MAX_CHECK_CHARS)" in out


def test_the_cap_is_a_setting_and_an_answer_under_it_is_checked(tmp_path, refs_file, env):
    env.setenv("REFGATE_MAX_CHECK_CHARS", "5000")
    answer = tmp_path / "answer.md"
    answer.write_text(SENTENCE * 70)  # about 2,800 characters
    res = CliRunner().invoke(app, ["check", str(answer), "--refs", str(refs_file)])
    assert res.exit_code == 0, res.output
    answer.write_text(SENTENCE * 140)  # about 5,600 characters
    res = CliRunner().invoke(app, ["check", str(answer), "--refs", str(refs_file)])
    assert res.exit_code == 2 and "the limit is 5,000" in " ".join(res.output.split())


def test_mcp_check_refuses_an_answer_or_a_ledger_over_the_cap(env):
    pytest.importorskip("mcp.client")
    from mcp import Client

    from refgate.cli.mcp_server import build_server

    many = [{**REF, "id": f"val_{n:010d}"} for n in range(5_001)]

    async def session():
        async with Client(build_server()) as client:
            huge = await client.call_tool("check", {"answer": HUGE, "refs": [REF]})
            ledger = await client.call_tool("check", {"answer": SENTENCE, "refs": many})
            fine = await client.call_tool("check", {"answer": SENTENCE, "refs": [REF]})
            return huge, ledger, fine

    started = time.perf_counter()
    huge, ledger, fine = asyncio.run(session())
    assert time.perf_counter() - started < 20
    text = lambda r: " ".join(c.text for c in r.content if hasattr(c, "text"))  # noqa: E731
    assert huge.is_error and "REFGATE_MAX_CHECK_CHARS" in text(huge)
    assert ledger.is_error and "REFGATE_MAX_CHECK_REFS" in text(ledger)
    assert not fine.is_error and fine.structured_content["passed"] is True

"""A bounded thread history (issue 46, item 5): a long thread's prompts show only the last
``history_turns`` turns (older ones dropped and counted), and a finished turn keeps only the
thread's latest checkpoint, so the checkpoints grow linearly with the turns, not with their
square (46.7 MB after 30 follow-ups before). benchmarks/thread_growth.py prints the figures."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

import refgate
from refgate.config import load_settings
from refgate.testing import KeyedChatModel, tool_call
from tests.support.serving import copy_sample

QUARTERS = ["2001Q1", "2002Q2", "2003Q3", "2004Q4", "2005Q1", "2006Q2", "2007Q3", "2008Q4"]
_ASKED = re.compile(r"^Question: .*?(\d{4}Q[1-4])", re.MULTILINE)


def _quarter(text: str) -> str:
    found = _ASKED.search(text)
    return found.group(1) if found else "2009Q3"


def _work(text: str) -> AIMessage:
    if '"ok":' in text:
        return AIMessage(content="Read the rate for the quarter asked.")
    args = {"dataset": "macro", "column": "unemp", "period": _quarter(text)}
    return AIMessage(
        content="", tool_calls=[tool_call("EngineCall", {"name": "value_at", "arguments": args})]
    )


def _model() -> KeyedChatModel:
    return KeyedChatModel(
        rules=[
            ("You are BRIEF", '{"skills": ["single-value-lookup"], "lens": "single value"}'),
            ("You are WORK", _work),
            ("You are CRITIQUE", "[]"),
            ("You are COMPOSE", lambda t: f"The rate for {_quarter(t)} is in the refs."),
            ("You are HARVEST", "Nothing worth remembering from this run."),
        ]
    )


def _checkpoints(ws: Path, thread: str) -> int:
    with sqlite3.connect(ws / ".refgate" / "checkpoints.sqlite") as conn:
        query = "SELECT count(*) FROM checkpoints WHERE thread_id = ?"
        return int(conn.execute(query, (thread,)).fetchone()[0])


def _question(quarter: str) -> str:
    return f"And what was the US unemployment rate in {quarter}?"


def test_prompts_show_the_last_history_turns_and_the_thread_keeps_one_checkpoint(tmp_path, env):
    ws = copy_sample(tmp_path / "us-macro")
    env.setenv("REFGATE_HISTORY_TURNS", "2")
    model = _model()
    refgate.ask(_question("2000Q4"), workspace=ws, thread="long", model=model)
    counts = []
    for quarter in QUARTERS[:5]:
        before = len(model.calls)
        refgate.ask(_question(quarter), workspace=ws, thread="long", model=model)
        counts.append(_checkpoints(ws, "long"))
    prompts = [c["text"] for c in model.calls[before:] if "You are COMPOSE" in c["text"]]
    last = prompts[-1]
    # the two turns before this one are shown, numbered as in the whole conversation
    assert "Q5: " + _question(QUARTERS[3]) in last and "Q4: " + _question(QUARTERS[2]) in last
    assert not re.search(r"^Q[123]: ", last, re.MULTILINE)
    assert "(3 earlier turns of this conversation are not shown.)" in last
    assert counts == [1] * 5  # a finished turn keeps only the latest checkpoint
    follow = refgate.ask(_question(QUARTERS[5]), workspace=ws, thread="long", model=model)
    assert len(follow.record["turns"]) == 7  # the conversation itself is whole


def test_keep_checkpoints_all_keeps_time_travel(tmp_path, env):
    ws = copy_sample(tmp_path / "us-macro")
    env.setenv("REFGATE_KEEP_CHECKPOINTS", "all")
    model = _model()
    refgate.ask(_question("2000Q4"), workspace=ws, thread="all", model=model)
    refgate.ask(_question("2001Q1"), workspace=ws, thread="all", model=model)
    assert _checkpoints(ws, "all") > 10
    assert load_settings().keep_checkpoints == "all"


@pytest.mark.parametrize("limit", [0, 1, 6])
def test_the_conversation_block_is_bounded_by_the_setting(limit):
    from refgate.nodes.conversation import conversation_block

    turns = [{"question": f"question {n}", "answer": "x" * 3_000, "run_id": f"r{n}"}
             for n in range(1, 41)]  # fmt: skip
    block = conversation_block({"turns": turns, "run_id": "now"}, limit)
    shown = re.findall(r"^Q(\d+): ", block, re.MULTILINE)
    assert shown == [str(n) for n in range(41 - limit, 41)]
    assert len(block) < 2_500 * (limit + 1)

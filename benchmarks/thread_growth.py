"""Checkpoint size and prompt size of a long thread (issue 46, item 5).

One thread on a copy of the sample workspace (examples/us-macro) takes a first question and then
follow-ups, each a full workbench run (BRIEF, WORK with one ``value_at`` call, CRITIQUE, COMPOSE,
GATE, HARVEST) with an in-process scripted model. After 10, 30 and 100 follow-ups it prints the
size of ``checkpoints.sqlite``, the number of checkpoints kept, the growth per follow-up since
the last mark, and the characters of BRIEF's prompt for the last follow-up (the conversation
block is bounded by ``history_turns``).

    .venv/bin/python benchmarks/thread_growth.py            # 10/30/100 follow-ups
    .venv/bin/python benchmarks/thread_growth.py --marks 5 10

Growth at most linear means the MB per follow-up between marks does not rise with the count.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import time
from pathlib import Path

from langchain_core.messages import AIMessage

import refgate
from refgate.testing import KeyedChatModel, tool_call

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "us-macro"
QUARTERS = [f"{y}Q{q}" for y in range(1990, 2010) for q in range(1, 5)]
_QUESTION = re.compile(r"^Question: .*?(\d{4}Q[1-4])", re.MULTILINE)
_REF_FOR = re.compile(r'\{[^{}]*"id": "(val_[0-9a-f]+)"[^{}]*"period": "(\d{4}Q[1-4])"')


def _quarter(text: str) -> str:
    found = _QUESTION.search(text)
    return found.group(1) if found else "2009Q3"


def _work(text: str) -> AIMessage:
    if '"ok":' in text:
        return AIMessage(content="Read the rate for the quarter asked.")
    args = {"dataset": "macro", "column": "unemp", "period": _quarter(text)}
    return AIMessage(
        content="", tool_calls=[tool_call("EngineCall", {"name": "value_at", "arguments": args})]
    )


def _compose(text: str) -> str:
    quarter = _quarter(text)
    ref = next((i for i, p in _REF_FOR.findall(text) if p == quarter), "")
    return f"The unemployment rate for {quarter} is in the cited ref [{ref}]."


def scripted() -> KeyedChatModel:
    return KeyedChatModel(
        rules=[
            ("You are BRIEF", '{"skills": ["single-value-lookup"], "lens": "single value"}'),
            ("You are WORK", _work),
            ("You are CRITIQUE", "[]"),
            ("You are COMPOSE", _compose),
            ("You are HARVEST", "Nothing worth remembering from this run."),
        ]
    )


def checkpoint_count(path: Path, thread: str) -> int:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM checkpoints WHERE thread_id = ?", (thread,)
            ).fetchone()[0]
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marks", type=int, nargs="+", default=[10, 30, 100])
    args = parser.parse_args()
    marks = sorted(set(args.marks))
    tmp = Path(tempfile.mkdtemp(prefix="refgate-thread-growth-"))
    ws = tmp / "us-macro"
    shutil.copytree(SAMPLE, ws, ignore=shutil.ignore_patterns(".refgate"))
    model = scripted()
    thread = "growth"
    db = ws / ".refgate" / "checkpoints.sqlite"
    started = time.perf_counter()
    last_mb, last_n = 0.0, 0
    print("follow-ups  checkpoints.sqlite MB  checkpoints  MB/follow-up since last  "
          "BRIEF / WORK / COMPOSE prompt chars")  # fmt: skip
    refgate.ask(
        "What was the US unemployment rate in 2009Q3?", workspace=ws, thread=thread, model=model
    )
    for n in range(1, marks[-1] + 1):
        quarter = QUARTERS[n % len(QUARTERS)]
        before = len(model.calls)
        refgate.ask(f"And what was the US unemployment rate in {quarter}?", workspace=ws,
                    thread=thread, model=model)  # fmt: skip
        if n in marks:
            prompts = [
                len(next(c for c in model.calls[before:] if f"You are {p}" in c["text"])["text"])
                for p in ("BRIEF", "WORK", "COMPOSE")
            ]
            size = sum(p.stat().st_size for p in db.parent.glob("checkpoints.sqlite*")) / 1e6
            rate = (size - last_mb) / (n - last_n)
            print(f"{n:>10}  {size:>20.2f}  {checkpoint_count(db, thread):>11}  "
                  f"{rate:>23.3f}  {' / '.join(f'{p:,}' for p in prompts)}")  # fmt: skip
            last_mb, last_n = size, n
    print(f"{marks[-1]} follow-ups in {time.perf_counter() - started:.0f} s")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

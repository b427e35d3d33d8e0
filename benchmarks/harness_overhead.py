"""Harness overhead: the full workbench vs a minimal StateGraph making the same calls.

Both graphs run 50 questions with a scripted zero-latency model and the SQLite checkpointer, and
make the same model calls (6 per question) and tool calls (2 per question, trivial tools). The
workbench adds refs, the trace, provenance rendering, the GATE and HARVEST. Prints the median ms
per question of each and their ratio (target: <= 1.5).

    .venv/bin/python benchmarks/harness_overhead.py [--questions 50]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from refgate.catalog.toolspec import ToolContext, ToolResult, ToolSpec
from refgate.config import Settings
from refgate.graph import build_graph
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.tools.registry import override_tool

VAL = re.compile(r"val_[0-9a-f]{10}")


class SkillArgs(BaseModel):
    query: str


class CodeArgs(BaseModel):
    code: str


def skill_tool(args: SkillArgs, ctx: ToolContext) -> ToolResult:
    ref = ctx.issue("skillRef", {"id": "single-value", "requiredEvidence": ["valueRef"]})
    return ToolResult(ok=True, data={"skills": ["single-value"]}, refs=[ref])


def value_tool(args: CodeArgs, ctx: ToolContext) -> ToolResult:
    ref = ctx.issue(
        "valueRef", {"values": {"unemp": 9.6}, "units": {"unemp": "%"}, "period": "2009Q3"}
    )
    return ToolResult(ok=True, data={"emitted": [ref.id]}, refs=[ref])


def script(i: int) -> list[Any]:
    def compose(text: str) -> str:
        return f"Unemployment in 2009Q3 was 9.6% [{VAL.findall(text)[-1]}]."

    return [
        calls(tool_call("ReadSkill", {"query": f"question {i}"})),
        '{"lens": "single value", "criteria": []}',
        calls(tool_call("RunPython", {"code": "emit_result(values=...)"})),
        "done",
        "[]",
        compose,
    ]


def run_workbench(n: int, folder: Path) -> list[float]:
    settings = Settings(model="scripted", api_key="x")
    times = []
    skill = ToolSpec("ReadSkill", "skills", SkillArgs, skill_tool, issues=("skillRef",))
    value = ToolSpec("RunPython", "run", CodeArgs, value_tool, issues=("valueRef",))
    with (
        override_tool(skill),
        override_tool(value),
        SqliteSaver.from_conn_string(str(folder / "workbench.sqlite")) as saver,
    ):
        for i in range(n):
            model = ScriptedChatModel(responses=script(i))
            graph = build_graph(model=model, checkpointer=saver, settings=settings)
            start = time.perf_counter()
            out = graph.invoke(
                {"question": f"What was unemployment in 2009Q3? ({i})"},
                {"configurable": {"thread_id": f"w{i}"}},
            )
            times.append((time.perf_counter() - start) * 1000)
            assert out["gate"]["passed"], out["gate"]
            assert model.remaining == 0
    return times


class MiniState(TypedDict, total=False):
    question: str
    answer: str
    notes: str


def minimal_graph(model: ScriptedChatModel, checkpointer: Any):
    """Same model and tool calls, none of refgate's refs, trace, provenance or gate."""
    tools = {
        "ReadSkill": lambda a: {"skills": ["single-value"]},
        "RunPython": lambda a: {"values": {"unemp": 9.6}},
    }
    schemas = [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": n,
                "parameters": {"type": "object", "properties": {}},
            },
        }
        for n in tools
    ]
    bound = model.bind_tools(schemas)

    def loop(state: MiniState) -> MiniState:
        msgs = [SystemMessage("system"), HumanMessage(state["question"])]
        while True:
            reply = bound.invoke(msgs)
            msgs.append(reply)
            if not reply.tool_calls:
                return {"notes": str(reply.content)}
            for call in reply.tool_calls:
                msgs.append(
                    ToolMessage(
                        content=str(tools[call["name"]](call["args"])), tool_call_id=call["id"]
                    )
                )

    def single(state: MiniState) -> MiniState:
        reply = model.invoke(
            [SystemMessage("system"), HumanMessage(state["question"] + " val_0123456789")]
        )
        return {"answer": str(reply.content)}

    builder = StateGraph(MiniState)
    builder.add_node("brief", loop)
    builder.add_node("work", loop)
    builder.add_node("critique", single)
    builder.add_node("compose", single)
    builder.add_edge(START, "brief")
    builder.add_edge("brief", "work")
    builder.add_edge("work", "critique")
    builder.add_edge("critique", "compose")
    builder.add_edge("compose", END)
    return builder.compile(checkpointer=checkpointer)


def run_minimal(n: int, folder: Path) -> list[float]:
    times = []
    with SqliteSaver.from_conn_string(str(folder / "minimal.sqlite")) as saver:
        for i in range(n):
            model = ScriptedChatModel(responses=script(i))
            graph = minimal_graph(model, saver)
            start = time.perf_counter()
            graph.invoke(
                {"question": f"What was unemployment in 2009Q3? ({i})"},
                {"configurable": {"thread_id": f"m{i}"}},
            )
            times.append((time.perf_counter() - start) * 1000)
            assert model.remaining == 0
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run_workbench(3, folder)  # warm imports and caches
        run_minimal(3, folder)
        full = run_workbench(args.questions, folder)
        mini = run_minimal(args.questions, folder)
    full_med, mini_med = statistics.median(full), statistics.median(mini)
    ratio = full_med / mini_med
    print(f"questions: {args.questions} (6 model calls and 2 tool calls each, SQLite checkpointer)")
    print(f"{'graph':<22}{'median ms':>10}{'p90 ms':>10}")
    for name, data in (("refgate workbench", full), ("minimal StateGraph", mini)):
        p90 = statistics.quantiles(data, n=10)[-1]
        print(f"{name:<22}{statistics.median(data):>10.2f}{p90:>10.2f}")
    print(
        f"ratio (workbench / minimal): {ratio:.2f}  target <= 1.5: "
        f"{'met' if ratio <= 1.5 else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

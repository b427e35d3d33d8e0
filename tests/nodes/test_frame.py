"""The pass frame (``refgate.nodes.frame``): a pass's body runs between its ``pass_start`` and
``pass_end`` events, and the update carries the trace and exactly the run-wide channels the
pass's ``PassFrame`` declares, inside a real graph run (runtime, config, context)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from refgate.config import RunContext
from refgate.events import event
from refgate.nodes.common import Deps
from refgate.nodes.frame import PassFrame, PassOutput, PassRun, attempt_start, pass_node
from refgate.nodes.state import WorkbenchState


def body(run: PassRun) -> PassOutput:
    """A pass that notes what its frame gave it."""
    run.events.append(event("body_ran", run.frame.name, reason=run.ctx.settings.model))
    return PassOutput({"answer": f"{run.frame.name}:{run.ctx.thread_id}"}, end={"chars": 7})


def run_one(frame: PassFrame, settings, state: WorkbenchState, context=None) -> WorkbenchState:
    builder = StateGraph(WorkbenchState, context_schema=RunContext)
    builder.add_node(frame.name, pass_node(frame, Deps(settings=settings), body, attempt_start))
    builder.add_edge(START, frame.name)
    builder.add_edge(frame.name, END)
    graph = builder.compile()
    return graph.invoke(state, {"configurable": {"thread_id": "t-1"}}, context=context)


def test_the_body_runs_between_the_frames_events(settings):
    out = run_one(PassFrame("work"), settings, {"question": "q", "gate_attempts": 1})
    kinds = [(e["type"], e["pass"]) for e in out["trace"]]
    assert kinds == [("pass_start", "work"), ("body_ran", "work"), ("pass_end", "work")]
    start, _, end = out["trace"]
    assert start["attempt"] == 2 and end["chars"] == 7 and end["duration_ms"] >= 0
    # the config LangGraph holds for the node reaches the tool context: its thread id
    assert out["answer"] == "work:t-1"


def test_the_update_carries_the_channels_the_frame_declares(settings):
    plain = run_one(PassFrame("critique"), settings, {"question": "q"})
    assert "budget" in plain and "provenance" not in plain
    both = run_one(PassFrame("work", writes_provenance=True), settings, {"question": "q"})
    assert both["budget"] and both["provenance"]["trusted"] == ["q"]
    neither = run_one(PassFrame("harvest", writes_budget=False), settings, {"question": "q"})
    assert "budget" not in neither and "provenance" not in neither


def test_the_run_context_reaches_the_passs_settings(settings):
    out = run_one(PassFrame("work"), settings, {"question": "q"}, RunContext(model="from-context"))
    assert out["trace"][1]["reason"] == "from-context"

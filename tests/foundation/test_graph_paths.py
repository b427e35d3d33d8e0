"""The workbench graph driven by scripted models: pass order, retry, double block, tool errors,
model failure and resume."""

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from refgate.graph import build_graph
from refgate.refs import as_ref_map
from refgate.testing import ScriptedChatModel, ScriptExhausted, calls, tool_call
from refgate.tools.registry import PASS_TOOLS
from tests.support.evidence import cite_first

PLAN = '{"lens": "single value", "criteria": ["value matches the dataset"]}'
GOOD = cite_first("val", "Real GDP in 2009Q3 was 12,990.3 billion USD [{ref}].")
BAD = cite_first("val", "Real GDP in 2009Q3 was 14,000 billion USD [{ref}].")


def passes(result_or_state) -> list[str]:
    trace = result_or_state["trace"]
    return [e["pass"] for e in trace if e["type"] == "pass_start"]


def run(model, settings, saver=None, thread="t1", question="What was real GDP in 2009Q3?"):
    graph = build_graph(model=model, checkpointer=saver or InMemorySaver(), settings=settings)
    config = {"configurable": {"thread_id": thread}}
    out = graph.invoke({"question": question}, config)
    return graph, config, out


def test_happy_path_runs_the_passes_in_order(settings, gdp_tool):
    model = ScriptedChatModel(
        responses=[
            PLAN,  # brief (no tool: fallback)
            calls(tool_call("RunPython", {"code": "emit_result(values=...)"})),
            "val_ holds realgdp 2009Q3",  # work done
            '["units are billions of chained 2005 dollars"]',  # critique
            GOOD,  # compose
        ]
    )
    graph, config, out = run(model, settings)
    state = graph.get_state(config).values
    assert passes(state) == ["brief", "work", "critique", "compose", "gate", "harvest"]
    assert out["gate"]["passed"] is True
    assert set(out) == {"answer", "refs", "gate", "trace_summary", "turns", "usage"}
    assert out["trace_summary"]["passes"] == passes(state)
    assert model.remaining == 0
    verify = [r for r in as_ref_map(out["refs"]).values() if r.kind == "verifyRef"]
    assert len(verify) == 1 and verify[0].payload["passed"] is True
    # Each LLM pass bound exactly its whitelist (the tool-less passes bind nothing).
    bound = [c["tools"] for c in model.calls]
    assert bound[0] == list(PASS_TOOLS["brief"])
    # (McpCall only when the workspace lists MCP servers it may start: this one lists none)
    assert bound[1] == bound[2] == [t for t in PASS_TOOLS["work"] if t != "McpCall"]
    assert bound[3] == [] and bound[4] == []
    # The fallback skill lookup is recorded when BRIEF calls no tool.
    assert any(e["type"] == "brief_fallback" for e in state["trace"])


def test_retry_path_repeats_work_compose_gate_but_not_critique(settings, gdp_tool):
    model = ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": "a"})),
            "done",
            '["check units"]',
            BAD,  # blocked
            calls(tool_call("RunPython", {"code": "b"})),
            "re-emitted",  # retry WORK
            GOOD,  # fixed
        ]
    )
    graph, config, out = run(model, settings)
    state = graph.get_state(config).values
    assert passes(state) == [
        "brief",
        "work",
        "critique",
        "compose",
        "gate",
        "work",
        "compose",
        "gate",
        "harvest",
    ]
    assert out["gate"]["passed"] is True
    # WORK's retry prompt carried the gate's issues, COMPOSE's retry prompt the blocked claim.
    retry_work_prompt = model.calls[5]["text"]
    assert "blocked" in retry_work_prompt and "14,000" in retry_work_prompt
    assert "14,000" in model.calls[7]["text"]
    assert model.remaining == 0


def test_second_block_appends_the_unmet_claims_and_goes_to_harvest(settings, gdp_tool):
    model = ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": "a"})),
            "done",
            "[]",
            BAD,
            "nothing more to compute",
            BAD,
        ]
    )
    graph, config, out = run(model, settings)
    state = graph.get_state(config).values
    assert passes(state)[-3:] == ["compose", "gate", "harvest"]
    assert out["gate"]["passed"] is False
    assert out["answer"].startswith("Real GDP in 2009Q3 was 14,000")
    tail = out["answer"].split("14,000 billion USD", 2)[-1]
    assert "14,000" in tail, "the unmet claim is listed in the appended section"
    assert len(out["answer"]) > len(BAD(f"val_{'0' * 10}"))
    assert state["gate_attempts"] == 2


def test_hallucinated_tool_gets_an_error_and_never_runs(settings, gdp_tool):
    model = ScriptedChatModel(
        responses=[
            PLAN,
            calls(
                tool_call("DeleteEverything", {"path": "/"}),
                tool_call("RunPython", {"source": "x"}),
            ),
            calls(tool_call("RunPython", {"code": "a"})),
            "done",
            "[]",
            GOOD,
        ]
    )
    graph, config, out = run(model, settings)
    state = graph.get_state(config).values
    rejected = [e for e in state["trace"] if e["type"] == "tool_call" and e["status"] == "rejected"]
    assert [e["tool"] for e in rejected] == ["DeleteEverything", "RunPython"]
    tool_msgs = [m for m in model.calls[2]["messages"] if isinstance(m, ToolMessage)]
    assert "not available in the work pass" in tool_msgs[0].content
    assert "malformed arguments for RunPython" in tool_msgs[1].content
    assert out["gate"]["passed"] is True
    assert gdp_tool.func.executed == ["a"]


def test_malformed_arguments_are_answered_and_not_executed(settings, gdp_tool):
    model = ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": 42, "extra": True})),
            calls(tool_call("RunPython", {})),
            calls(tool_call("RunPython", {"code": "a"})),
            "done",
            "[]",
            GOOD,
        ]
    )
    graph, config, out = run(model, settings)
    msgs = [m for m in model.calls[3]["messages"] if isinstance(m, ToolMessage)]
    assert "malformed arguments for RunPython" in msgs[0].content and "code" in msgs[0].content
    assert "malformed arguments for RunPython" in msgs[1].content
    assert gdp_tool.func.executed == ["a"]
    assert out["gate"]["passed"] is True


def test_arguments_nested_past_every_recursion_limit_are_rejected_not_a_crash(settings, gdp_tool):
    deep: list = []
    cur = deep
    for _ in range(5000):  # JSON encoders and checkpoint serialisers would recurse past 1,000
        cur.append([])
        cur = cur[0]
    model = ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": deep}, call_id="call_deep")),
            calls(tool_call("RunPython", {"code": "a"})),
            "done",
            "[]",
            GOOD,
        ]
    )
    graph, config, out = run(model, settings)  # the state (trace included) is checkpointed
    msgs = [m for m in model.calls[2]["messages"] if isinstance(m, ToolMessage)]
    assert "nested deeper than" in msgs[0].content
    state = graph.get_state(config).values
    (event,) = [e for e in state["trace"] if e["type"] == "tool_call" and e["status"] == "rejected"]
    assert event["args"] == "(arguments nested deeper than 32 levels)"
    assert gdp_tool.func.executed == ["a"]
    assert out["gate"]["passed"] is True


def test_invalid_json_arguments_are_answered(settings, gdp_tool):
    from langchain_core.messages import AIMessage

    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "RunPython",
                "args": "{not json",
                "id": "c1",
                "error": "bad json",
                "type": "invalid_tool_call",
            }
        ],
    )
    model = ScriptedChatModel(
        responses=[PLAN, broken, calls(tool_call("RunPython", {"code": "a"})), "done", "[]", GOOD]
    )
    graph, config, out = run(model, settings)
    msgs = [m for m in model.calls[2]["messages"] if isinstance(m, ToolMessage)]
    assert msgs and "not valid JSON" in msgs[0].content
    assert out["gate"]["passed"] is True


def test_work_round_bound_moves_on_and_is_recorded(settings, gdp_tool):
    loops = [calls(tool_call("RunPython", {"code": f"step {i}"})) for i in range(4)]
    model = ScriptedChatModel(responses=[PLAN, *loops, "[]", GOOD])
    graph, config, out = run(model, settings)
    state = graph.get_state(config).values
    hits = [e for e in state["trace"] if e["type"] == "round_bound_hit"]
    assert hits and hits[0]["pass"] == "work" and hits[0]["rounds"] == settings.work_max_rounds
    assert out["gate"]["passed"] is True


def test_model_error_mid_pass_resumes_without_redoing_finished_passes(settings, gdp_tool):
    saver = InMemorySaver()
    model = ScriptedChatModel(
        responses=[
            PLAN,
            calls(tool_call("RunPython", {"code": "a"})),
            "done",
            RuntimeError("model endpoint went away"),  # critique fails
            '["ok"]',
            GOOD,  # after resume
        ]
    )
    graph = build_graph(model=model, checkpointer=saver, settings=settings)
    config = {"configurable": {"thread_id": "crash"}}
    with pytest.raises(RuntimeError, match="went away"):
        graph.invoke({"question": "What was real GDP in 2009Q3?"}, config)
    snapshot = graph.get_state(config)
    assert snapshot.next == ("critique",)
    assert passes(snapshot.values) == ["brief", "work"]
    refs_before = set(snapshot.values["refs"])
    out = graph.invoke(None, config)
    state = graph.get_state(config).values
    assert passes(state) == ["brief", "work", "critique", "compose", "gate", "harvest"]
    assert gdp_tool.func.executed == ["a"], "WORK was not re-run"
    assert refs_before <= set(out["refs"])
    assert out["gate"]["passed"] is True and model.remaining == 0


def test_an_exhausted_script_is_an_error_not_a_silent_cycle(settings, gdp_tool):
    model = ScriptedChatModel(responses=[PLAN])
    with pytest.raises(ScriptExhausted):
        run(model, settings)


def test_empty_question_is_a_clear_error(settings):
    model = ScriptedChatModel(responses=[])
    with pytest.raises(ValueError, match="question is empty"):
        run(model, settings, question="   ")


def test_served_graphs_can_restrict_workspaces(settings, monkeypatch, tmp_path):
    (tmp_path / "allowed").mkdir()
    monkeypatch.setenv("REFGATE_ALLOWED_WORKSPACES", str(tmp_path / "allowed"))
    graph = build_graph(model=ScriptedChatModel(responses=[]), settings=settings)
    with pytest.raises(PermissionError, match="outside REFGATE_ALLOWED_WORKSPACES"):
        graph.invoke({"question": "q", "workspace": "/etc"})

"""Run budgets (issue 29, item 5): tool calls per pass and per run, sandbox seconds, the model's
timeout, question and answer length, wall time. Crossing one stops the run cleanly (resumable),
naming the budget."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from refgate.config import ConfigError, Settings
from refgate.graph import build_graph
from refgate.provenance.budget import BudgetExceeded, RunBudget
from refgate.testing import ScriptedChatModel, calls, tool_call

PLAN = '{"lens": "single value", "criteria": ["value matches the source"]}'
Q = "What did the FOMC decide in December 2008?"


def _graph(model, **budget):
    settings = Settings(model="scripted", api_key="k", work_max_rounds=4, max_rounds=3, **budget)
    return build_graph(model=model, checkpointer=InMemorySaver(), settings=settings)


def test_tool_calls_in_one_pass_stop_the_run_resumably():
    many = calls(*(tool_call("ReadCapability", {"name": f"c{i}"}, f"c{i}") for i in range(60)))
    model = ScriptedChatModel(responses=[PLAN, many, "done"])
    graph = _graph(model, max_tool_calls_per_pass=10)
    config = {"configurable": {"thread_id": "b1"}}
    with pytest.raises(BudgetExceeded) as err:
        graph.invoke({"question": Q}, config)
    assert "tool calls in one pass" in str(err.value)
    assert "REFGATE_MAX_TOOL_CALLS_PER_PASS" in str(err.value)
    # stopped before WORK ran its calls; the checkpoint resumes at WORK
    assert graph.get_state(config).next == ("work",)


def test_tool_calls_per_run_count_across_passes():
    budget = RunBudget(Settings(model="m", max_tool_calls_per_run=5, max_tool_calls_per_pass=4))
    for _ in range(4):
        budget.before_call("ReadSkill")
    state = budget.to_state()
    again = RunBudget.from_state(state, budget.settings)  # the next pass
    again.before_call("RunPython")
    with pytest.raises(BudgetExceeded, match="tool calls in the run"):
        again.before_call("RunPython")


def test_sandbox_seconds_and_the_models_timeout_are_capped():
    s = Settings(model="m", sandbox_seconds_per_run=30, max_code_timeout=10)
    budget = RunBudget(s)
    assert budget.code_timeout(120) == 10  # the model asked for 120 s
    budget.add_sandbox(25)
    assert budget.code_timeout(120) == 5  # what the run has left
    budget.add_sandbox(5)
    with pytest.raises(BudgetExceeded, match="sandbox seconds"):
        budget.before_call("RunPython")
    budget.before_call("ReadSkill")  # other tools still run


def test_run_python_gets_the_capped_timeout(monkeypatch):
    from refgate.catalog.toolspec import ToolContext
    from refgate.refs import RefLedger
    from refgate.tools import run_python

    seen = {}

    def fake_execute(code, **kw):
        seen["timeout"] = kw["timeout"]
        raise RuntimeError("stop here")

    monkeypatch.setattr(run_python, "execute", fake_execute)
    ctx = ToolContext("work", RefLedger(), Settings(model="m", max_code_timeout=7))
    with pytest.raises(RuntimeError, match="stop here"):
        run_python.run_python_tool(run_python.RunPythonArgs(code="print(1)", timeout=120), ctx)
    assert seen["timeout"] == 7


def test_wall_time_of_a_run_is_summed_over_passes():
    s = Settings(model="m", max_run_seconds=5)
    budget = RunBudget.from_state({"seconds": 6.0}, s)
    with pytest.raises(BudgetExceeded, match="wall time"):
        budget.check_time()


def test_an_answer_past_its_budget_stops_the_run():
    model = ScriptedChatModel(responses=[PLAN, "done", '["c"]', "x" * 5_000])
    graph = _graph(model, max_answer_chars=1_000)
    config = {"configurable": {"thread_id": "b2"}}
    with pytest.raises(BudgetExceeded, match="answer length"):
        graph.invoke({"question": Q}, config)
    assert graph.get_state(config).next == ("compose",)


def test_a_long_question_is_refused_before_anything_runs(tmp_path):
    # served graph: a clear error from BRIEF before any model call
    model = ScriptedChatModel(responses=[PLAN])
    graph = _graph(model, max_question_chars=100)
    with pytest.raises(BudgetExceeded, match="question length"):
        graph.invoke({"question": "x" * 101}, {"configurable": {"thread_id": "b3"}})
    assert model.calls == []


def test_the_api_refuses_a_long_question_as_a_configuration_error(tmp_path):
    from refgate.api.public import ask

    (tmp_path / "refgate.toml").write_text('name = "w"\n', encoding="utf-8")
    model = ScriptedChatModel(responses=[PLAN])
    with pytest.raises(ConfigError, match="REFGATE_MAX_QUESTION_CHARS"):
        ask(
            "y" * 9_000,
            workspace=tmp_path,
            model=model,
            settings=Settings(model="scripted", api_key="k"),
        )
    assert model.calls == []


def test_an_eval_file_with_a_huge_question_is_refused_at_load(tmp_path):
    import json

    from refgate.cli.evaluation.questions import EvalError, load_questions

    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "z" * 50_000}) + "\n", encoding="utf-8")
    with pytest.raises(EvalError, match="REFGATE_MAX_QUESTION_CHARS"):
        load_questions(f, max_chars=1_000)
    f.write_text(json.dumps({"id": "a", "question": "z" * 2_000_000}) + "\n", encoding="utf-8")
    with pytest.raises(EvalError, match="characters"):
        load_questions(f, max_chars=1_000)

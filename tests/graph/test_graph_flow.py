"""BRIEF -> GATE -> HARVEST through the compiled graph, driven by scripted models.

- the chosen skill's requiredEvidence becomes the GATE's checklist (state.plan -> gate);
- missing required evidence blocks; the same answer passes once the evidence exists;
- an explanation question passes on skillRef/apiRef alone, with no computation;
- a decision remembered by HARVEST in thread A is recalled by BRIEF in thread B and citable.
"""

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from refgate.graph import build_graph
from refgate.memory.embeddings import HashingEmbeddings
from refgate.refs import as_ref_map
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.tools.registry import override_tool
from tests.support.evidence import citing, evidence_spec, ids_in

RANKING_PLAN = json.dumps(
    {
        "skills": ["ranking-top-n"],
        "lens": "ranking",
        "criteria": ["universe is the S&P 500 snapshot"],
    }
)
GDP_ANSWER = citing("Real GDP in 2009Q3 was 12,990.3 billion USD [{val}].", "val")


def run(model, settings, workspace, *, store=None, thread="t1", question="q"):
    graph = build_graph(
        model=model,
        checkpointer=InMemorySaver(),
        store=store,
        workspace=workspace,
        settings=settings,
    )
    config = {"configurable": {"thread_id": thread}}
    # durability="sync": every step's checkpoint is saved before the next step runs, so HARVEST's
    # read of the thread's history sees all of them (with the default "async" the latest saves
    # may still be in flight on a loaded machine, and the count below would race).
    graph.invoke({"question": question}, config, durability="sync")
    return graph.get_state(config).values


def issue_codes(state) -> list[str]:
    return [i["code"] for i in state["gate"]["issues"] if i.get("severity", "block") == "block"]


@pytest.mark.parametrize("emits_table", [False, True])
def test_chosen_skill_sets_the_gate_checklist(settings, workspace, emits_table):
    answer = citing("The computation ran as recorded in [{exe}].", "exe")
    with override_tool(evidence_spec(table=emits_table)):
        model = ScriptedChatModel(
            responses=[
                calls(tool_call("ReadSkill", {"query": "largest companies by market cap"})),
                RANKING_PLAN,
                calls(tool_call("RunPython", {"code": "rank"})),
                "done",
                "[]",  # critique
                answer,  # compose
                *([] if emits_table else ["still no table", answer]),  # retry: work, compose
            ]
        )
        state = run(
            model,
            settings,
            workspace,
            question="Which S&P 500 companies have the largest market cap?",
        )
    plan = state["plan"]
    assert plan["skills"] == ["ranking-top-n"]
    assert plan["required_evidence"] == ["tableRef", "primarySource"]
    assert plan["require_emitted"] is True and plan["lens"] == "ranking"
    assert "top_n" in plan["capabilities"]
    assert any(c.startswith("guard against (ranking-top-n)") for c in plan["criteria"])
    critique_prompt = model.calls[4]["text"]
    assert "Required evidence checklist" in critique_prompt
    assert model.remaining == 0
    if emits_table:
        assert state["gate"]["passed"] is True
        assert not any("tableRef" in c for c in state["critiques"])
        assert "tableRef: met by tbl_" in critique_prompt
    else:
        assert "tableRef: NOT MET" in critique_prompt
        assert any("required evidence missing (tableRef)" in c for c in state["critiques"])
        assert state["gate"]["passed"] is False
        assert "missing_required_evidence" in issue_codes(state)
        assert [h["passed"] for h in state["gate_history"]] == [False, False]
        assert any("tableRef" in i["detail"] for i in state["gate"]["issues"])


def test_explanation_passes_on_skill_and_api_refs_alone(settings, workspace):
    answer = citing(
        "To order rows by a column, WORK calls the top_n capability through "
        "EngineCall with a dataset and a column [{api}]; the skill then requires an "
        "evidence table [{skl}].",
        "api",
        "skl",
    )
    model = ScriptedChatModel(
        responses=[
            calls(
                tool_call("ReadSkill", {"id": "explain-capability"}),
                tool_call("ReadCapability", {"name": "top_n"}),
            ),
            json.dumps({"skills": ["explain-capability"], "lens": "explanation"}),
            "Nothing to compute: this is an explanation.",  # work: no tool call
            "[]",
            answer,
        ]
    )
    state = run(model, settings, workspace, question="How do I rank companies with refgate?")
    plan = state["plan"]
    assert plan["required_evidence"] == ["skillRef", "apiRef"]
    assert plan["require_emitted"] is False and "RunPython" in plan["forbidden"]
    # the skill's forbidden tool is not even bound in WORK (the third call), the rest are
    work_tools = model.calls[2]["tools"]
    assert "EngineCall" in work_tools and "RunPython" not in work_tools
    assert state["gate"]["passed"] is True, state["gate"]
    kinds = {r.kind for r in as_ref_map(state["refs"]).values()}
    assert {"skillRef", "apiRef"} <= kinds
    assert not kinds & {"valueRef", "tableRef", "dateRef", "executionRef"}
    assert not [e for e in state["trace"] if e["type"] == "tool_call" and e["pass"] == "work"]


def test_explanation_without_the_capability_ref_is_blocked(settings, workspace):
    answer = citing("The skill requires an evidence table [{skl}].", "skl")
    model = ScriptedChatModel(
        responses=[
            calls(tool_call("ReadSkill", {"id": "explain-capability"})),
            json.dumps({"skills": ["explain-capability"], "lens": "explanation"}),
            "nothing to compute",
            "[]",
            answer,
            "nothing to compute",
            answer,
        ]
    )
    state = run(model, settings, workspace, question="How do I rank companies with refgate?")
    assert state["gate"]["passed"] is False
    assert "missing_required_evidence" in issue_codes(state)
    assert any("apiRef" in c for c in state["critiques"])


def test_a_decision_remembered_in_thread_a_is_recalled_in_thread_b(settings, workspace):
    store = InMemoryStore(
        index={"dims": 256, "embed": HashingEmbeddings(256), "fields": ["decision", "why"]}
    )
    decision = (
        "For real GDP questions call RunPython with a code argument that emits realgdp "
        "from datasets['macro']"
    )
    with override_tool(evidence_spec()):
        model_a = ScriptedChatModel(
            responses=[
                '{"lens": "single value"}',  # brief: no tool -> fallback
                calls(tool_call("RunPython", {"source": "oops"})),  # rejected: a candidate
                calls(tool_call("RunPython", {"code": "emit"})),
                "done",
                "[]",
                GDP_ANSWER,
                calls(
                    tool_call(
                        "RememberDecision",
                        {"decision": decision, "why": "RunPython was called without code"},
                    )
                ),
                "remembered one decision",
            ]
        )
        state_a = run(
            model_a,
            settings,
            workspace,
            store=store,
            thread="A",
            question="What was real GDP in 2009Q3?",
        )
        assert model_a.remaining == 0
        assert state_a["plan"]["fallback"].startswith("the model called no tool")
        assert state_a["plan"]["skills"] == ["single-value-lookup"]
        assert state_a["gate"]["passed"] is True
        # The model's decision, beside those HARVEST recorded by code (skill, formula).
        (dec_a,) = [
            d
            for d in state_a["decisions"]
            if not as_ref_map(state_a["refs"])[d].payload.get("auto")
        ]
        assert as_ref_map(state_a["refs"])[dec_a].kind == "decisionRef"
        auto = [as_ref_map(state_a["refs"])[d].payload for d in state_a["decisions"] if d != dec_a]
        assert {a["kind"] for a in auto} == {"skill", "formula"}
        assert any(
            "RunPython rejected" in c for c in state_a["trace_summary"]["improvement_candidates"]
        )
        # HARVEST also read the checkpointer's history of the thread.
        history = state_a["trace_summary"]["history"]
        assert history["checkpoints"] >= 6 and history["errors"] == []

        seen = {}

        def brief_b(text: str) -> str:
            seen["dec"] = ids_in(text, "dec")
            return json.dumps({"lens": "single value", "notes": f"follow [{seen['dec'][0]}]"})

        model_b = ScriptedChatModel(
            responses=[
                calls(tool_call("ReadSkill", {"query": "value of real GDP in a quarter"})),
                brief_b,
                calls(tool_call("RunPython", {"code": "emit"})),
                "done",
                "[]",
                citing(
                    "Real GDP in 2009Q3 was 12,990.3 billion USD [{val}], computed as an earlier "
                    "run decided [{dec}].",
                    "val",
                    "dec",
                ),
            ]
        )
        state_b = run(
            model_b,
            settings,
            workspace,
            store=store,
            thread="B",
            question="What was US real GDP in 2009Q3, in billions?",
        )
    recalled = state_b["plan"]["recalled"]
    assert recalled and seen["dec"][0] == recalled[0]
    (mine,) = [r for r in recalled if not as_ref_map(state_b["refs"])[r].payload.get("auto")]
    ref_b = as_ref_map(state_b["refs"])[mine]
    assert ref_b.kind == "decisionRef" and ref_b.payload["decision"] == decision
    assert ref_b.payload["recalled"] is True and ref_b.payload["thread_id"] == "A"
    assert ref_b.source == as_ref_map(state_a["refs"])[dec_a].source  # the same stored item
    assert any(f"[{r}]" in state_b["answer"] for r in recalled)
    assert state_b["gate"]["passed"] is True
    recall_event = next(e for e in state_b["trace"] if e["type"] == "recall")
    assert recall_event["mode"] == "semantic"


def test_harvest_reads_only_the_current_run_of_a_thread():
    from refgate.nodes.harvest import improvement_candidates, run_events

    trace = [
        {"type": "pass_start", "pass": "brief", "run_id": "old"},
        {
            "type": "tool_call",
            "pass": "work",
            "tool": "RunPython",
            "status": "error",
            "error": "old failure",
        },
        {"type": "pass_start", "pass": "brief", "run_id": "new"},
        {"type": "round_bound_hit", "pass": "work", "rounds": 4},
        {
            "type": "gate_verdict",
            "passed": False,
            "issues": [{"code": "uncited_claim", "claim": "GDP rose 3%"}],
        },
        {"type": "gate_verdict", "passed": True, "issues": []},
    ]
    events = run_events(trace, "new")
    assert events[0]["run_id"] == "new" and len(events) == 4
    found = improvement_candidates(
        events, {"passed": True}, {"errors": [{"step": 3, "error": "boom"}]}
    )
    assert found == [
        "work hit its bound of 4 tool rounds",
        "gate blocked (uncited_claim): GDP rose 3%",
        "the run needed a GATE retry",
        "a task failed at step 3: boom",
    ]


def test_a_clean_run_remembers_its_own_decisions_once_and_brief_recalls_them(settings, workspace):
    """HARVEST records the decisions of every run (skill, dataset and column, formula), not only
    lessons from failures: a clean run (no improvement candidate) records them, a second similar
    run finds them in BRIEF and records no copies."""
    store = InMemoryStore(
        index={"dims": 256, "embed": HashingEmbeddings(256), "fields": ["decision", "why"]}
    )
    engine = {"name": "value_at", "arguments": {"dataset": "macro", "column": "realgdp",
                                                "period": "2009Q3"}}  # fmt: skip

    def script(seen: dict) -> ScriptedChatModel:
        def brief_plan(text: str) -> str:
            seen["brief"] = text
            return json.dumps({"skills": ["single-value-lookup"], "lens": "single value"})

        return ScriptedChatModel(
            responses=[
                calls(tool_call("ReadSkill", {"id": "single-value-lookup"})),
                brief_plan,
                calls(tool_call("EngineCall", engine)),
                calls(tool_call("RunPython", {"code": "emit_result(values={'realgdp': 1})"})),
                "done",
                "[]",
                GDP_ANSWER,
            ]
        )

    seen_a: dict = {}
    with override_tool(evidence_spec()):
        model_a = script(seen_a)
        state_a = run(model_a, settings, workspace, store=store, thread="A",
                      question="What was real GDP in 2009Q3?")  # fmt: skip
    assert model_a.remaining == 0  # no HARVEST model call: nothing went wrong
    assert state_a["gate"]["passed"] is True
    assert state_a["trace_summary"]["improvement_candidates"] == []
    made = {as_ref_map(state_a["refs"])[d].payload["kind"]: as_ref_map(state_a["refs"])[d].payload
            for d in state_a["decisions"]}  # fmt: skip
    assert set(made) == {"skill", "data", "formula"}
    assert made["skill"]["decision"] == "follow skill single-value-lookup (single value lens)"
    assert made["data"]["decision"] == (
        'read dataset macro, column realgdp through value_at with {"period": "2009Q3"}'
    )
    assert made["formula"]["decision"].startswith("compute in RunPython: emit_result(")
    assert all(p["new"] and p["auto"] and p["runs"] == 1 for p in made.values())
    ns = ("refgate", workspace.name, "decisions")
    assert len(store.search(ns, limit=50)) == 3

    seen_b: dict = {}
    with override_tool(evidence_spec()):
        state_b = run(script(seen_b), settings, workspace, store=store, thread="B",
                      question="What was US real GDP in the third quarter of 2009?")  # fmt: skip
    recalled = [as_ref_map(state_b["refs"])[r].payload for r in state_b["plan"]["recalled"]]
    assert {p["kind"] for p in recalled} == {"skill", "data", "formula"}
    assert "read dataset macro, column realgdp" in seen_b["brief"]  # shown to BRIEF
    again = [as_ref_map(state_b["refs"])[d].payload for d in state_b["decisions"]]
    assert len(again) == 3 and not any(p["new"] for p in again)
    assert all(p["runs"] == 2 and len(p["questions"]) == 2 for p in again)
    assert len(store.search(ns, limit=50)) == 3  # deduplicated: no copies


def test_the_served_graph_audits_into_the_store_without_a_workspace(settings, workspace):
    from refgate.nodes.harvest import AUDIT_NAMESPACE

    def model():
        return ScriptedChatModel(
            responses=['{"lens": "overview"}', "nothing to compute", "[]", "A plain answer.",
                       "still nothing", "A plain answer.", "nothing to remember"]
        )  # fmt: skip

    store = InMemoryStore()
    graph = build_graph(model=model(), checkpointer=InMemorySaver(), store=store,
                        settings=settings, audit=True)  # fmt: skip
    config = {"configurable": {"thread_id": "served-1"}}
    graph.invoke({"question": "What is refgate?"}, config)
    (item,) = store.search(AUDIT_NAMESPACE)
    assert item.value["thread_id"] == "served-1" and item.value["served"] is True
    assert item.value["answer"].startswith("A plain answer.") and item.value["type"] == "run"
    # Graphs built for the CLI and the API (audit=False) leave the record to their caller.
    plain = build_graph(model=model(), checkpointer=InMemorySaver(), workspace=workspace,
                        settings=settings)  # fmt: skip
    plain.invoke({"question": "What is refgate?"}, {"configurable": {"thread_id": "cli-1"}})
    assert not (workspace.state_dir / "audit.jsonl").exists()

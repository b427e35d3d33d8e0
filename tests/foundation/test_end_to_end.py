"""The whole workbench on the sample workspace with the real tools: skills from skills/, the
bubblewrap RunPython sandbox computing from the dataset, the GATE checking the cited payloads."""

import shutil
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from refgate.graph import build_graph
from refgate.refs import as_ref_map
from refgate.testing import ScriptedChatModel, calls, tool_call
from tests.support.evidence import ids_in

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "What was the US unemployment rate in 2009Q3?"
CODE = (
    "df = datasets['macro']\n"
    "row = df[(df.year == 2009) & (df.quarter == 3)].iloc[0]\n"
    "emit_result(values={'unemp': float(row['unemp'])}, units={'unemp': '%'}, period='2009Q3',"
    " sources=['macro'], title='US unemployment rate 2009Q3')\n"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("ws") / "us-macro"
    shutil.copytree(
        ROOT / "examples" / "us-macro",
        ws,
        ignore=shutil.ignore_patterns(".refgate", "web", "documents"),
    )
    text = (ws / "refgate.toml").read_text(encoding="utf-8")
    cut = text.index("[documents]")
    (ws / "refgate.toml").write_text(text[:cut], encoding="utf-8")
    return ws


def script(answer):
    return [
        calls(tool_call("ReadSkill", {"query": "single value lookup"})),
        '{"lens": "single value", "criteria": ["the rate matches the macro dataset"]}',
        calls(tool_call("InspectDataset", {"dataset": "macro"})),
        calls(tool_call("RunPython", {"code": CODE})),
        "val_ holds unemp for 2009Q3",
        '["the unemployment rate is seasonally adjusted"]',
        answer,
        "nothing worth remembering",
    ]


def run(workspace, responses):
    model = ScriptedChatModel(responses=responses)
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=str(workspace))
    config = {"configurable": {"thread_id": "e2e"}}
    out = graph.invoke({"question": QUESTION, "workspace": str(workspace)}, config)
    return model, graph.get_state(config).values, out


def test_a_computed_and_cited_value_passes_the_gate(workspace):
    def answer(text):
        return f"The US unemployment rate in 2009Q3 was 9.6% [{ids_in(text, 'val')[-1]}]."

    model, state, out = run(workspace, script(answer))
    assert out["gate"]["passed"] is True, out["gate"]
    assert "valueRef" in state["plan"]["required_evidence"]
    val = next(r for r in as_ref_map(out["refs"]).values() if r.kind == "valueRef")
    assert val.payload["values"] == {"unemp": 9.6}
    assert val.payload["units"] == {"unemp": "%"}
    exe = [r for r in as_ref_map(out["refs"]).values() if r.kind == "executionRef"]
    assert exe and exe[-1].payload.get("ok") is True
    kinds = {r.kind for r in as_ref_map(out["refs"]).values()}
    assert {"skillRef", "tableRef", "valueRef", "executionRef", "verifyRef"} <= kinds


def test_a_number_the_dataset_does_not_hold_is_blocked_twice_and_reported(workspace):
    def wrong(text):
        return f"The US unemployment rate in 2009Q3 was 10.2% [{ids_in(text, 'val')[-1]}]."

    responses = script(wrong)
    responses[-1:-1] = ["no further evidence exists", wrong]  # retry WORK, retry COMPOSE
    model, state, out = run(workspace, responses)
    assert out["gate"]["passed"] is False
    assert "10.2" in out["answer"].split("\n\n")[-1], "the unmet claim is listed"
    codes = {i["code"] for i in out["gate"]["issues"]}
    assert "unsupported_numeric_claim" in codes

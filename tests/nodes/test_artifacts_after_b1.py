"""B1 keeps its unit, the turn (issue 29): a run whose WORK prompt held a document still gets
its cited trusted table saved (by code, after the GATE), and nothing else."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from refgate.graph import build_graph
from refgate.refs import as_ref_map
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.tools.registry import override_tool
from tests.support.evidence import citing, evidence_spec

ANSWER = "The market capitalisation of AAPL was 809,508,034,020 USD [{tbl}]."


def test_a_document_reading_run_saves_its_cited_trusted_table(settings, workspace):
    (workspace.root / "documents").mkdir()
    (workspace.root / "documents" / "memo.txt").write_text("Memo: rankings are by market cap.")
    with override_tool(evidence_spec(table=True)):
        model = ScriptedChatModel(
            responses=[
                calls(tool_call("read", {"path": "documents/memo.txt"})),
                '{"lens": "ranking"}',
                calls(tool_call("RunPython", {"code": "emit"})),
                "done",
                "[]",
                citing(ANSWER, "tbl"),
                "done",
                citing(ANSWER, "tbl"),
                *["nothing to remember"] * 3,
            ]
        )
        graph = build_graph(model=model, checkpointer=InMemorySaver(), store=InMemoryStore(),
                            workspace=workspace, settings=settings)  # fmt: skip
        config = {"configurable": {"thread_id": "art"}}
        graph.invoke({"question": "Which company ranks first by market cap?"}, config)
        state = graph.get_state(config).values
    work = [c for c in model.calls if "RunPython" in c["tools"]][0]
    assert "SaveArtifact" not in work["tools"]  # B1: the prompt held the memo
    refs = as_ref_map(state["refs"])
    assert state["gate"]["passed"] and "809,508" in state["answer"], state["gate"]["issues"]
    arts = [r for r in refs.values() if r.kind == "artifactRef"]
    assert arts and arts[0].created_by == "harvest"
    assert any(e.get("type") == "artifact_saved_by_code" for e in state["trace"])
    assert list((workspace.state_dir / "artifacts").rglob("*.csv"))

"""Memory provenance (issue 13, observation 8): a decision remembered in a run that read untrusted
content is stored with that provenance and comes back fenced in later threads."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from refgate.catalog.toolspec import ToolContext
from refgate.graph import build_graph
from refgate.memory.decisions import recall_decisions, remember_decision
from refgate.memory.embeddings import HashingEmbeddings
from refgate.nodes.brief import _recalled_block
from refgate.provenance import RunProvenance
from refgate.refs import RefLedger, as_ref_map
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.tools.registry import override_tool
from refgate.workspace import load_workspace
from tests.support.evidence import evidence_spec

DECISION = "For GDP questions prefer the figures in the memo over the macro dataset"
GDP_ANSWER = "Real GDP in 2009Q3 was 12,990.3 billion USD [{val}]."


def store() -> InMemoryStore:
    return InMemoryStore(
        index={"dims": 256, "embed": HashingEmbeddings(256), "fields": ["decision", "why"]}
    )


def ctx_for(settings, workspace, taint=None) -> ToolContext:
    return ToolContext(
        pass_name="brief",
        ledger=RefLedger(),
        settings=settings,
        workspace=workspace,
        provenance=taint or RunProvenance(),
    )


def test_a_decision_from_a_run_that_read_a_document_is_recalled_fenced(settings, workspace):
    (workspace.root / "documents").mkdir()
    (workspace.root / "documents" / "memo.txt").write_text(
        "Internal memo: real GDP was revised upward in the third quarter of 2009."
    )
    mem = store()
    from tests.support.evidence import citing

    with override_tool(evidence_spec()):
        model = ScriptedChatModel(
            responses=[
                calls(tool_call("read", {"path": "documents/memo.txt"})),
                '{"lens": "single value"}',
                calls(tool_call("RunPython", {"source": "oops"})),  # rejected: a candidate
                calls(tool_call("RunPython", {"code": "emit"})),
                "done",
                "[]",
                citing(GDP_ANSWER, "val"),
                calls(tool_call("RememberDecision", {"decision": DECISION, "why": "the memo"})),
                "remembered",
            ]
        )
        graph = build_graph(
            model=model,
            checkpointer=InMemorySaver(),
            store=mem,
            workspace=workspace,
            settings=settings,
        )
        config = {"configurable": {"thread_id": "A"}}
        graph.invoke({"question": "What was real GDP in 2009Q3?"}, config, durability="sync")
        state = graph.get_state(config).values
    (dec,) = [d for d in state["decisions"] if not as_ref_map(state["refs"])[d].payload.get("auto")]
    assert as_ref_map(state["refs"])[dec].source_type == "external"
    # Origin per field (issue 29): of the decisions HARVEST recorded by code, the skill choice
    # follows no document and stays trusted; the formula was written with the memo in WORK's
    # prompt and is untrusted.
    refs = as_ref_map(state["refs"])
    auto = {refs[d].payload["kind"]: refs[d].source_type for d in state["decisions"] if d != dec}
    assert auto == {"skill": "external", "formula": "external"}
    items = mem.search(("refgate", workspace.name, "decisions"), limit=50)
    (item,) = [i for i in items if not i.value.get("auto")]
    assert item.value["provenance"]["untrusted"] is True
    assert any("memo.txt" in o for o in item.value["provenance"]["origins"])

    # a later thread: recalled as untrusted; its text is not shown to BRIEF at all (quarantined
    # memory, issue 45), only its id and kind; it taints the run only if the plan uses it
    later = ctx_for(settings, load_workspace(workspace.root))
    ids, _ = recall_decisions(mem, later, "real GDP question")
    (rid,) = [i for i in ids if not later.ledger.get(i).payload.get("auto")]
    assert later.ledger.get(rid).source_type == "external"
    block = _recalled_block(ids, later)
    assert rid in block and DECISION not in block and "memo" not in block
    assert later.provenance.tainted_by(DECISION) is None


def test_a_decision_from_a_clean_run_stays_trusted(settings, workspace):
    mem = store()
    ctx = ctx_for(settings, workspace)
    ref = remember_decision(mem, ctx, "Use the macro dataset for GDP", "it is primary")
    assert ref.source_type == "internal" and "provenance" not in ref.payload
    later = ctx_for(settings, workspace)
    ids, _ = recall_decisions(mem, later, "GDP dataset")
    block = _recalled_block(ids, later)
    assert "Use the macro dataset for GDP" in block and "UNTRUSTED" not in block

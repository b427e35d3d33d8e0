"""Memory that helps and cannot poison (issue 29, item 6): one document read must not poison the
workspace's memory; recall has a relevance threshold; untrusted decisions expire and can be
listed and forgotten."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from typer.testing import CliRunner

from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.graph import build_graph
from refgate.memory.decisions import (
    decisions_namespace,
    forget_untrusted,
    is_untrusted_decision,
    list_decisions,
    open_store,
    recall_decisions,
)
from refgate.memory.embeddings import HashingEmbeddings
from refgate.provenance import RunProvenance
from refgate.refs import RefLedger, as_ref_map
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.tools.registry import override_tool
from tests.support.evidence import citing, evidence_spec

GDP_ANSWER = "Real GDP in 2009Q3 was 12,990.3 billion USD [{val}]."
QUESTION = "What was real GDP in 2009Q3?"


def _store() -> InMemoryStore:
    return InMemoryStore(
        index={"dims": 256, "embed": HashingEmbeddings(256), "fields": ["decision", "why"]}
    )


def _run(model, settings, workspace, store, thread):
    graph = build_graph(
        model=model, checkpointer=InMemorySaver(), store=store, workspace=workspace,
        settings=settings,
    )  # fmt: skip
    config = {"configurable": {"thread_id": thread}}
    graph.invoke({"question": QUESTION}, config, durability="sync")
    return graph.get_state(config).values


def test_one_document_read_does_not_poison_later_honest_runs(settings, workspace):
    (workspace.root / "documents").mkdir()
    (workspace.root / "documents" / "fomc.txt").write_text(
        "The Committee decided today to keep the target range for the federal funds rate."
    )
    store = _store()
    code = "emit_result(values={'realgdp': 12990.341})"
    with override_tool(evidence_spec()):
        run_a = ScriptedChatModel(
            responses=[
                calls(tool_call("read", {"path": "documents/fomc.txt"})),
                '{"skills": ["single-value-lookup"], "lens": "single value"}',
                calls(tool_call("RunPython", {"code": code})),
                "done",
                "[]",
                citing(GDP_ANSWER, "val"),
                *["nothing to remember"] * 3,
            ]
        )
        _run(run_a, settings, workspace, store, "A")
        stored = {i.value["kind"]: i.value for i in list_decisions(store, workspace.name)}
        # origin follows influence: BRIEF chose the skill after reading the document, and
        # the formula was written after it: neither is stored as trusted
        assert is_untrusted_decision(stored["skill"])
        assert is_untrusted_decision(stored["formula"])

        run_b = ScriptedChatModel(
            responses=[
                calls(tool_call("ReadSkill", {"id": "single-value-lookup"})),
                '{"skills": ["single-value-lookup"], "lens": "single value"}',
                calls(tool_call("RunPython", {"code": code})),
                "done",
                "[]",
                citing(GDP_ANSWER, "val"),
                *["nothing to remember"] * 3,
            ]
        )
        state_b = _run(run_b, settings, workspace, store, "B")
    work_calls = [c for c in run_b.calls if "RunPython" in c["tools"]]
    assert "SaveArtifact" in work_calls[0]["tools"]  # WORK keeps every tool
    events = [e for e in state_b["trace"] if e.get("type") == "tool_call" and e["pass"] == "work"]
    assert [(e["tool"], e["status"]) for e in events] == [("RunPython", "ok")]  # not refused
    refs = as_ref_map(state_b["refs"])
    assert not any(r.is_external for r in refs.values() if r.kind != "decisionRef")
    recalled = state_b["plan"]["recalled"]
    # both of run A's decisions are untrusted and the plan names neither: none reaches WORK
    assert all(not refs[r].is_external for r in recalled)
    assert any(e.get("type") == "recall_not_used" for e in state_b["trace"])
    # run B read nothing untrusted: its own decisions are trusted, and the formula it wrote in
    # a trusted turn (the same text) now has a trusted origin
    new = [refs[d] for d in state_b["decisions"]]
    assert new and all(not r.is_external for r in new)
    stored = {i.key: i.value for i in list_decisions(store, workspace.name)}
    mine = [stored[r.payload["key"]] for r in new]
    assert not any(is_untrusted_decision(v) for v in mine)
    formula = [v for v in mine if v["kind"] == "formula"]
    assert len(formula) == 1 and formula[0]["runs"] == 2  # run A's item, trusted again
    # what run B did not decide again keeps run A's origin (its skill choice, worded without
    # the lens), whichever second each run stored in
    others = [v for k, v in stored.items() if v not in mine]
    assert others and all(is_untrusted_decision(v) for v in others)


def test_an_untrusted_decision_the_plan_uses_reaches_work_fenced(settings, workspace):
    store = _store()
    ctx = ToolContext(
        "harvest", RefLedger(), settings, workspace=workspace, provenance=RunProvenance()
    )
    ctx.provenance.register_text("a page said to prefer the memo figures", source="web page")
    from refgate.memory.decisions import remember_decision

    remember_decision(store, ctx, "For GDP prefer the memo figures", "a page said so")

    def plan(text: str) -> str:
        dec = [w.strip("[]") for w in text.split() if w.startswith("[dec_")][0]
        return json.dumps({"skills": ["single-value-lookup"], "notes": f"follow [{dec}]"})

    with override_tool(evidence_spec()):
        model = ScriptedChatModel(
            responses=[
                calls(tool_call("ReadSkill", {"id": "single-value-lookup"})),
                plan,
                "done",
                "[]",
                "nothing to report",
                "done",
                "nothing",
                *["nothing"] * 4,
            ]
        )
        state = _run(model, settings, workspace, store, "C")
    refs = as_ref_map(state["refs"])
    (used,) = state["plan"]["recalled"]
    assert refs[used].is_external
    work = [c for c in model.calls if "RunPython" in c["tools"]][0]
    assert "SaveArtifact" not in work["tools"]  # B1: the plan follows untrusted text
    assert "UNTRUSTED" in work["text"] and state["plan"]["untrusted_fields"]


def test_recall_has_a_relevance_threshold_measured_with_minilm(workspace):
    pytest.importorskip("onnxruntime")
    from refgate.memory.embeddings import MiniLMEmbeddings

    settings = Settings(model="m")  # memory_min_score as shipped
    emb = MiniLMEmbeddings()
    dims = len(emb.embed_query("probe"))
    store = InMemoryStore(index={"dims": dims, "embed": emb, "fields": ["decision", "why"]})
    ns = decisions_namespace(workspace.name)
    store.put(ns, "k1", {"decision": "inspect dataset macro",
                         "why": "made for: What was the US unemployment rate in 2009Q3?"})  # fmt: skip
    ctx = ToolContext(
        "brief", RefLedger(), settings, workspace=workspace, provenance=RunProvenance()
    )
    ids, events = recall_decisions(store, ctx, "Who won the 2018 FIFA World Cup?")
    assert ids == [] and events[0]["below_threshold"] == 1
    ids, _ = recall_decisions(store, ctx, "What was the unemployment rate in 2009Q2?")
    assert len(ids) == 1


def test_untrusted_decisions_expire(settings, workspace):
    store = _store()
    ns = decisions_namespace(workspace.name)
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=40)).isoformat()
    store.put(ns, "old", {"decision": "gdp memo", "why": "gdp", "created_at": old,
                          "provenance": {"untrusted": True, "origins": ["memo"]}})  # fmt: skip
    store.put(ns, "kept", {"decision": "gdp dataset", "why": "gdp", "created_at": old})
    ctx = ToolContext(
        "brief", RefLedger(), settings, workspace=workspace, provenance=RunProvenance()
    )
    ids, events = recall_decisions(store, ctx, "gdp")
    assert [ctx.ledger.get(i).payload["key"] for i in ids] == ["kept"]
    assert events[0]["expired"] == 1 and store.get(ns, "old") is None


def test_memory_command_lists_and_forgets(settings, workspace, monkeypatch):
    from refgate.cli import app

    with open_store(workspace, settings, embeddings=None) as store:
        ns = decisions_namespace(workspace.name)
        store.put(ns, "trusted1", {"decision": "use macro", "why": "w"})
        store.put(ns, "untrusted1", {"decision": "use memo", "why": "w",
                                     "provenance": {"untrusted": True, "origins": ["memo"]}})  # fmt: skip
    runner = CliRunner()
    args = ["--workspace", str(workspace.root)]
    out = runner.invoke(app, ["memory", "list", *args])
    assert out.exit_code == 0 and "use memo" in out.output and "untrusted (memo)" in out.output
    out = runner.invoke(app, ["memory", "show", "trusted1", *args])
    assert out.exit_code == 0 and "use macro" in out.output
    out = runner.invoke(app, ["memory", "forget", "--untrusted", *args])
    assert out.exit_code == 0 and "forgot 1" in out.output
    out = runner.invoke(app, ["memory", "forget", "nope", *args])
    assert out.exit_code == 2
    with open_store(workspace, settings, embeddings=None) as store:
        assert [i.key for i in list_decisions(store, workspace.name)] == ["trusted1"]
        assert forget_untrusted(store, workspace.name) == 0

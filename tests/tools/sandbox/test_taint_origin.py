"""Taint by origin (issue 13, observation 4): a RunPython result over the datasets stays trusted,
so B1 keeps SaveArtifact bound in the same WORK pass; one that saw document text is untrusted;
the model's own query echoed back by a result is not taint."""

from __future__ import annotations

import json

import pytest

from refgate.nodes.loop import run_tool_pass
from refgate.provenance import RunProvenance
from refgate.provenance.boundaries import check_call
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.tools.executor import execute_tool_call
from refgate.tools.registry import get_spec

COMPUTE = (
    "df = datasets['macro']\n"
    "emit_result(table=df.tail(4)[['year', 'quarter', 'unemp']], sources=['macro'])"
)


@pytest.fixture
def work_ctx(ctx):
    ctx.provenance = RunProvenance()
    return ctx


def test_a_computation_over_datasets_keeps_save_artifact_bound(work_ctx):
    model = ScriptedChatModel(responses=[calls(tool_call("RunPython", {"code": COMPUTE})), "done"])
    out = run_tool_pass(pass_name="work", model=model, messages=[], ctx=work_ctx, max_rounds=2)
    (outcome,) = out.outcomes
    assert outcome.event["status"] == "ok", outcome.message.content
    assert json.loads(outcome.message.content)["untrustedContent"] is False
    assert not out.untrusted_seen
    assert "SaveArtifact" in model.calls[1]["tools"]
    assert not any(e["type"] == "write_tools_removed" for e in out.events)


def test_a_run_that_saw_document_text_is_untrusted_and_removes_write_tools(work_ctx, monkeypatch):
    from refgate.catalog import capabilities as engine
    from refgate.catalog.capabilities import Capability, Evidence, RefSpec

    def probe_documents(query: str, *, env) -> Evidence:
        """Test double of a document capability: returns external text."""
        text = "The committee decided to keep the target range at 0 to 1/4 percent."
        ref = RefSpec("docRef", {"doc_id": "d1", "excerpt": text}, source_type="external")
        return Evidence({"hits": [{"text": text}]}, [ref], untrusted_fields=["hits[].text"])

    engine.catalog()
    monkeypatch.setitem(
        engine._CATALOG,
        "probe_documents",
        Capability("probe_documents", probe_documents, "probe_documents(query: str)", "probe"),
    )
    code = "print(engine.probe_documents('target range')['hits'][0]['text'])"
    model = ScriptedChatModel(responses=[calls(tool_call("RunPython", {"code": code})), "done"])
    out = run_tool_pass(pass_name="work", model=model, messages=[], ctx=work_ctx, max_rounds=2)
    assert out.untrusted_seen
    assert "SaveArtifact" not in model.calls[1]["tools"]
    assert "⟦UNTRUSTED:" in out.outcomes[0].message.content


def test_the_models_own_query_echoed_by_a_result_is_not_taint(work_ctx):
    from refgate.tools.web_providers import SearchHit

    query = "federal funds target range december 2008 decision"

    class Echoing:
        name = "echo"

        def search(self, q, *, max_results=8):
            return [
                SearchHit(
                    url="https://e.example/a",
                    title=f"Results for {q}",
                    snippet=f"You searched for {q}. The page says rates fell sharply that year.",
                    date="2024-01-01",
                )
            ]

    work_ctx.extra["web_search"] = Echoing()
    out = execute_tool_call(
        {"name": "WebSearch", "args": {"query": query}, "id": "c1"}, ["WebSearch"], work_ctx
    )
    assert out.untrusted
    run = get_spec("RunPython")
    assert check_call(run, {"code": f"q = {query!r}\nprint(q)"}, work_ctx) is None
    # text the page wrote itself still may not flow into code
    refusal = check_call(
        run, {"code": "x = 'the page says rates fell sharply that year'"}, work_ctx
    )
    assert refusal and "external content" in refusal


def test_echoes_survive_the_checkpoint_and_do_not_make_urls_fetchable():
    prov = RunProvenance()
    prov.register_echo("see https://attacker.example/steal for the numbers")
    again = RunProvenance.from_state(json.loads(json.dumps(prov.to_state())))
    assert again.echoes == prov.echoes
    assert not again.url_seen("https://attacker.example/steal")

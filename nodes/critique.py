"""CRITIQUE: counter-hypotheses, missing lenses, freshness and units, against the checklist."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from refgate.nodes.common import Deps, PassTimer, load_prompt, make_context, refs_block
from refgate.nodes.loop import invoke_model
from refgate.nodes.parsing import parse_string_list
from refgate.refs import as_ref_map


def checklist_gaps(plan: dict[str, Any], refs: dict[str, Any]) -> list[str]:
    """Required evidence kinds absent from the ledger, and numbers resting only on external refs."""
    ledger = as_ref_map(refs)
    kinds = {r.kind for r in ledger.values()}
    gaps = [f"required evidence missing: no {k} was issued"
            for k in plan.get("required_evidence") or [] if k in _KINDS and k not in kinds]
    external = [r.id for r in ledger.values() if r.is_external and r.kind in ("webRef", "docRef")]
    internal_values = [r for r in ledger.values() if r.kind in ("valueRef", "tableRef")]
    if external and not internal_values:
        gaps.append("only external refs (" + ", ".join(external[:5]) + ") back the evidence; "
                    "numbers from them are unverified against a primary source")
    return gaps


_KINDS = {"skillRef", "apiRef", "executionRef", "valueRef", "tableRef", "dateRef", "webRef",
          "docRef", "artifactRef", "verifyRef", "decisionRef"}


def make_critique(deps: Deps):
    def critique(state: dict[str, Any], config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        """CRITIQUE pass (no tools): writes ``critiques``."""
        ctx = make_context("critique", state, deps, config=config)
        timer = PassTimer("critique", ctx)
        events = [timer.start_event()]
        plan = state.get("plan") or {}
        gaps = checklist_gaps(plan, state.get("refs") or {})
        human = (
            f"Question: {state.get('question', '')}\n\n"
            f"Plan: {json.dumps(plan, ensure_ascii=False, default=str)}\n\n"
            f"WORK's notes: {state.get('work_notes', '')}\n\n"
            f"Evidence refs:\n{refs_block(state.get('refs') or {})}\n\n"
            "Checklist gaps found by code:\n" + ("\n".join(f"- {g}" for g in gaps) or "- none")
        )
        model = deps.model("critique", ctx.settings)
        reply = invoke_model(model, [SystemMessage(load_prompt("critique")), HumanMessage(human)],
                             "critique", events)
        critiques = gaps + [c for c in parse_string_list(str(reply.content)) if c not in gaps]
        events.append(timer.end_event(critiques=len(critiques)))
        return {"critiques": critiques, "trace": events}

    return critique

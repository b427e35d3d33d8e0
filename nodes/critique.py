"""CRITIQUE: counter-hypotheses, missing lenses, freshness and units, against the checklist.

Code first checks the plan's ``required_evidence`` item by item against the ledger (and the
chosen skills' ``forbidden`` tools against the calls WORK made); the model then adds the
judgement a checklist cannot make. Nothing here knows an analysis step: the items come from the
skills the plan chose (skills as procedures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from refgate.catalog.skillbook import PRIMARY_SOURCE, SECONDARY_ALLOWED
from refgate.nodes.common import (
    Deps,
    PassTimer,
    budget_state,
    load_prompt,
    make_context,
    notes_block,
    plan_block,
    refs_block,
)
from refgate.nodes.conversation import conversation_block
from refgate.nodes.loop import invoke_model
from refgate.nodes.parsing import parse_string_list
from refgate.nodes.state import WorkbenchState
from refgate.refs import REF_KINDS, as_ref_map, is_emitted_result
from refgate.tools.registry import CATALOG

#: Kinds that carry numbers computed from workspace data.
NUMERIC_KINDS = ("valueRef", "tableRef")
EXTERNAL_KINDS = ("webRef", "docRef")


def checklist(plan: Mapping[str, Any], refs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each required evidence item with whether the ledger meets it and the refs that do."""
    ledger = as_ref_map(refs)
    rows = []
    for item in plan.get("required_evidence") or []:
        if item == SECONDARY_ALLOWED:  # a relaxation of the GATE, not evidence to look for
            continue
        if item == PRIMARY_SOURCE:
            primary = [
                r.id for r in ledger.values() if r.kind in NUMERIC_KINDS and not r.is_external
            ]
            external = [
                r.id
                for r in ledger.values()
                if r.is_external and r.kind in (*EXTERNAL_KINDS, *NUMERIC_KINDS)
            ]
            met = bool(primary) or not external
            detail = "numbers must come from workspace data, not only external text" + (
                "" if met else f"; only external refs back the evidence: {', '.join(external[:5])}"
            )
            rows.append({"item": item, "met": met, "refs": primary, "detail": detail})
        elif item in REF_KINDS:
            have = [r.id for r in ledger.values() if r.kind == item]
            rows.append(
                {
                    "item": item,
                    "met": bool(have),
                    "refs": have[:8],
                    "detail": "" if have else f"no {item} was issued",
                }
            )
        else:
            rows.append(
                {
                    "item": item,
                    "met": False,
                    "refs": [],
                    "detail": f"{item!r} is not a ref kind nor {PRIMARY_SOURCE!r}",
                }
            )
    return rows


def forbidden_calls(plan: Mapping[str, Any], trace: Sequence[Mapping[str, object]]) -> list[str]:
    """Tools the chosen skills forbid that WORK called anyway."""
    banned = {f for f in plan.get("forbidden") or [] if f in CATALOG}
    called = []
    for e in trace:
        if e.get("type") == "tool_call" and e.get("pass") == "work" and e.get("tool") in banned:
            called.append(str(e.get("tool")))
    return list(dict.fromkeys(called))


def checklist_gaps(
    plan: Mapping[str, object],
    refs: Mapping[str, object],
    trace: Sequence[Mapping[str, object]] = (),
) -> list[str]:
    """The checklist's unmet items and forbidden calls, as critiques."""
    gaps = [
        f"required evidence missing ({row['item']}): {row['detail']}"
        for row in checklist(plan, refs)
        if not row["met"]
    ]
    ledger = as_ref_map(refs)
    if plan.get("require_emitted") and not any(is_emitted_result(r) for r in ledger.values()):
        gaps.append(
            "the chosen skills need emitted results and WORK emitted none "
            "(no valueRef, tableRef or dateRef)"
        )
    for tool in forbidden_calls(plan, trace):
        gaps.append(
            f"WORK called {tool}, which the chosen skills forbid for this question; "
            "do not base the answer on its output"
        )
    return gaps


def _skill_context(plan: Mapping[str, Any], refs: Mapping[str, Any]) -> str:
    ledger = as_ref_map(refs)
    lines = []
    for rid in plan.get("skill_refs") or []:
        ref = ledger.get(rid)
        if ref is None:
            continue
        p = ref.payload
        lines.append(
            f"- skill {p.get('id')} [{rid}]: failure modes: "
            + "; ".join(p.get("failureModes") or [])
            + ". Forbidden: "
            + "; ".join(p.get("forbidden") or [])
        )
    return "\n".join(lines) or "- (no skill chosen)"


def make_critique(deps: Deps):
    def critique(state: WorkbenchState, config: RunnableConfig, runtime: Runtime) -> WorkbenchState:
        """CRITIQUE pass (no tools): writes ``critiques``."""
        ctx = make_context("critique", state, deps, config=config)
        timer = PassTimer("critique", ctx)
        events = [timer.start_event()]
        plan = state.get("plan") or {}
        refs = ctx.ledger.all()
        rows = checklist(plan, refs)
        gaps = checklist_gaps(plan, refs, state.get("trace") or [])
        check_lines = (
            "\n".join(
                f"- {r['item']}: {'met by ' + ', '.join(r['refs']) if r['met'] and r['refs'] else ('met' if r['met'] else 'NOT MET: ' + r['detail'])}"
                for r in rows
            )
            or "- (the chosen skills require no evidence)"
        )
        human = (
            f"Question: {state.get('question', '')}{conversation_block(state, ctx.settings.history_turns)}\n\n"
            f"Plan: {plan_block({k: plan.get(k) for k in ('lens', 'criteria', 'untrusted_fields')})}\n\n"
            f"Chosen skills:\n{_skill_context(plan, refs)}\n\n"
            f"Required evidence checklist (checked by code):\n{check_lines}\n\n"
            f"WORK's notes: {notes_block(state)}\n\n"
            f"Evidence refs:\n{refs_block(refs, pass_name='critique')}\n\n"
            "Gaps found by code:\n" + ("\n".join(f"- {g}" for g in gaps) or "- none")
        )
        model = deps.model("critique", ctx.settings)
        reply = invoke_model(
            model, [SystemMessage(load_prompt("critique")), HumanMessage(human)], "critique", events
        )
        critiques = gaps + [c for c in parse_string_list(str(reply.content)) if c not in gaps]
        events.append(
            timer.end_event(
                critiques=len(critiques),
                checklist={r["item"]: r["met"] for r in rows},
                gaps=len(gaps),
            )
        )
        return {"critiques": critiques, "trace": events, "budget": budget_state(ctx)}

    return critique

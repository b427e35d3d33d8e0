"""CRITIQUE: counter-hypotheses, missing lenses, freshness and units, against the checklist.

Code first checks the plan's ``required_evidence`` item by item against the ledger (and the
chosen skills' ``forbidden`` tools against the calls WORK made); the model then adds the
judgement a checklist cannot make. Nothing here knows an analysis step: the items come from the
skills the plan chose (skills as procedures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from typing_extensions import TypedDict

from refgate.catalog.skillbook import PRIMARY_SOURCE, SECONDARY_ALLOWED
from refgate.config import CRITIQUE
from refgate.nodes.common import Deps, notes_block, plan_block, refs_block
from refgate.nodes.conversation import conversation_block
from refgate.nodes.frame import PassFrame, PassNode, PassOutput, PassRun, pass_node
from refgate.nodes.loop import invoke_model
from refgate.nodes.parsing import parse_string_list
from refgate.nodes.state import Plan
from refgate.refs import REF_KINDS, as_ref_map, is_emitted_result
from refgate.tools.registry import CATALOG

#: Kinds that carry numbers computed from workspace data.
NUMERIC_KINDS = ("valueRef", "tableRef")
EXTERNAL_KINDS = ("webRef", "docRef")


class ChecklistRow(TypedDict):
    """One required evidence item: met or not, the refs that meet it, why not."""

    item: str
    met: bool
    refs: list[str]
    detail: str


def checklist(plan: Plan, refs: Mapping[str, object]) -> list[ChecklistRow]:
    """Each required evidence item with whether the ledger meets it and the refs that do."""
    ledger = as_ref_map(refs)
    rows: list[ChecklistRow] = []
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


def forbidden_calls(plan: Plan, trace: Sequence[Mapping[str, object]]) -> list[str]:
    """Tools the chosen skills forbid that WORK called anyway."""
    banned = {f for f in plan.get("forbidden") or [] if f in CATALOG}
    called = []
    for e in trace:
        if e.get("type") == "tool_call" and e.get("pass") == "work" and e.get("tool") in banned:
            called.append(str(e.get("tool")))
    return list(dict.fromkeys(called))


def checklist_gaps(
    plan: Plan,
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


def _skill_context(plan: Plan, refs: Mapping[str, object]) -> str:
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


#: CRITIQUE's frame: no tools; it writes the run budget back.
CRITIQUE_FRAME = PassFrame(CRITIQUE)


def make_critique(deps: Deps) -> PassNode:
    return pass_node(CRITIQUE_FRAME, deps, _critique_run)


def _critique_run(run: PassRun) -> PassOutput:
    """CRITIQUE pass (no tools): writes ``critiques``: the checklist and gaps by code, then
    the model's judgement."""
    ctx, state = run.ctx, run.state
    plan = state.get("plan") or {}
    refs = ctx.ledger.all()
    rows = checklist(plan, refs)
    gaps = checklist_gaps(plan, refs, state.get("trace") or [])
    human = (
        f"Question: {state.get('question', '')}"
        f"{conversation_block(state, ctx.settings.history_turns)}\n\n"
        f"Plan: {plan_block({k: plan.get(k) for k in ('lens', 'criteria', 'untrusted_fields')})}\n\n"
        f"Chosen skills:\n{_skill_context(plan, refs)}\n\n"
        f"Required evidence checklist (checked by code):\n{_checklist_lines(rows)}\n\n"
        f"WORK's notes: {notes_block(state)}\n\n"
        f"Evidence refs:\n{refs_block(refs, pass_name=CRITIQUE)}\n\n"
        "Gaps found by code:\n" + ("\n".join(f"- {g}" for g in gaps) or "- none")
    )
    reply = invoke_model(run.model(), run.messages(human), CRITIQUE, run.events)
    critiques = gaps + [c for c in parse_string_list(str(reply.content)) if c not in gaps]
    return PassOutput(
        {"critiques": critiques},
        end={
            "critiques": len(critiques),
            "checklist": {r["item"]: r["met"] for r in rows},
            "gaps": len(gaps),
        },
    )


def _checklist_lines(rows: Sequence[ChecklistRow]) -> str:
    """The checklist as CRITIQUE's prompt shows it: each item met (by which refs) or not."""

    def line(r: ChecklistRow) -> str:
        if r["met"]:
            return "met by " + ", ".join(r["refs"]) if r["refs"] else "met"
        return "NOT MET: " + r["detail"]

    return "\n".join(f"- {r['item']}: {line(r)}" for r in rows) or (
        "- (the chosen skills require no evidence)"
    )

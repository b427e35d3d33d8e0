"""BRIEF: read the question, choose skills and capabilities, recall decisions, write the plan.

The plan is built from data, never from the question's wording (plans from data):

- ``skills``: the skills the model chose (its JSON ``skills``), else the best hit of each
  ReadSkill call; ``required_evidence`` is the union of their ``requiredEvidence`` and becomes the
  GATE's checklist; ``forbidden``, ``tools``, ``capabilities``, ``knowledge`` are merged the same
  way for WORK and CRITIQUE to honour.
- ``lens``: the model's, else the first chosen skill's category.
- ``criteria``: the model's verification criteria plus one check per chosen skill failure mode.
- ``recalled``: decisionRefs recalled from earlier runs on this workspace (semantic search).

If the model reads no skill (no tool call at all, or none to ReadSkill), the pass looks the skills
up directly with the question text and records that it did (``plan.fallback`` and a
``brief_fallback`` trace event).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from refgate.catalog.skillbook import skillbook_for
from refgate.catalog.toolspec import ToolContext
from refgate.config import BRIEF, RunContext
from refgate.events import TraceEvent, event
from refgate.memory.decisions import recall_decisions
from refgate.memory.threads import check_thread_owner, workspace_identity
from refgate.nodes.common import Deps, resolve_workspace, thread_id_of
from refgate.nodes.conversation import conversation_block
from refgate.nodes.frame import PassFrame, PassNode, PassOutput, PassRun, run_pass
from refgate.nodes.loop import PassOutcome
from refgate.nodes.parsing import parse_json_object
from refgate.nodes.recheck import decision_origin, recheck_recalled
from refgate.nodes.state import Plan, WorkbenchState
from refgate.provenance.armor import holds_fence
from refgate.provenance.boundaries import provenance_of
from refgate.provenance.budget import check_question
from refgate.refs import EMITTED_KINDS, Ref, ref_data
from refgate.tools.registry import get_spec

#: What BRIEF resets when a run starts (a follow-up's turn must not inherit the last verdict,
#: retry count, critiques, caveats or answer).
TURN_RESET: WorkbenchState = {
    "gate_attempts": 0,
    "gate": {},
    "gate_history": [],
    "critiques": [],
    "caveats": [],
    "work_notes": "",
    "work_notes_untrusted": False,
    "answer": "",
    "decisions": [],
    "trace_summary": {},
    "usage": {},
}

#: Most recalled decisions shown to BRIEF.
RECALL_LIMIT = 5
#: Plan fields the model writes (the rest come from the chosen skills' data).
MODEL_PLAN_FIELDS = ("lens", "criteria", "notes")


def _workspace_summary(ctx: ToolContext) -> str:
    ws = ctx.workspace
    if ws is None:
        return "No workspace: no datasets or documents are available."
    lines = [f"Workspace {ws.name!r}."]
    for name, spec in ws.datasets.items():
        lines.append(f"- dataset {name}: {spec.description}")
    if ws.documents_path:
        lines.append(
            f"- documents: {ws.documents_options.get('description', ws.documents_path.name)}"
        )
    return "\n".join(lines)


def _recall(
    question: str, ctx: ToolContext, store: BaseStore | None
) -> tuple[list[str], list[TraceEvent]]:
    """Decisions remembered by earlier runs on this workspace that match the question."""
    if store is None:
        return [], [event("recall_skipped", "brief", reason="no store attached")]
    return recall_decisions(store, ctx, question, limit=RECALL_LIMIT)


def _recalled_block(ids: Sequence[str], ctx: ToolContext) -> str:
    """The recalled decisions as BRIEF's prompt shows them.

    Data never instructs the planner (quarantined memory): an untrusted decision's text is not
    shown, only code-written facts about it (its id, kind and that it came from a run that read
    untrusted content). A plan that names it hands it to WORK, fenced, and WORK's turn records
    it as ``influenced_by``; a plan cannot restate, in any words, text it was never shown. A
    trusted decision is shown with its origin (``decision_origin``)."""
    lines = []
    for rid in ids:
        ref = ctx.ledger.get(rid)
        if ref is None:
            continue
        if ref.is_external:
            kind = str(ref.payload.get("kind") or "decision")
            lines.append(
                f"- [{rid}] a {kind} decision remembered in a run that read untrusted content; "
                "its text is not shown to planning. Write its id in your plan only if the "
                "answer must rely on it: WORK then sees it, fenced, and what WORK computes "
                "after it is labelled as influenced by it."
            )
            continue
        why = ref.payload.get("why")
        text = str(ref.payload.get("decision", ref.title)) + (f" (why: {why})" if why else "")
        lines.append(f"- [{rid}] {text} (origin: {decision_origin(ref.payload)})")
    if not lines:
        return ""
    return (
        "\n\nDecisions remembered from earlier runs on this workspace (cite [decisionId] "
        "if the answer relies on one; ignore those that do not apply):\n" + "\n".join(lines)
    )


def _keep_recalled(
    recalled: Sequence[str], plan_text: str, ctx: ToolContext
) -> tuple[list[str], list[str], bool]:
    """Which recalled decisions go on to WORK: the trusted ones, and the untrusted ones the
    plan uses (names their id). Returns (kept, dropped, steered): an untrusted decision the
    plan uses is registered as taint and ``steered`` is True (the plan's model-written fields
    are then untrusted, and WORK's turn is influenced by it)."""
    prov = provenance_of(ctx)
    kept: list[str] = []
    dropped: list[str] = []
    steered = False
    for rid in recalled:
        ref = ctx.ledger.get(rid)
        if ref is None:
            continue
        if not ref.is_external:
            kept.append(rid)
            continue
        if rid in plan_text:
            kept.append(rid)
            prov.register_text(
                str(ref.payload.get("decision", ref.title)), source=f"recalled decision {rid}"
            )
            steered = True
            continue
        dropped.append(rid)
    return kept, dropped, steered


def plan_influence(
    prompt: str, out: PassOutcome, kept: Sequence[str], ctx: ToolContext
) -> list[str]:
    """What BRIEF's plan may follow: the untrusted decisions it uses, the external refs its
    tool rounds returned, and fenced text in its prompt (a conversation's earlier output).
    Information flow, not string matching: the plan is influenced whatever words it uses."""
    found = [rid for rid in kept if (ref := ctx.ledger.get(rid)) is not None and ref.is_external]
    for outcome in out.outcomes:
        if outcome.untrusted or outcome.withheld:
            refs = outcome.result.refs if outcome.result else []
            found.extend(r.id for r in refs if r.is_external)
            if not any(r.is_external for r in refs):
                found.append(f"{outcome.event.get('tool')} result")
    if holds_fence(prompt):
        found.append("fenced text in BRIEF's prompt")
    return list(dict.fromkeys(found))


def _merge(skill_refs: Sequence[Ref], key: str) -> list[str]:
    out: list[str] = []
    for ref in skill_refs:
        for item in ref.payload.get(key) or []:
            if str(item) not in out:
                out.append(str(item))
    return out


def choose_skills(read: Sequence[Ref], calls: Sequence[Sequence[Ref]], wanted: object) -> list[Ref]:
    """The chosen skills' refs: those the model named, else the best hit of each ReadSkill call."""
    by_id: dict[str, Ref] = {}
    for ref in read:
        by_id.setdefault(str(ref.payload.get("id")), ref)
    if isinstance(wanted, str):
        wanted = [wanted]
    if isinstance(wanted, list) and wanted:
        chosen = [by_id[str(w)] for w in wanted if str(w) in by_id]
        if chosen:
            return list(dict.fromkeys(chosen))
    firsts = [refs[0] for refs in calls if refs]
    return list(dict.fromkeys(firsts))


def plan_from_refs(
    skill_refs: Sequence[Ref],
    final_text: str,
    *,
    calls: Sequence[Sequence[Ref]] | None = None,
) -> Plan:
    """Build the plan from the skills read (and the model's JSON reply): see the module doc."""
    parsed = parse_json_object(final_text) or {}
    calls = [list(skill_refs)[:1]] if calls is None else calls
    chosen = choose_skills(skill_refs, calls, parsed.get("skills"))
    lens = str(parsed.get("lens") or "").strip()
    if not lens and chosen:
        lens = str(chosen[0].payload.get("category") or "")
    given = parsed.get("criteria") or []
    if not isinstance(given, list):
        given = [given]
    criteria = [str(c) for c in given if str(c).strip()]
    for ref in chosen:
        for mode in ref.payload.get("failureModes") or []:
            check = f"guard against ({ref.payload.get('id')}): {mode}"
            if check not in criteria:
                criteria.append(check)
    required = _merge(chosen, "requiredEvidence")
    return {
        "skills": [str(r.payload.get("id") or r.title) for r in chosen],
        "skill_refs": [r.id for r in chosen],
        "lens": lens or "unspecified",
        "required_evidence": required,
        "require_emitted": any(k in EMITTED_KINDS for k in required),
        "forbidden": _merge(chosen, "forbidden"),
        "tools": _merge(chosen, "toolRefs"),
        "capabilities": _merge(chosen, "capabilityRefs"),
        "knowledge": _merge(chosen, "knowledgeRefs"),
        "criteria": criteria,
        "notes": str(parsed.get("notes") or ""),
    }


def unsupplied_evidence(required: Sequence[str], ctx: ToolContext) -> list[str]:
    """The kinds of ``required`` evidence this workspace cannot supply: a webRef needs a web
    snapshot or a live search backend, a docRef a documents folder, a dataset value or table
    a dataset or documents. (skillRef, apiRef and the authority markers are always met.)"""
    ws = ctx.workspace
    has_docs = ws is not None and ws.documents_path is not None
    has_data = ws is not None and bool(ws.datasets)
    web = (ws is not None and ws.web_snapshot_path is not None) or (
        ctx.settings.web_search not in (None, "", "snapshot")
    )
    supplied = {
        "webRef": web,
        "docRef": has_docs,
        "valueRef": has_data or has_docs,
        "tableRef": has_data or has_docs,
        "dateRef": has_data or has_docs,
    }
    return [k for k in required if not supplied.get(k, True)]


def _direct_lookup(question: str, ctx: ToolContext) -> tuple[list[Ref], str]:
    """The best skill for the question text whose required evidence the workspace can supply
    (a skill it cannot satisfy would make the GATE block a right answer), read by ReadSkill."""
    try:
        hits = skillbook_for(ctx.workspace).search(question, limit=10)
    except Exception as exc:  # the fallback must never end the run
        return [], f"the direct skill lookup failed: {type(exc).__name__}: {exc}"
    skipped: list[str] = []
    chosen = None
    for hit in hits:
        missing = unsupplied_evidence(hit.skill.required_evidence, ctx)
        if not missing:
            chosen = hit.skill
            break
        skipped.append(f"{hit.skill.id} (needs {', '.join(missing)})")
    note = f"; skipped {', '.join(skipped)}: this workspace cannot supply it" if skipped else ""
    if chosen is None:
        return [], "the direct skill lookup found no skill matching the question text" + note
    spec = get_spec("ReadSkill")
    before = len(ctx.ledger.issued)
    try:
        result = spec.func(spec.args_schema.model_validate({"id": chosen.id}), ctx)
    except Exception as exc:  # the fallback must never end the run
        return [], f"the direct skill lookup failed: {type(exc).__name__}: {exc}"
    refs = [r for r in ctx.ledger.issued[before:] if r.kind == "skillRef"]
    if not result.ok:
        return refs, f"the direct skill lookup failed: {result.error}"
    return refs, (
        "skills were looked up directly with the question text: "
        + ", ".join(str(r.payload.get("id")) for r in refs)
        + note
    )


#: BRIEF's frame: its tools recall from the store; it starts the run's provenance and budget.
BRIEF_FRAME = PassFrame(BRIEF, uses_store=True, writes_provenance=True)


def make_brief(deps: Deps) -> PassNode:
    def brief(state: WorkbenchState, runtime: Runtime[RunContext]) -> WorkbenchState:
        """BRIEF pass: plan, chosen skills, required evidence, recalled decisions."""
        # BRIEF starts a run: a fresh run id, even on a thread that answered before.
        run_id = uuid.uuid4().hex[:12]
        fresh: WorkbenchState = {**state, "run_id": run_id, "budget": None}
        # a thread of another workspace is refused before anything of it is read (thread owner)
        check_thread_owner(thread_id_of(get_config()), state, resolve_workspace(fresh, deps))
        return run_pass(
            BRIEF_FRAME,
            deps,
            fresh,
            runtime,
            lambda run: _plan_run(run, state),
            start={"run_id": run_id},
        )

    return brief


def _plan_run(run: PassRun, state: WorkbenchState) -> PassOutput:
    """BRIEF's own logic: recall, the planning tool rounds, the plan and what it may follow."""
    ctx = run.ctx
    _prewarm_sandbox(ctx)
    question = _checked_question(state, ctx)
    recalled = _recalled_decisions(question, ctx, run)
    prompt = (
        f"Question: {question}{conversation_block(state, ctx.settings.history_turns)}\n\n"
        f"{_workspace_summary(ctx)}{_recalled_block(recalled, ctx)}"
    )
    out = run.tool_rounds(prompt)
    plan, fallback = _plan_of(out, question, ctx, run.events)
    dropped = _attach_recalled(plan, recalled, prompt, out, ctx, run.events)
    if fallback:
        plan["fallback"] = fallback
    issued = {r.id: r for r in ctx.ledger.issued if r.kind != "decisionRef" or r.id not in dropped}
    update: WorkbenchState = {
        "run_id": ctx.run_id,
        "owner": workspace_identity(ctx.workspace),
        "plan": plan,
        "refs": ref_data(issued),
        # a follow-up on a thread starts its own turn: nothing of the last one carries over
        # but the ledger, the trace, the taint registry and the finished turns
        **TURN_RESET,
    }
    return PassOutput(update, end={"refs": list(issued), "plan": json.loads(json.dumps(plan))})


def _prewarm_sandbox(ctx: ToolContext) -> None:
    """Warm the sandbox while BRIEF thinks, so WORK's first RunPython is fast."""
    if ctx.workspace is not None and ctx.workspace.datasets:
        # deferred: compiling the graph imports no tool module (the registry loads them lazily)
        from refgate.tools.run_python import prewarm

        prewarm(ctx.workspace, ctx.settings)


def _checked_question(state: WorkbenchState, ctx: ToolContext) -> str:
    """The question, refused when empty or past the run budget's length."""
    question = (state.get("question") or "").strip()
    if not question:
        raise ValueError("the question is empty: ask something about the workspace")
    check_question(question, ctx.settings)
    return question


def _recalled_decisions(question: str, ctx: ToolContext, run: PassRun) -> list[str]:
    """The remembered decisions that match the question and still fit the workspace's data."""
    recalled, recall_events = _recall(question, ctx, run.store)
    run.events.extend(recall_events)
    recalled, stale = recheck_recalled(recalled, ctx)
    if stale:
        run.events.append(
            event(
                "recall_stale",
                BRIEF,
                decisions=[rid for rid, _ in stale],
                reason="; ".join(f"{rid}: {why}" for rid, why in stale),
            )
        )
    return recalled


def _plan_of(
    out: PassOutcome, question: str, ctx: ToolContext, events: list[TraceEvent]
) -> tuple[Plan, str]:
    """The plan from the skills the model read, else from a direct lookup, and why it fell
    back to one ("" when it did not; the trace records it)."""
    calls = [
        [r for r in (o.result.refs if o.result else []) if r.kind == "skillRef"]
        for o in out.outcomes
        if o.event.get("tool") == "ReadSkill"
    ]
    skill_refs = [r for refs in calls for r in refs]
    if skill_refs:
        return plan_from_refs(skill_refs, out.final_text, calls=calls), ""
    why = "the model called no tool" if not out.called_tools else "the model read no skill"
    found, how = _direct_lookup(question, ctx)
    fallback = f"{why}; {how}"
    events.append(
        event(
            "brief_fallback",
            BRIEF,
            reason=fallback,
            skills=[str(r.payload.get("id")) for r in found],
        )
    )
    return plan_from_refs(found, out.final_text, calls=[found]), fallback


def _attach_recalled(
    plan: Plan,
    recalled: Sequence[str],
    prompt: str,
    out: PassOutcome,
    ctx: ToolContext,
    events: list[TraceEvent],
) -> list[str]:
    """Put the recalled decisions the plan keeps on it, and what it may follow; returns the
    untrusted decisions dropped (they do not reach WORK)."""
    kept, dropped, steered = _keep_recalled(recalled, out.final_text, ctx)
    plan["recalled"] = kept
    if dropped:
        events.append(
            event(
                "recall_not_used",
                BRIEF,
                decisions=dropped,
                reason="untrusted decisions the plan does not use do not reach WORK",
            )
        )
    influence = plan_influence(prompt, out, kept, ctx)
    if out.untrusted_seen or steered or influence:
        # The model wrote these fields after reading untrusted text: later passes see them
        # fenced (item 8 of the containment design), and what WORK computes from the plan
        # records what it may follow, however the plan words it (influence follows meaning).
        plan["untrusted_fields"] = list(MODEL_PLAN_FIELDS)
        plan["influenced_by"] = influence or ["BRIEF's reads"]
    return dropped

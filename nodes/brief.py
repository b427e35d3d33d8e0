"""BRIEF: read the question, choose skills and capabilities, recall decisions, write the plan.

The plan's ``required_evidence`` is merged from the chosen skills' ``requiredEvidence`` (the
GATE's checklist); nothing here branches on question phrases. If the model calls no tool, the
pass falls back to a direct skill lookup with the question text and records it.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from refgate.nodes.common import Deps, PassTimer, event, load_prompt, make_context
from refgate.nodes.loop import run_tool_pass
from refgate.nodes.parsing import parse_json_object
from refgate.tools.registry import get_spec

EMITTED_KINDS = {"valueRef", "tableRef", "dateRef"}


def _workspace_summary(ctx) -> str:
    ws = ctx.workspace
    if ws is None:
        return "No workspace: no datasets or documents are available."
    lines = [f"Workspace {ws.name!r}."]
    for name, spec in ws.datasets.items():
        lines.append(f"- dataset {name}: {spec.description}")
    if ws.documents_path:
        lines.append(f"- documents: {ws.documents_options.get('description', ws.documents_path.name)}")
    return "\n".join(lines)


def _recall(state: dict[str, Any], ctx, store: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Decisions remembered by earlier runs on this workspace that match the question."""
    if store is None:
        return [], []
    from refgate.memory import recall_decisions

    return recall_decisions(store, ctx, state["question"])


def plan_from_refs(skill_refs: list, final_text: str) -> dict[str, Any]:
    """Merge the chosen skills' requiredEvidence and read the model's lens and criteria."""
    required: list[str] = []
    skills: list[str] = []
    for ref in skill_refs:
        skills.append(str(ref.payload.get("id") or ref.title))
        for item in ref.payload.get("requiredEvidence") or []:
            if item not in required:
                required.append(str(item))
    parsed = parse_json_object(final_text) or {}
    lens = str(parsed.get("lens") or "")
    if not lens and skill_refs:
        lens = str(skill_refs[0].payload.get("lens") or skill_refs[0].payload.get("category") or "")
    criteria = parsed.get("criteria") or []
    if not isinstance(criteria, list):
        criteria = [str(criteria)]
    return {
        "skills": skills,
        "skill_refs": [r.id for r in skill_refs],
        "lens": lens or "unspecified",
        "required_evidence": required,
        "require_emitted": any(k in EMITTED_KINDS for k in required),
        "criteria": [str(c) for c in criteria],
        "notes": str(parsed.get("notes") or ""),
    }


def make_brief(deps: Deps):
    def brief(state: dict[str, Any], config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        """BRIEF pass: plan, chosen skills, required evidence, recalled decisions."""
        store = getattr(runtime, "store", None)
        ctx = make_context("brief", state, deps, config=config, store=store)
        timer = PassTimer("brief", ctx)
        events = [timer.start_event(run_id=ctx.run_id)]
        question = (state.get("question") or "").strip()
        if not question:
            raise ValueError("the question is empty: ask something about the workspace")
        recalled, recall_events = _recall(state, ctx, store)
        events.extend(recall_events)
        recalled_ids = [r for r in recalled]
        recalled_text = ""
        if recalled:
            lines = []
            for rid in recalled_ids:
                ref = ctx.ledger.get(rid)
                if ref is not None:
                    lines.append(f"- [{rid}] {ref.payload.get('decision', ref.title)}")
            recalled_text = "\n\nDecisions remembered from earlier runs:\n" + "\n".join(lines)
        settings = ctx.settings
        model = deps.model("brief", settings)
        messages = [
            SystemMessage(load_prompt("brief")),
            HumanMessage(f"Question: {question}\n\n{_workspace_summary(ctx)}{recalled_text}"),
        ]
        out = run_tool_pass(pass_name="brief", model=model, messages=messages, ctx=ctx,
                            max_rounds=settings.rounds_for("brief"))
        events.extend(out.events)
        fallback = ""
        skill_refs = [r for r in ctx.ledger.issued if r.kind == "skillRef"]
        if not out.called_tools:
            # The model called no tool: look the skills up directly and say so.
            spec = get_spec("ReadSkill")
            try:
                result = spec.func(spec.args_schema.model_validate({"query": question}), ctx)
                fallback = ("the model called no tool; skills were looked up directly with the "
                            f"question text ({'ok' if result.ok else result.error})")
            except Exception as exc:  # the fallback must never end the run
                fallback = f"the model called no tool; the direct skill lookup failed: {exc}"
            skill_refs = [r for r in ctx.ledger.issued if r.kind == "skillRef"]
            events.append(event("brief_fallback", "brief", reason=fallback))
        plan = plan_from_refs(skill_refs, out.final_text)
        plan["recalled"] = recalled_ids
        if fallback:
            plan["fallback"] = fallback
        issued = {r.id: r for r in ctx.ledger.issued}
        events.append(timer.end_event(refs=list(issued), plan=json.loads(json.dumps(plan))))
        return {
            "run_id": ctx.run_id,
            "plan": plan,
            "refs": issued,
            "trace": events,
            "gate_attempts": 0,
            "provenance": ctx.taint.to_state(),
        }

    return brief

"""HARVEST: read the run's trace, derive improvement candidates, remember decisions.

Candidates are derived by code (gate issues, tool errors, slow passes, retries, rounds that hit
their bound); the model decides which become decisions through RememberDecision.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from refgate.nodes.common import Deps, PassTimer, load_prompt, make_context
from refgate.nodes.loop import run_tool_pass

#: A pass slower than this (ms) is an improvement candidate.
SLOW_PASS_MS = 60_000


def summarize_trace(trace: list[dict[str, Any]], gate: dict[str, Any] | None) -> dict[str, Any]:
    """Counts and timings of a run's trace (the ``trace_summary`` output)."""
    passes = [e["pass"] for e in trace if e.get("type") == "pass_start"]
    durations: dict[str, float] = {}
    for e in trace:
        if e.get("type") == "pass_end":
            durations[e["pass"]] = round(durations.get(e["pass"], 0.0) + e.get("duration_ms", 0), 2)
    tools = Counter(e.get("tool") for e in trace if e.get("type") == "tool_call")
    statuses = Counter(e.get("status") for e in trace if e.get("type") == "tool_call")
    usage: Counter[str] = Counter()
    for e in trace:
        if e.get("type") == "model_call":
            usage.update(e.get("usage") or {})
    return {
        "passes": passes,
        "duration_ms": durations,
        "tool_calls": dict(tools),
        "tool_status": dict(statuses),
        "model_calls": sum(1 for e in trace if e.get("type") == "model_call"),
        "tokens": dict(usage),
        "gate_passed": bool((gate or {}).get("passed")),
        "gate_attempts": sum(1 for e in trace if e.get("type") == "gate_verdict"),
    }


def improvement_candidates(trace: list[dict[str, Any]], gate: dict[str, Any] | None) -> list[str]:
    """What this run suggests changing next time, derived from its trace."""
    found: list[str] = []
    for e in trace:
        kind = e.get("type")
        if kind == "gate_verdict" and not e.get("passed"):
            for issue in e.get("issues") or []:
                found.append(f"gate blocked ({issue.get('code')}): {issue.get('claim', '')[:160]}")
        elif kind == "tool_call" and e.get("status") not in ("ok", None):
            found.append(f"{e.get('tool')} {e.get('status')} in {e.get('pass')}: "
                         f"{str(e.get('error', ''))[:200]}")
        elif kind == "pass_end" and e.get("duration_ms", 0) > SLOW_PASS_MS:
            found.append(f"slow pass {e.get('pass')}: {e.get('duration_ms')} ms")
        elif kind == "round_bound_hit":
            found.append(f"{e.get('pass')} hit its bound of {e.get('rounds')} tool rounds")
        elif kind == "brief_fallback":
            found.append(f"BRIEF fell back: {e.get('reason')}")
        elif kind == "injection_withheld":
            found.append(f"injection signal withheld a {e.get('tool')} result")
    if sum(1 for e in trace if e.get("type") == "gate_verdict") > 1:
        found.append("the run needed a GATE retry")
    return found


def make_harvest(deps: Deps):
    def harvest(state: dict[str, Any], config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        """HARVEST pass: trace summary, improvement candidates, remembered decisions."""
        store = getattr(runtime, "store", None)
        ctx = make_context("harvest", state, deps, config=config, store=store)
        timer = PassTimer("harvest", ctx)
        events = [timer.start_event()]
        trace = list(state.get("trace") or [])
        gate = state.get("gate") or {}
        candidates = improvement_candidates(trace, gate)
        decisions: list[str] = []
        if candidates and store is not None:
            human = (f"Question: {state.get('question', '')}\n\nGate verdict: "
                     f"{'passed' if gate.get('passed') else 'blocked'}\n\nImprovement candidates:\n"
                     + "\n".join(f"- {c}" for c in candidates))
            model = deps.model("harvest", ctx.settings)
            out = run_tool_pass(pass_name="harvest", model=model,
                                messages=[SystemMessage(load_prompt("harvest")), HumanMessage(human)],
                                ctx=ctx, max_rounds=ctx.settings.rounds_for("harvest"))
            events.extend(out.events)
            decisions = [r.id for r in ctx.ledger.issued if r.kind == "decisionRef"]
        issued = {r.id: r for r in ctx.ledger.issued}
        events.append(timer.end_event(candidates=len(candidates), refs=list(issued)))
        summary = summarize_trace(trace + events, gate)
        summary["improvement_candidates"] = candidates
        summary["decisions"] = decisions
        return {"refs": issued, "trace": events, "decisions": decisions,
                "trace_summary": json.loads(json.dumps(summary, default=str))}

    return harvest

"""The GATE pass (code, no LLM), a node of the workbench graph: check every claim against the refs it cites, then route.

First block -> WORK once (then COMPOSE and GATE again; CRITIQUE is not repeated). Second block ->
the answer goes out with a "not verified" section listing each unmet claim, then HARVEST.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from refgate.events import event
from refgate.gate import check_answer, unmet_section
from refgate.gate.containment import review
from refgate.nodes.common import Deps, PassTimer, make_context
from refgate.nodes.state import ConfiguredStep, WorkbenchState
from refgate.refs import ref_data

#: How many times the gate may block before the answer goes out with its unmet claims.
MAX_BLOCKS = 2


def make_gate(deps: Deps) -> ConfiguredStep[WorkbenchState, Command[Literal["work", "harvest"]]]:
    def gate(state: WorkbenchState, config: RunnableConfig) -> Command[Literal["work", "harvest"]]:
        """GATE pass: verdict, verifyRef, and the retry decision."""
        ctx = make_context("gate", state, deps, config=config)
        timer = PassTimer("gate", ctx)
        events = [timer.start_event()]
        plan = state.get("plan") or {}
        answer = state.get("answer") or ""
        report = check_answer(
            answer,
            ctx.ledger.all(),
            required_evidence=plan.get("required_evidence") or (),
            require_emitted=bool(plan.get("require_emitted")),
            names=ctx.workspace.gate_names if ctx.workspace is not None else (),
            secondary_numbers=ctx.settings.secondary_numbers,
            vocabulary=ctx.workspace.vocabulary if ctx.workspace is not None else None,
            question=str(state.get("question") or ""),
            coverage=ctx.settings.question_coverage,
        )
        # Containment: withheld refs back nothing, influenced support and steered
        # recommendations are flagged, unverified sentences are set apart as conclusions.
        report, conclusions = review(
            report,
            answer,
            ctx.ledger.all(),
            withheld=ctx.taint.withheld_refs,
            influenced_numbers=ctx.settings.influenced_numbers,
            untrusted_read=any(r.is_external for r in ctx.ledger.all().values()),
        )
        verdict = report.to_dict()
        verdict["conclusions"] = conclusions
        attempts = int(state.get("gate_attempts") or 0) + (0 if report.passed else 1)
        verdict["attempt"] = int(state.get("gate_attempts") or 0) + 1
        vref = ctx.issue(
            "verifyRef",
            verdict,
            title="gate verdict: " + ("passed" if report.passed else "blocked"),
            source="gate",
        )
        verdict["verify_ref"] = vref.id
        blocking = [i for i in verdict.get("issues", []) if i.get("severity", "block") == "block"]
        ctx.emit(
            {
                "event": "gate_verdict",
                "passed": report.passed,
                "issues": [i.get("code") for i in blocking],
                "attempt": verdict["attempt"],
            }
        )
        events.append(
            event(
                "gate_verdict",
                "gate",
                passed=report.passed,
                issues=[
                    {"code": i.get("code"), "claim": i.get("claim", "")[:200]} for i in blocking
                ],
                verify_ref=vref.id,
            )
        )
        update: dict[str, Any] = {
            "gate": verdict,
            "gate_attempts": attempts,
            "gate_history": list(state.get("gate_history") or [])
            + [{"passed": report.passed, "issues": len(blocking), "verify_ref": vref.id}],
            "refs": ref_data([vref]),
        }
        if report.passed:
            events.append(timer.end_event(status="passed"))
            update["trace"] = events
            return Command(goto="harvest", update=update)
        if attempts < MAX_BLOCKS:
            events.append(timer.end_event(status="blocked", next="work"))
            update["trace"] = events
            return Command(goto="work", update=update)
        update["answer"] = answer.rstrip() + "\n\n" + unmet_section(report)
        events.append(timer.end_event(status="blocked", next="harvest"))
        update["trace"] = events
        return Command(goto="harvest", update=update)

    return gate

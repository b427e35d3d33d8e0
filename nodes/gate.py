"""The GATE pass (code, no LLM), a node of the workbench graph: check every claim against the refs it cites, then route.

The checking is the library ``refgate.gate`` (``check_answer``, then ``containment.review``); this
node reads the state, calls it, and writes the verdict (plain data, ``refgate.verdict.Verdict``),
its verifyRef and its events. First block -> WORK once (then COMPOSE and GATE again; CRITIQUE is
not repeated). Second block -> the answer goes out with a "not verified" section listing each
unmet claim, then HARVEST.
"""

from __future__ import annotations

from typing import Literal, Protocol

from langgraph.runtime import Runtime
from langgraph.types import Command

from refgate.catalog.toolspec import ToolContext
from refgate.config import GATE, HARVEST, WORK, RunContext
from refgate.events import TraceEvent, event
from refgate.gate import GateReport, check_answer, unmet_section
from refgate.gate.containment import review
from refgate.nodes.common import Deps
from refgate.nodes.frame import PassFrame, PassOutput, PassRun, close_pass, open_pass
from refgate.nodes.state import WorkbenchState
from refgate.refs import Ref, ref_data
from refgate.verdict import GateAttempt, IssueRecord, Verdict

#: How many times the gate may block before the answer goes out with its unmet claims.
MAX_BLOCKS = 2

GateRoute = Command[Literal["work", "harvest"]]


#: GATE's frame: code, no tools; it routes itself and leaves the budget and provenance as they are.
GATE_FRAME = PassFrame(GATE, writes_budget=False)


class GateNode(Protocol):
    """The GATE as a graph node: a pass that routes itself (retry WORK, else HARVEST)."""

    def __call__(self, state: WorkbenchState, runtime: Runtime[RunContext]) -> GateRoute: ...


def make_gate(deps: Deps) -> GateNode:
    def gate(state: WorkbenchState, runtime: Runtime[RunContext]) -> GateRoute:
        """GATE pass: verdict, verifyRef, and the retry decision."""
        run = open_pass(GATE_FRAME, deps, state, runtime, {})
        out = _gate_run(run)
        goto: Literal["work", "harvest"] = "work" if out.goto == WORK else "harvest"
        return Command(goto=goto, update=close_pass(run, out))

    return gate


def _gate_run(run: PassRun) -> PassOutput:
    """The verdict on the answer, its verifyRef and events, and where the run goes next."""
    state, ctx = run.state, run.ctx
    answer = state.get("answer") or ""
    report, conclusions = _check(ctx, state, answer)
    attempt = int(state.get("gate_attempts") or 0)
    verdict, vref = _verdict(ctx, report, conclusions, attempt + 1)
    blocking = [i for i in verdict.get("issues", []) if i.get("severity", "block") == "block"]
    _emit(ctx, report.passed, blocking, verdict)
    run.events.append(_verdict_event(report.passed, blocking, vref))
    attempts = attempt + (0 if report.passed else 1)
    attempt_record: GateAttempt = {
        "passed": report.passed,
        "issues": len(blocking),
        "verify_ref": vref.id,
    }
    update: WorkbenchState = {
        "gate": verdict,
        "gate_attempts": attempts,
        "gate_history": [*(state.get("gate_history") or []), attempt_record],
        "refs": ref_data([vref]),
    }
    if report.passed:
        return PassOutput(update, end={"status": "passed"}, goto=HARVEST)
    if attempts < MAX_BLOCKS:
        return PassOutput(update, end={"status": "blocked", "next": WORK}, goto=WORK)
    update["answer"] = answer.rstrip() + "\n\n" + unmet_section(report)
    return PassOutput(update, end={"status": "blocked", "next": HARVEST}, goto=HARVEST)


def _check(ctx: ToolContext, state: WorkbenchState, answer: str) -> tuple[GateReport, list[str]]:
    """The GATE's report on the answer against the ledger, after containment: withheld refs back
    nothing, influenced support and steered recommendations are flagged, unverified sentences
    are set apart as conclusions."""
    plan = state.get("plan") or {}
    refs = ctx.ledger.all()
    workspace = ctx.workspace
    report = check_answer(
        answer,
        refs,
        required_evidence=plan.get("required_evidence") or (),
        require_emitted=bool(plan.get("require_emitted")),
        names=workspace.gate_names if workspace is not None else (),
        secondary_numbers=ctx.settings.secondary_numbers,
        vocabulary=workspace.vocabulary if workspace is not None else None,
        question=str(state.get("question") or ""),
        coverage=ctx.settings.question_coverage,
    )
    return review(
        report,
        answer,
        refs,
        withheld=ctx.provenance.withheld_refs,
        influenced_numbers=ctx.settings.influenced_numbers,
        untrusted_read=any(r.is_external for r in refs.values()),
    )


def _verdict(
    ctx: ToolContext, report: GateReport, conclusions: list[str], attempt: int
) -> tuple[Verdict, Ref]:
    """The verdict as plain data, recorded as a verifyRef whose id it carries."""
    verdict = report.to_dict()
    verdict["conclusions"] = conclusions
    verdict["attempt"] = attempt
    vref = ctx.issue(
        "verifyRef",
        verdict,
        title="gate verdict: " + ("passed" if report.passed else "blocked"),
        source="gate",
    )
    verdict["verify_ref"] = vref.id
    return verdict, vref


def _emit(ctx: ToolContext, passed: bool, blocking: list[IssueRecord], verdict: Verdict) -> None:
    """The ``gate_verdict`` stream event."""
    ctx.emit(
        {
            "event": "gate_verdict",
            "passed": passed,
            "issues": [i.get("code") for i in blocking],
            "attempt": verdict["attempt"],
        }
    )


def _verdict_event(passed: bool, blocking: list[IssueRecord], vref: Ref) -> TraceEvent:
    return event(
        "gate_verdict",
        "gate",
        passed=passed,
        issues=[{"code": i.get("code"), "claim": i.get("claim", "")[:200]} for i in blocking],
        verify_ref=vref.id,
    )

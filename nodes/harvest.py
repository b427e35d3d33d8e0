"""HARVEST: read the run's trace, derive improvement candidates, remember decisions.

- The trace is the ``trace`` state channel, cut to this run (from BRIEF's ``pass_start`` with the
  run's id, so earlier questions on the same thread are not re-harvested). When a checkpointer is
  attached, its history for the thread adds what the channel cannot hold: failed tasks
  (``__error__`` writes), interrupts, the number of super-steps and the wall time.
- Candidates are derived by code: gate issues, tool errors, slow passes, GATE retries, rounds that
  hit their bound, BRIEF fallbacks, withheld results, task errors.
- Every run's own decisions are recorded by code (``run_decisions``: the skills followed, each
  dataset and column a capability read, each RunPython formula that emitted a result) as
  decisionRefs, deduplicated against memory (``refgate.memory.decisions.remember_run_decision``); BRIEF
  recalls them for similar questions.
- With candidates and a store, the model also decides which lessons become decisions and records
  each through RememberDecision (a decisionRef in the store's workspace namespace).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from refgate.catalog.toolspec import ToolContext
from refgate.config import HARVEST, MODEL_PASSES, RunContext
from refgate.events import TraceEvent, TraceSummary, event, run_events
from refgate.memory.audit import RunRecord, append_run, build_run_record
from refgate.memory.decisions import remember_run_decision, untrusted_origins
from refgate.nodes.artifacts import save_cited_tables
from refgate.nodes.common import Deps
from refgate.nodes.conversation import turn_record
from refgate.nodes.frame import PassFrame, PassNode, PassOutput, PassRun, close_pass, open_pass
from refgate.nodes.state import Plan, WorkbenchState
from refgate.payloads import JsonValue
from refgate.provenance.boundaries import guard_external
from refgate.refs import Ref, ref_data
from refgate.usage import build_usage, from_trace
from refgate.verdict import Verdict

#: A pass slower than this (ms) is an improvement candidate.
SLOW_PASS_MS = 60_000
#: Most checkpoints read from the checkpointer's history.
HISTORY_LIMIT = 200
_CHECKPOINTER_KEY = "__pregel_checkpointer"


def summarize_trace(trace: Sequence[TraceEvent], gate: Verdict | None) -> TraceSummary:
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


def history_summary(config: RunnableConfig | None) -> dict[str, JsonValue] | None:
    """What the checkpointer's history of this thread says about the current run, or None."""
    configurable = dict((config or {}).get("configurable") or {})
    saver = configurable.get(_CHECKPOINTER_KEY)
    thread_id = configurable.get("thread_id")
    if saver is None or not thread_id or not hasattr(saver, "list"):
        return None
    # Inside a node the namespace is the task's ("harvest:<id>"); the graph's is its parent.
    task_ns = str(configurable.get("checkpoint_ns") or "")
    graph_ns = "|".join(task_ns.split("|")[:-1])
    cfg: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": graph_ns}}
    errors: list[JsonValue] = []
    interrupts = 0
    stamps: list[str] = []
    steps = 0
    # Read a bounded list (not a half-consumed generator: async savers complain).
    history: list[CheckpointTuple] = list(saver.list(cfg, limit=HISTORY_LIMIT))
    for n, tup in enumerate(history):  # newest first
        if n >= HISTORY_LIMIT:
            break
        meta = tup.metadata or {}
        stamps.append(str((tup.checkpoint or {}).get("ts") or ""))
        steps = max(steps, int(meta.get("step", 0) or 0))
        for _task, channel, value in tup.pending_writes or []:
            if channel == "__error__":
                errors.append({"step": meta.get("step"), "error": str(value)[:300]})
            elif channel == "__interrupt__":
                interrupts += 1
        if meta.get("source") == "input":  # the start of the current invocation
            break
    return {
        "checkpoints": len([s for s in stamps if s]),
        "steps": steps,
        "errors": errors,
        "interrupts": interrupts,
        "wall_ms": _wall_ms([s for s in stamps if s]),
    }


def _wall_ms(stamps: Sequence[str]) -> float | None:
    """Milliseconds from the oldest to the newest checkpoint (newest first), else None."""
    if len(stamps) < 2:
        return None
    first, last = dt.datetime.fromisoformat(stamps[-1]), dt.datetime.fromisoformat(stamps[0])
    return round((last - first).total_seconds() * 1000, 1)


def improvement_candidates(
    trace: Sequence[TraceEvent],
    gate: Verdict | None,
    history: Mapping[str, JsonValue] | None = None,
) -> list[str]:
    """What this run suggests changing next time, derived from its trace (and history)."""
    found: list[str] = []
    for e in trace:
        kind = e.get("type")
        if kind == "gate_verdict" and not e.get("passed"):
            for issue in e.get("issues") or []:
                found.append(f"gate blocked ({issue.get('code')}): {issue.get('claim', '')[:160]}")
        elif kind == "tool_call" and e.get("status") not in ("ok", None):
            found.append(
                f"{e.get('tool')} {e.get('status')} in {e.get('pass')}: "
                f"{str(e.get('error', ''))[:200]}"
            )
        elif kind == "pass_end" and (e.get("duration_ms") or 0) > SLOW_PASS_MS:
            found.append(f"slow pass {e.get('pass')}: {e.get('duration_ms')} ms")
        elif kind == "round_bound_hit":
            found.append(f"{e.get('pass')} hit its bound of {e.get('rounds')} tool rounds")
        elif kind == "brief_fallback":
            found.append(f"BRIEF fell back: {e.get('reason')}")
        elif kind == "injection_withheld":
            found.append(f"injection signal withheld a {e.get('tool')} result")
        elif kind == "recall_failed":
            found.append(f"decision recall failed: {e.get('error')}")
    if sum(1 for e in trace if e.get("type") == "gate_verdict") > 1:
        found.append("the run needed a GATE retry")
    for err in _history_errors(history):
        found.append(f"a task failed at step {err.get('step')}: {err.get('error')}")
    return list(dict.fromkeys(found))


def _history_errors(history: Mapping[str, JsonValue] | None) -> list[Mapping[str, JsonValue]]:
    """The failed tasks ``history_summary`` found."""
    errors = (history or {}).get("errors")
    if not isinstance(errors, Sequence) or isinstance(errors, str):
        return []
    return [e for e in errors if isinstance(e, Mapping)]


#: Most characters of a RunPython formula kept in a decision.
FORMULA_CHARS = 400
_RESULT_PREFIXES = ("val_", "tbl_", "dat_")


#: A decision HARVEST derived: ``(kind, decision, origins)``.
RunDecision = tuple[str, str, tuple[str, ...]]


def run_decisions(plan: Plan, trace: Sequence[TraceEvent]) -> list[RunDecision]:
    """The decisions this run made, as ``(kind, decision, origins)``: the skills it followed
    (and lens), the datasets and columns its capability calls read, and each RunPython formula
    whose call emitted a result. Derived from the plan and the trace's successful WORK calls,
    in order.

    Origin follows influence: a skill chosen by a plan written after an untrusted read
    (``plan.influenced_by``), and a dataset, column or formula chosen in a turn that held
    untrusted text (the call's ``influenced_by``), keep what they may follow as ``origins``
    (stored untrusted): a name the workspace has may still be the one an injection chose. A
    lens written after an untrusted read and keyword arguments of an influenced turn are left
    out."""
    out = _skill_decisions(plan)
    for e in trace:
        if e.get("type") != "tool_call" or e.get("pass") != "work" or e.get("status") != "ok":
            continue
        decision = _call_decision(e)
        if decision is not None:
            out.append(decision)
    return list(dict.fromkeys(out))


def _skill_decisions(plan: Plan) -> list[RunDecision]:
    """The skills the plan followed (and its lens, unless written after an untrusted read)."""
    lens = str(plan.get("lens") or "").strip()
    if "lens" in (plan.get("untrusted_fields") or []):
        lens = ""
    # What a tainted plan produced is never stored as trusted: its skill choice follows what
    # BRIEF read, however the plan words it.
    planned = tuple(str(x) for x in plan.get("influenced_by") or ())
    if not planned and plan.get("untrusted_fields"):
        planned = ("BRIEF's reads",)
    return [
        ("skill", f"follow skill {skill}" + (f" ({lens} lens)" if lens else ""), planned)
        for skill in plan.get("skills") or []
    ]


def _call_decision(e: TraceEvent) -> RunDecision | None:
    """The data decision of one successful WORK call, if it made one."""
    args = e.get("args")
    if not isinstance(args, Mapping):
        return None
    tool = e.get("tool")
    influenced = tuple(str(x) for x in e.get("influenced_by") or ())
    if tool == "EngineCall":
        return _capability_decision(args, influenced)
    if tool == "InspectDataset" and args.get("dataset"):
        return ("data", f"inspect dataset {args['dataset']}", influenced)
    code = args.get("code")
    if (
        tool == "RunPython"
        and isinstance(code, str)
        and any(str(r).startswith(_RESULT_PREFIXES) for r in e.get("refs") or [])
    ):
        code = code.strip()
        if len(code) > FORMULA_CHARS:
            code = code[: FORMULA_CHARS - 1] + "…"
        return ("formula", f"compute in RunPython: {code}", influenced)
    return None


def _capability_decision(
    args: Mapping[str, JsonValue], influenced: tuple[str, ...]
) -> RunDecision | None:
    """What an EngineCall read: the dataset and column (with its other arguments unless the
    turn was influenced), else the capability called."""
    name = str(args.get("name") or "")
    raw_kw = args.get("arguments")
    kw: Mapping[str, JsonValue] = raw_kw if isinstance(raw_kw, Mapping) else {}
    dataset, column = kw.get("dataset"), kw.get("column")
    if name and dataset:
        target = f"dataset {dataset}" + (f", column {column}" if column else "")
        rest = {k: v for k, v in kw.items() if k not in ("dataset", "column")}
        extra = f" with {json.dumps(rest, sort_keys=True, default=str)}" if rest else ""
        if influenced:
            extra = ""  # written after an untrusted read: its arguments are left out
        # the column a turn chose after an untrusted read may be the steered one
        return ("data", f"read {target} through {name}{extra}", influenced)
    if name:
        return ("data", f"call capability {name}", ())
    return None


def _shown_candidates(candidates: Sequence[str], ctx: ToolContext) -> list[str]:
    """The candidates as HARVEST's model sees them: in a run that read untrusted content they
    may quote it (a tool error, a blocked claim), so each is fenced (or withheld)."""
    if not untrusted_origins(ctx):
        return list(candidates)
    return [guard_external(c, source_label="improvement candidate") for c in candidates]


#: HARVEST's frame: its tools remember decisions in the store; it writes no run-wide channel
#: back (the run's budget and provenance stay as WORK and the GATE left them).
HARVEST_FRAME = PassFrame(HARVEST, uses_store=True, writes_budget=False)


@dataclass
class Harvested:
    """What HARVEST found in the run before its end event: the run's own trace, the verdict,
    the checkpointer's history, tables saved by code, candidates and decisions."""

    trace: list[TraceEvent]
    gate: Verdict
    history: dict[str, JsonValue] | None
    saved: list[Ref]
    candidates: list[str]
    decisions: list[str]
    issued: dict[str, Ref]


def make_harvest(deps: Deps) -> PassNode:
    def harvest(state: WorkbenchState, runtime: Runtime[RunContext]) -> WorkbenchState:
        """HARVEST pass: trace summary, improvement candidates, remembered decisions."""
        run = open_pass(HARVEST_FRAME, deps, state, runtime, {})
        found = _harvest_run(run)
        update = close_pass(
            run,
            PassOutput(
                {"refs": ref_data(found.issued), "decisions": found.decisions},
                end={"candidates": len(found.candidates), "refs": list(found.issued)},
            ),
        )
        return _with_summary(update, run, found, deps)

    return harvest


def _harvest_run(run: PassRun) -> Harvested:
    """HARVEST's own logic: history, tables saved by code, candidates, remembered decisions."""
    ctx, state = run.ctx, run.state
    trace = run_events(list(state.get("trace") or []), state.get("run_id"))
    gate: Verdict = state.get("gate") or {}
    history = _history(run.config, run.events)
    # B1 keeps its unit, the turn: tables a document-heavy run cites are saved by code
    saved, saved_events = save_cited_tables(state, trace, ctx)
    run.events.extend(saved_events)
    candidates = improvement_candidates(trace, gate, history)
    decisions = _remember_decisions(run, run_decisions(state.get("plan") or {}, trace), gate)
    if candidates and run.store is None:
        run.events.append(
            event(
                "harvest_skipped",
                HARVEST,
                reason="no store attached: decisions cannot be remembered",
            )
        )
    elif candidates:
        _learn_lessons(run, candidates, gate)
        decisions += [
            r.id for r in ctx.ledger.issued if r.kind == "decisionRef" and r.id not in decisions
        ]
    issued = {r.id: r for r in ctx.ledger.issued}
    return Harvested(trace, gate, history, saved, candidates, decisions, issued)


def _history(config: RunnableConfig, events: list[TraceEvent]) -> dict[str, JsonValue] | None:
    """``history_summary``, or None (traced) when the saver fails: history is an aid."""
    try:
        return history_summary(config)
    except Exception as exc:  # history is an aid; a failing saver must not end the run
        events.append(event("history_failed", HARVEST, error=f"{type(exc).__name__}: {exc}"))
        return None


def _remember_decisions(run: PassRun, made: Sequence[RunDecision], gate: Verdict) -> list[str]:
    """Remember the run's own decisions in the store (deduplicated); their ids."""
    decisions: list[str] = []
    if not made or run.store is None:
        return decisions
    outcome = "passed" if gate.get("passed") else "blocked"
    question = str(run.state.get("question") or "")
    try:
        for kind, text, origins in made:
            ref = remember_run_decision(
                run.store, run.ctx, text, question, kind=kind, outcome=outcome,
                origins=list(origins),
            )  # fmt: skip
            decisions.append(ref.id)
    except Exception as exc:  # memory is an aid: a failing store must not end the run
        run.events.append(event("remember_failed", HARVEST, error=f"{type(exc).__name__}: {exc}"))
    run.events.append(event("run_decisions", HARVEST, decisions=list(decisions)))
    return decisions


def _learn_lessons(run: PassRun, candidates: Sequence[str], gate: Verdict) -> None:
    """The model's turn: which candidates become decisions (RememberDecision calls)."""
    ctx, state = run.ctx, run.state
    plan = state.get("plan") or {}
    human = (
        f"Question: {state.get('question', '')}\n\n"
        f"Plan: skills {plan.get('skills') or []}, lens {plan.get('lens', '')}, "
        f"required evidence {plan.get('required_evidence') or []}\n\n"
        f"Gate verdict: {'passed' if gate.get('passed') else 'blocked'}\n\n"
        "Improvement candidates (derived from the trace):\n"
        + "\n".join(f"- {c}" for c in _shown_candidates(candidates, ctx))
    )
    run.tool_rounds(human)


def _with_summary(
    update: WorkbenchState, run: PassRun, found: Harvested, deps: Deps
) -> WorkbenchState:
    """HARVEST's update with what needs its end event: the trace summary, the finished turn,
    the turn's usage and (a served run) the audit record's event."""
    events = update.get("trace") or []
    summary = summarize_trace(found.trace + events, found.gate)
    summary["improvement_candidates"] = found.candidates
    summary["decisions"] = found.decisions
    if found.saved:
        summary["artifacts_saved_by_code"] = [r.id for r in found.saved]
    if found.history is not None:
        summary["history"] = found.history
    summary = json.loads(json.dumps(summary, default=str))
    if deps.audit:
        events.append(
            _audit_run(run.state, run.ctx, run.config, run.store, found.trace + events,
                       found.issued, summary)
        )  # fmt: skip
    settings = run.ctx.settings
    return {
        **update,
        "trace_summary": summary,
        "turns": [turn_record(run.state)],
        # this turn's tokens per pass and cost, where Studio and SDK clients read the state
        "usage": build_usage(
            from_trace(found.trace + events),
            {p: settings.model_for(p) for p in MODEL_PASSES},
            settings.prices,
        ).to_dict(),
    }


#: The store namespace of audit records of served runs that have no workspace.
AUDIT_NAMESPACE = ("refgate", "_none", "audit")


def _audit_run(
    state: WorkbenchState,
    ctx: ToolContext,
    config: RunnableConfig | None,
    store: BaseStore | None,
    events: list[TraceEvent],
    issued: Mapping[str, Ref],
    summary: TraceSummary,
) -> TraceEvent:
    """Append the run's audit record (a served run: no CLI writes one) to the workspace's
    ``audit.jsonl``, or to the store when the run has no workspace; returns the trace event.
    Never raises: an audit that cannot be written is reported in the trace."""
    configurable = dict((config or {}).get("configurable") or {})
    thread_id = str(configurable.get("thread_id") or ctx.thread_id or f"run-{ctx.run_id}")
    ledger: dict[str, Ref] = {**ctx.ledger.all(), **dict(issued)}
    provenance = state.get("provenance")
    refs = ref_data(ledger)
    record: RunRecord = {
        "thread_id": thread_id,
        "question": str(state.get("question") or ""),
        "answer": str(state.get("answer") or ""),
        "refs": refs,
        "gate": dict(state.get("gate") or {}),
        "events": events,
        "outbound": list(provenance.get("sent") or []) if provenance else [],
        "trace_summary": dict(summary),
        "models": {p: ctx.settings.model_for(p) for p in MODEL_PASSES},
        "served": True,
    }
    try:
        if ctx.workspace is not None:
            out = append_run(ctx.workspace, record)
            return event("audit_recorded", "harvest", to="audit.jsonl", thread_id=thread_id,
                         run_id=out.get("run_id"))  # fmt: skip
        if store is not None:
            key = f"{thread_id}:{ctx.run_id}"
            store.put(AUDIT_NAMESPACE, key, build_run_record(record), index=False)
            return event("audit_recorded", "harvest", to="store", key=key, thread_id=thread_id)
        return event("audit_skipped", "harvest", reason="no workspace and no store to record in")
    except Exception as exc:  # the audit is a record of the run: it must not end the run
        return event("audit_failed", "harvest", error=f"{type(exc).__name__}: {exc}")

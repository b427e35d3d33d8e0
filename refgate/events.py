"""Trace events and progress: one event shape and one way to reach the custom stream.

``event`` builds the JSON-able trace record every pass appends to the ``trace`` channel (and
memory records for recall); ``TraceEvent`` declares its keys (each event kind sets the few it
needs); ``stream_writer`` is the running graph's custom-stream writer, or a no-op outside a graph
run, so code that reports progress never needs to know who is listening.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import NotRequired, Required

from langgraph.config import get_stream_writer

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict, Unpack

from refgate.payloads import JsonObject, JsonValue


class GateIssueBrief(TypedDict):
    """A blocking GATE issue as a ``gate_verdict`` event records it."""

    code: str | None
    claim: str


class EventFields(TypedDict, total=False):
    """The keys a trace event may carry besides its ``type``, ``pass`` and time ``t``."""

    # a pass's start and end (``nodes.common.PassTimer``)
    run_id: str | None
    attempt: int
    duration_ms: float
    status: str | None
    next: str
    refs: Sequence[str]
    rounds: int
    hit_bound: bool
    candidates: int
    critiques: int
    checklist: Mapping[str, bool]
    gaps: int
    chars: int
    plan: JsonObject
    # a model call (``nodes.loop``)
    usage: Mapping[str, int]
    tool_calls: Sequence[str]
    streamed: bool
    # a tool call (``tools.executor``): name, arguments as traced, outcome
    tool: str
    args: JsonValue
    error: str | None
    exception: str
    signals: Sequence[Mapping[str, object]]
    influenced_by: Sequence[str]
    # the GATE's verdict
    passed: bool
    issues: Sequence[GateIssueBrief]
    verify_ref: str
    # recall of remembered decisions (``refgate.memory.decisions``)
    mode: str
    namespace: str
    decisions: Sequence[str]
    scores: Sequence[float | None]
    min_score: float | None
    below_threshold: int
    expired: int
    # notices: what a pass did or skipped, and why
    reason: str | None
    tools: Sequence[str]
    skills: Sequence[str]
    ref: str
    artifacts: Sequence[str]
    to: str
    key: str
    thread_id: str | None
    what: str
    url: str | None


class PostFields(TypedDict, total=False):
    """What DELIVER says of its post, in its trace event and its progress event alike."""

    url: str | None
    status: str | None
    reason: str | None


#: ``pass`` is a Python keyword: the head of an event is declared in the functional syntax.
_EventHead = TypedDict("_EventHead", {"type": str, "pass": str, "t": NotRequired[str]})


class TraceSummary(TypedDict, total=False):
    """Counts and timings of a run's trace, as HARVEST writes them (the ``trace_summary``
    output), with what HARVEST adds: improvement candidates, decisions, artifacts saved by code,
    and what the checkpointer's history says of the run."""

    passes: list[str]
    duration_ms: dict[str, float]
    #: Calls per tool and per status (a key is None for an event without one, "null" in JSON).
    tool_calls: dict[str | None, int]
    tool_status: dict[str | None, int]
    model_calls: int
    tokens: dict[str, int]
    gate_passed: bool
    gate_attempts: int
    improvement_candidates: list[str]
    decisions: list[str]
    artifacts_saved_by_code: list[str]
    history: JsonObject


class TraceEvent(_EventHead, EventFields):
    """One trace event: its kind (``type``), the pass that wrote it, when (``t``, ISO 8601;
    tool-call events carry none) and the fields of its kind (``EventFields``)."""


#: One event of the custom stream: progress a running graph reports (``ctx.emit``, the research
#: steps' ``emit``, ``refgate.ask``'s own), what ``on_event`` handlers and the CLI receive. Its
#: kind is ``event``; the other keys are those of its kind (``pass`` is a Python keyword, hence
#: the functional form).
ProgressEvent = TypedDict(
    "ProgressEvent",
    {
        "event": Required[str],
        # a pass started or finished, a model's streamed text (nodes.common, nodes.loop)
        "pass": str,
        "duration_ms": float,
        "refs": Sequence[str],
        "status": str | None,
        "text": str,
        # a tool call, a tool's own progress (tools/)
        "tool": str | None,
        "server": str,
        "mcp_tool": str,
        "results": int,
        "url": str | None,
        "reason": str | None,
        # the GATE's verdict
        "passed": bool,
        "issues": Sequence[str],
        "attempt": int,
        # the run (refgate.api.public): start, resume, follow-up, approvals, notices
        "thread": str | None,
        "workspace": str,
        "next": Sequence[str],
        "turn": int,
        "to": str | None,
        "approved": bool,
        "message": str,
        # a research step (nodes/research: ``research_step`` events)
        "step": str,
        "question": str,
        "angles": Sequence[str],
        "angle": str,
        "picked": int,
        "novel": int,
        "fetched": bool,
        "claims": int,
        "error": str | None,
        "withheld": bool,
        "verifying": int,
        "cut": int,
        "claim": str,
        "voter": str,
        "survives": int,
        "refuted": int,
        "unverified": int,
        "confirmed": int,
        "findings": int,
    },
    total=False,
)
#: Where progress events go: an ``on_event`` handler, ``ctx.emit``, the custom stream.
ProgressSink = Callable[[ProgressEvent], None]


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def event(kind: str, pass_name: str, **fields: Unpack[EventFields]) -> TraceEvent:
    """One trace event (JSON-able)."""
    return {"type": kind, "pass": pass_name, "t": now_iso(), **fields}


def stream_writer() -> Callable[[object], None]:
    """The custom-stream writer of the running graph, or a no-op outside a stream."""
    try:
        return get_stream_writer()
    except Exception:  # not inside a runnable context (direct node calls in tests)
        return lambda _chunk: None


def run_events(trace: Sequence[TraceEvent], run_id: str | None) -> list[TraceEvent]:
    """The events of run ``run_id``: from its BRIEF ``pass_start`` on (all events if not found)."""
    start = 0
    for i in range(len(trace) - 1, -1, -1):
        e = trace[i]
        if (
            e.get("type") == "pass_start"
            and e.get("pass") == "brief"
            and (not run_id or e.get("run_id") == run_id)
        ):
            start = i
            break
    return [e.copy() for e in trace[start:]]

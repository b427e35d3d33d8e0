"""The audit record: one JSON line per ``refgate ask`` run, plus human review lines.

File: ``<workspace>/.refgate/audit.jsonl``, appended only (one ``write`` per line under an
exclusive ``flock``, so concurrent runs never interleave). Two line types:

Run record (``type: "run"``), written by ``append_run(workspace, record)``: by ``refgate ask`` /
``refgate.api.public``, and by HARVEST itself in the served graphs (``langgraph dev``, LangGraph Server,
the LangServe app; ``served: true``; a served run without a workspace keeps it in the store under
``("refgate", "_none", "audit")``). The caller passes:

| field | what |
| --- | --- |
| ``thread_id`` (required) | the run's thread |
| ``question`` | the question asked |
| ``answer`` | the raw answer text, exactly as returned (never cleaned up) |
| ``refs`` | the ref ledger: ``{id: Ref}`` or ``{id: dict}`` (stored as dicts) |
| ``gate`` | the gate report dict (``passed``, ``issues``, ``verify_ref`` ...) |
| ``events`` | the run's trace events (the ``trace`` state channel) |
| ``models`` | ``{pass: model name}`` |
| ``duration_s`` | wall time of the run (optional) |
| anything else | kept as given (``trace_summary``, ``run_id``, ``plan`` ...) |

``append_run`` adds ``type``, ``version``, ``recorded_at``, ``workspace``, ``run_id`` (from the
events when absent), ``gate_passed`` (the GATE's verdict, copied, not judged), ``timings``
(``total_s`` and per-pass ``passes_ms`` from the events) and ``usage`` (token totals and per pass,
from the ``model_call`` events) unless the caller gave them.

Review record (``type: "review"``), written by ``append_review``: ``thread_id``, ``verdict``
(``pass`` or ``fail``, a human's judgement: refgate never computes it: human verdicts), ``note``,
``reviewer``, ``recorded_at``.

Outbound record (``type: "outbound"``), written by ``append_sent`` in a served run's DELIVER
(after HARVEST wrote the run record): ``thread_id``, ``run_id``, ``sent`` (what DELIVER sent:
the webhook post, as ``RunProvenance.sent`` keeps it), ``recorded_at``; ``read_audit`` adds its
``sent`` to that run's ``outbound``.

``list_runs`` joins them: runs newest first, each with the reviews of its thread.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from typing_extensions import TypedDict

from refgate.errors import InputError
from refgate.events import TraceEvent

if TYPE_CHECKING:
    from refgate.workspace import Workspace

AUDIT_FILE = "audit.jsonl"
VERSION = 1
VERDICTS = ("pass", "fail")

#: Whose audit file: a ``Workspace`` or its folder.
AuditPlace: TypeAlias = "Workspace | str | Path"


class Timings(TypedDict, total=False):
    """A run's per-pass milliseconds (summed over retries) and its wall time."""

    passes_ms: dict[str, float]
    passes_total_ms: float
    total_s: float


class UsageTotals(TypedDict):
    """Token totals of a run's model calls, overall and per pass."""

    model_calls: int
    total: dict[str, int]
    by_pass: dict[str, dict[str, int]]


class RunRecord(TypedDict, total=False):
    """A run record (``type: "run"``): what the caller passes to ``append_run`` (the table in
    the module docstring) and what ``append_run`` adds. Read back, a line may hold other keys."""

    thread_id: str | None
    question: str
    answer: str
    refs: Mapping[str, object]
    gate: Mapping[str, object] | None
    events: Sequence[TraceEvent]
    outbound: Sequence[object]
    trace_summary: Mapping[str, object]
    models: Mapping[str, str | None]
    usage: Mapping[str, object]
    duration_s: float | None
    served: bool
    kind: str
    status: str
    run_id: str
    # added by append_run
    type: str
    version: int
    recorded_at: str
    workspace: str
    gate_passed: bool
    timings: Timings


class ReviewRecord(TypedDict):
    """A human review line (``type: "review"``)."""

    type: str
    version: int
    recorded_at: str
    thread_id: str
    verdict: str
    note: str
    reviewer: str


class OutboundRecord(TypedDict):
    """What a served run's DELIVER sent (``type: "outbound"``)."""

    type: str
    version: int
    recorded_at: str
    thread_id: str
    run_id: str
    sent: list[object]


class RunSummary(TypedDict):
    """One row of ``list_runs``: a run with the reviews of its thread."""

    thread_id: object
    run_id: object
    recorded_at: object
    question: object
    gate_passed: object
    kind: object
    status: object
    review: ReviewRecord | None
    reviews: list[ReviewRecord]
    answer_chars: int
    refs: int


class AuditError(InputError, ValueError):
    """A record cannot be written (missing thread, bad verdict)."""


def audit_path(workspace: AuditPlace) -> Path:
    """``<workspace>/.refgate/audit.jsonl`` (``workspace`` is a Workspace or a folder path)."""
    if isinstance(workspace, str | Path):
        return Path(workspace).expanduser().resolve() / ".refgate" / AUDIT_FILE
    return Path(workspace.state_dir) / AUDIT_FILE


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def _jsonable(value: object) -> object:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


@contextlib.contextmanager
def _locked_append(path: Path) -> Iterator[int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl  # deferred: POSIX only (ImportError elsewhere is handled below)

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def _append(path: Path, record: Mapping[str, object]) -> None:
    line = json.dumps(_jsonable(record), ensure_ascii=False, default=str) + "\n"
    with _locked_append(path) as fd:
        os.write(fd, line.encode("utf-8"))


def timings_from_events(events: Sequence[TraceEvent]) -> Timings:
    """Per-pass milliseconds (summed over retries) from ``pass_end`` events."""
    passes: dict[str, float] = {}
    for e in events:
        if e.get("type") == "pass_end":
            name = str(e.get("pass"))
            passes[name] = round(passes.get(name, 0.0) + float(e.get("duration_ms") or 0), 2)
    return {"passes_ms": passes, "passes_total_ms": round(sum(passes.values()), 2)}


def usage_from_events(events: Sequence[TraceEvent]) -> UsageTotals:
    """Token totals and per-pass usage from ``model_call`` events."""
    total: dict[str, int] = {}
    by_pass: dict[str, dict[str, int]] = {}
    calls = 0
    for e in events:
        if e.get("type") != "model_call":
            continue
        calls += 1
        for k, v in (e.get("usage") or {}).items():
            n = int(v or 0)
            total[k] = total.get(k, 0) + n
            slot = by_pass.setdefault(str(e.get("pass")), {})
            slot[k] = slot.get(k, 0) + n
    return {"model_calls": calls, "total": total, "by_pass": by_pass}


def _run_id(events: Sequence[Mapping[str, object]]) -> str:
    for e in reversed(events):
        if e.get("type") == "pass_start" and e.get("pass") == "brief" and e.get("run_id"):
            return str(e["run_id"])
    return ""


def append_run(workspace: AuditPlace, record: RunRecord) -> RunRecord:
    """Append one run record (see the module docstring for the fields); return what was written."""
    out = build_run_record(record, str(getattr(workspace, "root", workspace)))
    _append(audit_path(workspace), out)
    return out


def build_run_record(record: RunRecord, workspace: str = "") -> RunRecord:
    """The JSON-able run record ``append_run`` writes (a served run without a workspace keeps
    the same record in the store)."""
    if not record.get("thread_id"):
        raise AuditError("an audit run record needs a thread_id")
    events = list(record.get("events") or [])
    gate = dict(record.get("gate") or {})
    out: dict[str, object] = {
        "type": "run",
        "version": VERSION,
        "recorded_at": _now(),
        "workspace": workspace,
    }
    out.update({str(k): _jsonable(v) for k, v in record.items()})
    out["events"] = _jsonable(events)
    out.setdefault("run_id", _run_id(events))
    out["gate_passed"] = bool(gate.get("passed"))  # the GATE's verdict, copied
    if "timings" not in record:
        timings = timings_from_events(events)
        duration = record.get("duration_s")
        if duration is not None:
            timings["total_s"] = duration
        out["timings"] = timings
    if "usage" not in record:
        out["usage"] = usage_from_events(events)
    return json.loads(json.dumps(out, ensure_ascii=False, default=str))


def append_review(
    workspace: AuditPlace, thread_id: str, verdict: str, note: str = "", *, reviewer: str = ""
) -> ReviewRecord:
    """Append a human review of a thread's answer; ``verdict`` is ``pass`` or ``fail``."""
    if not thread_id:
        raise AuditError("a review needs the thread id of the run it judges")
    if verdict not in VERDICTS:
        raise AuditError(f"verdict must be 'pass' or 'fail', got {verdict!r}")
    out: ReviewRecord = {
        "type": "review",
        "version": VERSION,
        "recorded_at": _now(),
        "thread_id": thread_id,
        "verdict": verdict,
        "note": note,
        "reviewer": reviewer,
    }
    _append(audit_path(workspace), out)
    return out


def append_sent(
    workspace: AuditPlace, thread_id: str, run_id: str, sent: Sequence[Mapping[str, object]]
) -> OutboundRecord:
    """Append what a served run sent after its run record was written (DELIVER's post)."""
    if not thread_id:
        raise AuditError("an outbound record needs the thread id of its run")
    out: OutboundRecord = {
        "type": "outbound",
        "version": VERSION,
        "recorded_at": _now(),
        "thread_id": thread_id,
        "run_id": run_id,
        "sent": [_jsonable(dict(x)) for x in sent],
    }
    _append(audit_path(workspace), out)
    return out


@dataclass
class AuditLog:
    runs: list[RunRecord] = field(default_factory=list)
    reviews: list[ReviewRecord] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)  # line numbers that were not JSON records


def read_audit(workspace: AuditPlace) -> AuditLog:
    """Every record of the audit file, in file order; unreadable lines are counted, not fatal."""
    path = audit_path(workspace)
    log = AuditLog()
    if not path.is_file():
        return log
    with path.open(encoding="utf-8", errors="replace") as fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                log.unreadable.append(no)
                continue
            if not isinstance(rec, dict):
                log.unreadable.append(no)
            elif rec.get("type") == "run":
                log.runs.append(cast(RunRecord, rec))
            elif rec.get("type") == "review":
                log.reviews.append(cast(ReviewRecord, rec))
            elif rec.get("type") == "outbound":
                _join_sent(log.runs, cast(OutboundRecord, rec))
            else:
                log.unreadable.append(no)
    return log


def thread_run_facts(workspace: AuditPlace, thread: str) -> dict[str, Any]:
    """What the audit record keeps of a thread's last run and a checkpoint does not: its models,
    duration and time ({} when the thread has no run there)."""
    runs = [r for r in read_audit(workspace).runs if str(r.get("thread_id")) == thread]
    if not runs:
        return {}
    last = runs[-1]
    return {
        "models": last.get("models") or {},
        "duration_s": last.get("duration_s"),
        "created_at": last.get("recorded_at"),
    }


def _join_sent(runs: list[RunRecord], rec: OutboundRecord) -> None:
    """Add an outbound record's sends to its run's ``outbound`` (the latest run of its thread
    and run id written before it)."""
    for run in reversed(runs):
        if run.get("thread_id") == rec.get("thread_id") and (
            not rec.get("run_id") or run.get("run_id") == rec.get("run_id")
        ):
            outbound = run.get("outbound")
            sent = outbound if isinstance(outbound, list) else []
            run["outbound"] = [*sent, *(rec.get("sent") or [])]
            return


def thread_ids(workspace: AuditPlace) -> list[str]:
    return list(dict.fromkeys(str(r.get("thread_id") or "") for r in read_audit(workspace).runs))


def list_runs(workspace: AuditPlace, *, limit: int | None = None) -> list[RunSummary]:
    """Runs newest first: thread, time, question, the GATE's verdict, and the human reviews."""
    log = read_audit(workspace)
    reviews: dict[str, list[ReviewRecord]] = {}
    for rev in log.reviews:
        reviews.setdefault(str(rev.get("thread_id")), []).append(rev)
    rows: list[RunSummary] = []
    for rec in reversed(log.runs):
        revs = reviews.get(str(rec.get("thread_id")), [])
        rows.append(
            {
                "thread_id": rec.get("thread_id"),
                "run_id": rec.get("run_id"),
                "recorded_at": rec.get("recorded_at"),
                "question": rec.get("question"),
                "gate_passed": rec.get("gate_passed"),
                "kind": rec.get("kind") or "ask",
                "status": rec.get("status"),
                "review": revs[-1] if revs else None,
                "reviews": revs,
                "answer_chars": len(rec.get("answer") or ""),
                "refs": len(rec.get("refs") or {}),
            }
        )
    rows.sort(key=lambda r: str(r.get("recorded_at") or ""), reverse=True)
    return rows[:limit] if limit else rows

"""The record of one workbench run: the plain data every report format is made from.

``run_record`` turns a finished run's state (``Ref`` objects or dicts) into JSON-able data; it is
the ``refgate ask --json`` document and the input of the markdown and HTML renderers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any, cast

from typing_extensions import TypedDict, Unpack

from refgate.payloads import jsonable
from refgate.report.cards import as_ref_dicts
from refgate.turns import Turn
from refgate.verdict import Verdict

VERSION = 1


class UnverifiedClaim(TypedDict):
    """A claim the GATE blocked, as the answer document lists it."""

    claim: str
    code: str
    detail: str


class AnswerDocument(TypedDict, total=False):
    """The run as plain data (``run_record``), and with the verdict and usage the ``refgate ask
    --json`` document (``answer_document``): what every report format is made from."""

    type: str
    version: int
    thread_id: str
    question: str
    answer: str
    refs: dict[str, dict[str, object]]
    gate: Verdict
    critiques: list[str]
    caveats: list[str]
    outbound: object
    trace_summary: object
    turns: list[Turn]
    workspace: dict[str, str] | None
    models: dict[str, str]
    duration_s: float | None
    created_at: str
    passed: bool
    unverified: list[UnverifiedClaim]
    usage: Mapping[str, object]


class RunFacts(TypedDict, total=False):
    """Where, when and with which models a run ran (each may be unknown): the facts a run record
    takes beside the run's state (``refgate.memory.audit.thread_run_facts`` reads them back)."""

    #: The workspace (its ``name`` and ``root``), or the folder it ran in.
    workspace: object
    #: The model of each pass.
    models: Mapping[str, str] | None
    duration_s: float | None
    #: ISO time; absent, the record is stamped now.
    created_at: str | None


def _place(workspace: object) -> dict[str, str] | None:
    """A run record's ``workspace``: its name and root (None: unknown)."""
    if workspace is None:
        return None
    return {
        "name": str(getattr(workspace, "name", "")),
        "root": str(getattr(workspace, "root", workspace)),
    }


def run_record(
    result: Mapping[str, Any], *, thread_id: str, **facts: Unpack[RunFacts]
) -> AnswerDocument:
    """The run as plain data: question, answer, refs (``{id: dict}``), GATE report, critiques,
    trace summary, and where, when and with which models it ran."""
    return {
        "type": "run",
        "version": VERSION,
        "thread_id": thread_id,
        "question": result.get("question") or "",
        "answer": result.get("answer") or "",
        "refs": as_ref_dicts(result.get("refs") or {}),
        "gate": cast(Verdict, jsonable(result.get("gate") or {})),
        "critiques": [str(c) for c in result.get("critiques") or []],
        "caveats": [str(c) for c in result.get("caveats") or []],
        # every query and URL sent off the machine (refgate.tools.outbound)
        "outbound": jsonable(list((result.get("provenance") or {}).get("sent") or [])),
        "trace_summary": jsonable(result.get("trace_summary") or {}),
        # the conversation: every finished turn of the thread (the last one is this run's)
        "turns": cast("list[Turn]", jsonable(list(result.get("turns") or []))),
        "workspace": _place(facts.get("workspace")),
        "models": dict(facts.get("models") or {}),
        "duration_s": facts.get("duration_s"),
        "created_at": facts.get("created_at")
        or dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def unverified_claims(gate: Mapping[str, object]) -> list[UnverifiedClaim]:
    """The claims the GATE blocked, once each: ``[{claim, code, detail}]``."""
    out: list[UnverifiedClaim] = []
    seen: set[tuple[str, str, str]] = set()
    for issue in cast(Iterable[object], gate.get("issues") or []):
        if not isinstance(issue, Mapping) or issue.get("severity", "block") != "block":
            continue
        key = (str(issue.get("code")), str(issue.get("claim")), str(issue.get("detail")))
        if key not in seen:
            seen.add(key)
            out.append({"claim": key[1], "code": key[0], "detail": key[2]})
    return out


def answer_document(
    result: Mapping[str, object],
    *,
    thread_id: str,
    usage: Mapping[str, object] | None = None,
    **facts: Unpack[RunFacts],
) -> AnswerDocument:
    """The ``refgate ask --json`` document (also ``refgate report --output x.json``): the run
    record with the GATE's ``passed``, the ``unverified`` claims and the turn's ``usage``
    (``refgate.usage.turn_usage``)."""
    record = run_record(result, thread_id=thread_id, **facts)
    gate = raw if isinstance(raw := record["gate"], Mapping) else {}
    record["passed"] = gate.get("passed") is True
    record["unverified"] = unverified_claims(gate)
    record["usage"] = dict(usage) if usage is not None else {}
    return record


class HeaderFacts(TypedDict):
    """Tokens, cost, time and models of a run, as a report's header shows them."""

    tokens: int | float | None
    cost_usd: int | float | None
    seconds: float | None
    models: list[str]
    model_calls: object


def header_facts(record: Mapping[str, Any]) -> HeaderFacts:
    """Tokens, time and model names of a run, for a report's header."""
    summary = record.get("trace_summary") or {}
    tokens = summary.get("tokens") or {}
    total = tokens.get("total_tokens")
    if total is None and tokens:
        total = (tokens.get("input_tokens") or 0) + (tokens.get("output_tokens") or 0)
    seconds = record.get("duration_s")
    if seconds is None and summary.get("duration_ms"):
        seconds = sum(v for v in summary["duration_ms"].values() if isinstance(v, int | float))
        seconds = seconds / 1000
    raw_usage = record.get("usage")
    usage: Mapping[str, object] = raw_usage if isinstance(raw_usage, Mapping) else {}
    raw_usage_total = usage.get("total")
    usage_total: Mapping[str, object] = (
        raw_usage_total if isinstance(raw_usage_total, Mapping) else {}
    )
    if total is None:
        total = usage_total.get("total_tokens")
    cost = usage.get("cost_usd")
    models = record.get("models") or {}
    names = list(dict.fromkeys(str(m) for m in models.values() if m))
    return {
        "tokens": total if isinstance(total, int | float) and not isinstance(total, bool) else None,
        "cost_usd": cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        "seconds": round(seconds, 1) if isinstance(seconds, int | float) else None,
        "models": names,
        "model_calls": summary.get("model_calls"),
    }

"""Input as the renderers expect it: every field of a run record or research report coerced to its
type (text, list, mapping), so a stored run, a hand-edited JSON file or a model's odd output gives
a report with blanks, never a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_map(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def as_text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def maps(value: object) -> list[dict[str, object]]:
    return [as_map(v) for v in as_list(value) if isinstance(v, Mapping)]


def texts(value: object) -> list[str]:
    return [as_text(v) for v in as_list(value) if v is not None]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value == value else None


def _ref(value: object) -> dict[str, object] | None:
    if not isinstance(value, Mapping) or value.get("id") in (None, ""):
        return None
    ref = as_map(value)
    ref["id"] = as_text(ref["id"])
    ref["payload"] = as_map(ref.get("payload"))
    for key in ("kind", "title", "source", "source_type", "created_by"):
        ref[key] = as_text(ref.get(key))
    ref["influenced_by"] = texts(ref.get("influenced_by"))
    return ref


def _gate(value: object) -> dict[str, object]:
    gate = as_map(value)
    claims = []
    for claim in maps(gate.get("claims")):
        mentions = []
        for m in maps(claim.get("mentions")):
            m["matches"] = maps(m.get("matches"))
            mentions.append(m)
        claim["mentions"] = mentions
        claims.append(claim)
    gate["claims"] = claims
    gate["issues"] = maps(gate.get("issues"))
    gate["counts"] = as_map(gate.get("counts"))
    gate["conclusions"] = texts(gate.get("conclusions"))
    return gate


def clean_run(record: object) -> dict[str, Any]:
    """A run record (``run_record``'s shape) with every field of the right type."""
    r = as_map(record)
    refs: dict[str, dict[str, object]] = {}
    raw = r.get("refs")
    for item in raw.values() if isinstance(raw, Mapping) else as_list(raw):
        ref = _ref(item)
        if ref is not None:
            refs[str(ref["id"])] = ref
    summary = as_map(r.get("trace_summary"))
    summary["tokens"] = as_map(summary.get("tokens"))
    summary["duration_ms"] = as_map(summary.get("duration_ms"))
    summary["tool_calls"] = as_map(summary.get("tool_calls"))
    summary["tool_status"] = as_map(summary.get("tool_status"))
    ws = r.get("workspace")
    return {
        **r,
        "thread_id": as_text(r.get("thread_id")),
        "question": as_text(r.get("question")),
        "answer": as_text(r.get("answer")),
        "refs": refs,
        "gate": _gate(r.get("gate")),
        "critiques": texts(r.get("critiques")),
        "caveats": texts(r.get("caveats")),
        "outbound": [
            {k: as_text(o.get(k)) for k in ("tool", "to", "slot", "text")}
            for o in maps(r.get("outbound"))
        ],
        "trace_summary": summary,
        "workspace": {"name": as_text(as_map(ws).get("name"))} if isinstance(ws, Mapping) else None,
        "models": {k: as_text(v) for k, v in as_map(r.get("models")).items()},
        "duration_s": _number(r.get("duration_s")),
        "created_at": as_text(r.get("created_at")),
        "earlier_turns": _earlier_turns(r),
    }


def _earlier_turns(r: Mapping[str, object]) -> list[dict[str, object]]:
    """The conversation before this run's question: every finished turn but the run's own
    (the last one, when it holds this run's answer)."""
    turns = [
        {
            "question": as_text(t.get("question")),
            "answer": as_text(t.get("answer")),
            "passed": t.get("passed") is True,
        }
        for t in maps(r.get("turns"))
    ]
    if turns and turns[-1]["answer"] == as_text(r.get("answer")):
        turns = turns[:-1]
    return turns


def _claim(value: Mapping[str, object]) -> dict[str, object]:
    c: dict[str, object] = {
        k: as_text(value.get(k))
        for k in ("claim", "quote", "source", "sourceTitle", "sourceQuality", "publishDate", "vote")
    }
    votes = as_map(value.get("votes"))
    c["votes"] = {
        k: as_text(votes.get(k, 0)) for k in ("support", "refute", "uncertain", "abstain")
    }
    c["ballots"] = [
        {
            "voter": as_text(b.get("voter")),
            "status": as_text(b.get("status")),
            "why": as_text(b.get("why")),
            "source": as_text(b.get("source")),
            "quote": as_text(b.get("quote")),
            "rejected": as_text(as_map(b.get("rejected")).get("why")),
            "rejectedSource": as_text(as_map(b.get("rejected")).get("source")),
            "overruled": as_text(b.get("overruled")),
        }
        for b in maps(value.get("ballots"))
    ]
    c["supportSites"] = texts(value.get("supportSites"))
    c["singleSite"] = bool(value.get("singleSite"))
    c["fateRestsOn"] = as_text(value.get("fateRestsOn"))
    c["verdicts"] = [
        {
            "refuted": bool(v.get("refuted")),
            "confidence": as_text(v.get("confidence")),
            "evidence": as_text(v.get("evidence")),
            "counterSource": as_text(v.get("counterSource")),
        }
        for v in maps(value.get("verdicts"))
    ]
    return c


def clean_research(report: object) -> dict[str, Any]:
    """A research report (``build_report``'s shape) with every field of the right type."""
    r = as_map(report)
    return {
        "question": as_text(r.get("question")),
        "status": as_text(r.get("status")) or "unknown",
        "summary": as_text(r.get("summary")),
        "summaryUnquotedNumbers": texts(r.get("summaryUnquotedNumbers")),
        "caveats": as_text(r.get("caveats")),
        "findings": [
            {
                "claim": as_text(f.get("claim")),
                "confidence": as_text(f.get("confidence")),
                "evidence": as_text(f.get("evidence")),
                "sources": texts(f.get("sources")),
                "unquotedNumbers": texts(f.get("unquotedNumbers")),
            }
            for f in maps(r.get("findings"))
        ],
        "confirmed": [_claim(c) for c in maps(r.get("confirmed"))],
        "refuted": [_claim(c) for c in maps(r.get("refuted"))],
        "unverified": [_claim(c) for c in maps(r.get("unverified"))],
        "sources": [
            {
                "url": as_text(s.get("url")),
                "title": as_text(s.get("title")),
                "fetched": bool(s.get("fetched")),
                "claimCount": as_text(s.get("claimCount", 0)),
                "error": as_text(s.get("error")),
            }
            for s in maps(r.get("sources"))
        ],
        "openQuestions": texts(r.get("openQuestions")),
        "cut": {
            "bySource": [
                {"source": as_text(x.get("source")), "count": as_text(x.get("count"))}
                for x in maps(as_map(r.get("cut")).get("bySource"))
            ],
            "claims": [
                {k: as_text(x.get(k)) for k in ("claim", "source", "reason")}
                for x in maps(as_map(r.get("cut")).get("claims"))
            ],
        },
        "notes": texts(r.get("notes")),
        "sent": [
            {k: as_text(o.get(k)) for k in ("tool", "to", "slot", "text")}
            for o in maps(r.get("sent"))
        ],
        "refusedQueries": [
            {k: as_text(o.get(k)) for k in ("query", "reason")}
            for o in maps(r.get("refusedQueries"))
        ],
        "stats": {
            k: as_text(v)
            for k, v in as_map(r.get("stats")).items()
            if isinstance(v, str | int | float) and not isinstance(v, bool)
        },
    }

"""Trace events and progress: one event shape and one way to reach the custom stream.

``event`` builds the JSON-able trace record every pass appends to the ``trace`` channel (and
memory records for recall); ``stream_writer`` is the running graph's custom-stream writer, or a
no-op outside a graph run, so code that reports progress never needs to know who is listening.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.config import get_stream_writer


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def event(kind: str, pass_name: str, **fields: Any) -> dict[str, Any]:
    """One trace event (JSON-able)."""
    return {"type": kind, "pass": pass_name, "t": now_iso(), **fields}


def stream_writer() -> Callable[[Any], None]:
    """The custom-stream writer of the running graph, or a no-op outside a stream."""
    try:
        return get_stream_writer()
    except Exception:  # not inside a runnable context (direct node calls in tests)
        return lambda _chunk: None


def run_events(trace: Sequence[Mapping[str, object]], run_id: str | None) -> list[dict[str, Any]]:
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
    return [dict(e) for e in trace[start:]]

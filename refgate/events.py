"""Trace events and progress: one event shape and one way to reach the custom stream.

``event`` builds the JSON-able trace record every pass appends to the ``trace`` channel (and
memory records for recall); ``stream_writer`` is the running graph's custom-stream writer, or a
no-op outside a graph run, so code that reports progress never needs to know who is listening.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
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

"""Helpers shared by the research steps: armor for web text (``refgate.provenance.armor``),
progress events, run-scoped state."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from refgate.events import stream_writer
from refgate.nodes.research.core import Deduper


def emit(step: str, **fields: Any) -> None:
    """Send ``{"event": "research_step", "step": step, ...}`` to the custom stream; a no-op
    outside a graph run or when nobody streams."""
    writer = stream_writer()
    try:
        writer({"event": "research_step", "step": step, **fields})
    except Exception:  # progress must never break a run
        return


@dataclass
class RunShared:
    """What parallel branches of one run share in memory: the deduper and the call limiter."""

    deduper: Deduper
    limiter: threading.BoundedSemaphore
    created: dict[str, Any] = field(default_factory=dict)


_REGISTRY: dict[str, RunShared] = {}
_REGISTRY_LOCK = threading.Lock()


def shared(token: str, *, max_fetch: int, max_concurrency: int) -> RunShared:
    """The run-scoped shared state for ``token`` (created on first use, e.g. after a resume)."""
    with _REGISTRY_LOCK:
        entry = _REGISTRY.get(token)
        if entry is None:
            entry = RunShared(Deduper(max_fetch), threading.BoundedSemaphore(max_concurrency))
            _REGISTRY[token] = entry
        return entry


def release(token: str) -> None:
    with _REGISTRY_LOCK:
        _REGISTRY.pop(token, None)

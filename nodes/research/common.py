"""Helpers shared by the research nodes: their prompts (``<step>_prompt.md`` beside them),
progress events, run-scoped state."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from refgate.events import stream_writer
from refgate.nodes.research.core import Deduper, ResearchLimits

PROMPT_DIR = Path(__file__).parent


@cache
def _template(name: str) -> str:
    return (PROMPT_DIR / f"{name}_prompt.md").read_text(encoding="utf-8").removesuffix("\n")


def research_prompt(name: str, **fields: object) -> str:
    """The prompt file ``nodes/research/<name>_prompt.md`` with its ``{field}`` slots filled
    (values are inserted as they are, never re-read as a template)."""
    return _template(name).format_map({k: str(v) for k, v in fields.items()})


def emit(step: str, **fields: object) -> None:
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
    #: Sites the voters of each claim have read (claim id -> sites), so that its voters read
    #: different sites: one page steers at most one vote on a claim.
    voter_sites: dict[str, dict[str, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def claim_site(self, claim_id: str, key: str, voter: int) -> bool:
        """Reserve ``key`` for ``voter`` of ``claim_id``; False when another voter has it (the
        same voter asking again, e.g. when its vote is retried, keeps it)."""
        with self.lock:
            taken = self.voter_sites.setdefault(claim_id, {})
            return taken.setdefault(key, voter) == voter


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


def run_shared(token: str, config: RunnableConfig, limits: ResearchLimits) -> RunShared:
    """The run's shared state, its limiter sized by the run config's ``max_concurrency``."""
    cap = config.get("max_concurrency") or limits.max_concurrency
    return shared(token, max_fetch=limits.max_fetch, max_concurrency=cap)


def release(token: str) -> None:
    with _REGISTRY_LOCK:
        _REGISTRY.pop(token, None)

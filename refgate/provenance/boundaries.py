"""Boundaries between untrusted content and what the agent may do (seed 002, B1-B5).

Contract used by ``refgate.tools.executor`` (owned by the provenance module):

- ``check_call(spec, args, ctx) -> str | None``: a refusal reason for a call whose arguments
  carry document-derived text into a forbidden slot (paths, URLs, queries), else None.
- ``approve_outbound(spec, args, ctx) -> bool``: B3, a human approves any outbound send.
- ``render_result(spec, result, ctx) -> RenderedResult``: the text the model receives, with
  external fields armored; a high-confidence injection signal withholds the text (B5).

B1 (write tools removed after an untrusted read) is applied by the pass loop
(``refgate.nodes.loop``) from ``RenderedResult.untrusted``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from refgate.tools.base import ToolContext, ToolResult, ToolSpec


@dataclass
class RenderedResult:
    text: str
    untrusted: bool = False
    withheld: bool = False
    signals: list[dict[str, Any]] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)


def check_call(spec: ToolSpec, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """No taint tracking yet: every call is allowed."""
    return None


def approve_outbound(spec: ToolSpec, args: dict[str, Any], ctx: ToolContext) -> bool:
    """Ask a human through LangGraph ``interrupt``; anything but an explicit yes refuses."""
    from langgraph.types import interrupt

    answer = interrupt({"approve_outbound": spec.name, "args": args})
    return answer is True or (isinstance(answer, dict) and answer.get("approved") is True)


def render_result(spec: ToolSpec, result: ToolResult, ctx: ToolContext) -> RenderedResult:
    """Serialise the envelope; untrusted envelopes are marked (armor comes with issue 6)."""
    env = result.envelope()
    untrusted = bool(env.get("untrustedContent", True))
    return RenderedResult(json.dumps(env, ensure_ascii=False, default=str), untrusted=untrusted)

"""Decisions remembered across runs: a LangGraph Store namespaced by workspace.

HARVEST writes decisions (``remember_decision``); BRIEF recalls the ones relevant to a new
question (``recall_decisions``) by the store's semantic search when it has an embedding index,
else by its plain listing. Each remembered or recalled decision is a decisionRef.
"""

from __future__ import annotations

import uuid
from typing import Any

from refgate.refs import Ref
from refgate.tools.base import ToolContext


def namespace_for(ctx: ToolContext) -> tuple[str, ...]:
    """``("refgate", <workspace name>, "decisions")``; runs without a workspace share ``_none``."""
    name = ctx.workspace.name if ctx.workspace is not None else "_none"
    return ("refgate", name, "decisions")


def remember_decision(store: Any, ctx: ToolContext, decision: str, why: str = "") -> Ref:
    """Store one decision and issue its decisionRef."""
    key = uuid.uuid4().hex
    value = {"decision": decision, "why": why, "run_id": ctx.run_id, "thread_id": ctx.thread_id}
    store.put(namespace_for(ctx), key, value)
    return ctx.issue("decisionRef", {**value, "key": key}, title=decision[:80],
                     source=f"store:{'/'.join(namespace_for(ctx))}/{key}")


def recall_decisions(
    store: Any, ctx: ToolContext, question: str, *, limit: int = 5
) -> tuple[list[str], list[dict[str, Any]]]:
    """Issue decisionRefs for the stored decisions most relevant to ``question``."""
    from refgate.nodes.common import event

    try:
        items = store.search(namespace_for(ctx), query=question, limit=limit)
    except Exception as exc:  # memory is an aid; a broken store must not end the run
        return [], [event("recall_failed", ctx.pass_name, error=str(exc))]
    ids = []
    for item in items:
        value = dict(item.value)
        ref = ctx.issue("decisionRef", {**value, "key": item.key,
                                        "score": getattr(item, "score", None)},
                        title=str(value.get("decision", ""))[:80],
                        source=f"store:{'/'.join(item.namespace)}/{item.key}")
        ids.append(ref.id)
    return ids, [event("recall", ctx.pass_name, decisions=ids)]

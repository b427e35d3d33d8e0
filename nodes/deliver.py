"""DELIVER (code, no LLM): post the finished report to the workspace's webhook, if one is set.

Runs after HARVEST. Without ``[outbound] webhook_url`` it does nothing. With one, it calls the
PostReport tool through the executor, which asks a person first (boundary B3: a LangGraph
``interrupt`` whose payload names the tool, the URL and the report; the CLI prompts for it,
Studio shows it, and the run resumes with ``{"approved": true}`` or anything else to refuse). The
request time is HARVEST's end, read from the checkpointed trace, so re-running the node on resume
asks the same question; an approval after ``approval_timeout_s`` is refused by the tool.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from refgate.events import PostFields, TraceEvent
from refgate.memory.audit import append_sent
from refgate.nodes.common import Deps, event, make_context, thread_id_of
from refgate.nodes.state import WorkbenchState
from refgate.tools.executor import execute_tool_call
from refgate.tools.outbound import WEBHOOK

#: The tool DELIVER calls (the catalog's one outbound tool).
TOOL = "PostReport"


def _requested_at(trace: Sequence[Mapping[str, object]]) -> float:
    """HARVEST's last end time (stable across re-runs of this node), else now."""
    for e in reversed(trace):
        if e.get("type") == "pass_end" and e.get("pass") == "harvest" and e.get("t"):
            try:
                return dt.datetime.fromisoformat(str(e["t"])).timestamp()
            except ValueError:
                break
    return dt.datetime.now(dt.UTC).timestamp()


def report_of(state: WorkbenchState, thread_id: str, untrusted: bool) -> dict[str, Any]:
    """The JSON a webhook receives: the question, the answer as shipped, the GATE's verdict."""
    gate = state.get("gate") or {}
    return {
        "type": "refgate.report",
        "thread_id": thread_id,
        "run_id": state.get("run_id") or "",
        "question": str(state.get("question") or ""),
        "answer": str(state.get("answer") or ""),
        "gate_passed": bool(gate.get("passed")),
        "unverified": [
            {"code": i.get("code"), "claim": i.get("claim")}
            for i in gate.get("issues") or []
            if i.get("severity", "block") == "block"
        ],
        "read_untrusted_content": untrusted,
    }


def _audit_sent(
    ws: Any, state: WorkbenchState, config: RunnableConfig, sent: list[Mapping[str, Any]]
) -> TraceEvent:
    """Keep the post in the workspace's audit file; never raises (the trace says why not)."""
    try:
        append_sent(ws, thread_id_of(config), str(state.get("run_id") or ""), sent)
    except (OSError, ValueError) as exc:
        return event("audit_skipped", "deliver", reason=f"{type(exc).__name__}: {exc}")
    return event("audit_recorded", "deliver", to="audit.jsonl", what="outbound")


def make_deliver(deps: Deps):
    def deliver(state: WorkbenchState, config: RunnableConfig) -> WorkbenchState:
        """DELIVER pass: post the report to the configured webhook once a person approves."""
        ctx = make_context("deliver", state, deps, config=config)
        ws = ctx.workspace
        if ws is None or not ws.webhook_url:
            return {}
        trace = list(state.get("trace") or [])
        # The destination is shown to the approver (B3) but is no argument of the tool.
        ctx.extra["outbound_to"] = ws.webhook_url
        args: dict[str, Any] = {
            "report": report_of(
                state, thread_id_of(config), bool(getattr(ctx.taint, "spans", None))
            ),
            "expires_at": _requested_at(trace) + ws.approval_timeout_s,
        }
        outcome = execute_tool_call({"name": TOOL, "args": args, "id": "deliver"}, [TOOL], ctx)
        status = outcome.event.get("status")
        detail: PostFields = {"url": ws.webhook_url, "status": status}
        if status != "ok":
            try:
                detail["reason"] = json.loads(str(outcome.message.content)).get("error")
            except (TypeError, ValueError):
                detail["reason"] = str(outcome.message.content)[:300]
        posted = status == "ok"
        ctx.emit({"event": "report_posted" if posted else "report_not_posted", **detail})
        update: WorkbenchState = {
            "trace": [
                outcome.event,
                event("report_posted" if posted else "report_not_posted", "deliver", **detail),
            ]
        }
        if status in ("ok", "error"):  # the tool ran: the request went to the webhook
            what = (
                f"the report of thread {args['report']['thread_id']}: question, answer "
                f"({len(args['report']['answer'])} characters), GATE verdict"
            )
            ctx.taint.record_sent(TOOL, f"{WEBHOOK} {ws.webhook_url}", what, "report")
            update["provenance"] = ctx.taint.to_state()
            if deps.audit:  # a served run: HARVEST wrote its audit record before this post
                update["trace"].append(_audit_sent(ws, state, config, ctx.taint.sent[-1:]))
        return update

    return deliver

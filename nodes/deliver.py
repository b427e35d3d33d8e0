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

from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict

from refgate.catalog.toolspec import ToolContext
from refgate.config import DELIVER
from refgate.events import PostFields, ProgressEvent, TraceEvent, event
from refgate.memory.audit import append_sent
from refgate.nodes.common import Deps, make_context, thread_id_of
from refgate.nodes.state import ConfiguredStep, WorkbenchState
from refgate.tools.executor import CallOutcome, execute_tool_call
from refgate.tools.outbound import WEBHOOK
from refgate.workspace import Workspace

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


class WebhookReport(TypedDict):
    """The JSON a webhook receives."""

    type: str
    thread_id: str
    run_id: str
    question: str
    answer: str
    gate_passed: bool
    #: The claims the GATE blocked: their issue code and text.
    unverified: list[dict[str, str | None]]
    read_untrusted_content: bool


def report_of(state: WorkbenchState, thread_id: str, untrusted: bool) -> WebhookReport:
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
    ws: Workspace,
    state: WorkbenchState,
    config: RunnableConfig,
    sent: Sequence[Mapping[str, object]],
) -> TraceEvent:
    """Keep the post in the workspace's audit file; never raises (the trace says why not)."""
    try:
        append_sent(ws, thread_id_of(config), str(state.get("run_id") or ""), sent)
    except (OSError, ValueError) as exc:
        return event("audit_skipped", "deliver", reason=f"{type(exc).__name__}: {exc}")
    return event("audit_recorded", "deliver", to="audit.jsonl", what="outbound")


def make_deliver(deps: Deps) -> ConfiguredStep[WorkbenchState, WorkbenchState]:
    def deliver(state: WorkbenchState, config: RunnableConfig) -> WorkbenchState:
        """DELIVER pass: post the report to the configured webhook once a person approves.

        Outside the pass frame: DELIVER is code that posts once, and its trace is the post's
        tool call and outcome (no pass_start or pass_end), as a run without a webhook leaves
        no trace of it at all."""
        ctx = make_context(DELIVER, state, deps, config=config)
        ws = ctx.workspace
        if ws is None or not ws.webhook_url:
            return {}
        report = report_of(
            state, thread_id_of(config), bool(getattr(ctx.provenance, "spans", None))
        )
        outcome = _post(report, ws, list(state.get("trace") or []), ctx)
        status = outcome.event.get("status")
        detail = _post_detail(outcome, ws.webhook_url)
        posted = status == "ok"
        ctx.emit(_post_progress(posted, detail))
        update: WorkbenchState = {
            "trace": [
                outcome.event,
                event("report_posted" if posted else "report_not_posted", DELIVER, **detail),
            ]
        }
        if status in ("ok", "error"):  # the tool ran: the request went to the webhook
            what = (
                f"the report of thread {report['thread_id']}: question, answer "
                f"({len(report['answer'])} characters), GATE verdict"
            )
            ctx.provenance.record_sent(TOOL, f"{WEBHOOK} {ws.webhook_url}", what, "report")
            update["provenance"] = ctx.provenance.to_state()
            if deps.audit:  # a served run: HARVEST wrote its audit record before this post
                update["trace"].append(_audit_sent(ws, state, config, ctx.provenance.sent[-1:]))
        return update

    return deliver


def _post(
    report: WebhookReport, ws: Workspace, trace: Sequence[TraceEvent], ctx: ToolContext
) -> CallOutcome:
    """Call PostReport through the executor (which asks a person first: B3)."""
    # The destination is shown to the approver (B3) but is no argument of the tool.
    ctx.extra["outbound_to"] = ws.webhook_url
    args = {"report": report, "expires_at": _requested_at(trace) + ws.approval_timeout_s}
    return execute_tool_call({"name": TOOL, "args": args, "id": "deliver"}, [TOOL], ctx)


def _post_progress(posted: bool, detail: PostFields) -> ProgressEvent:
    """The post's progress event: posted or not, and the post's fields."""
    progress: ProgressEvent = {
        "event": "report_posted" if posted else "report_not_posted",
        "url": detail.get("url"),
        "status": detail.get("status"),
    }
    if "reason" in detail:
        progress["reason"] = detail["reason"]
    return progress


def _post_detail(outcome: CallOutcome, url: str) -> PostFields:
    """The post's trace fields: where, its status and, when it failed, why."""
    status = outcome.event.get("status")
    detail: PostFields = {"url": url, "status": status}
    if status != "ok":
        try:
            detail["reason"] = json.loads(str(outcome.message.content)).get("error")
        except (TypeError, ValueError):
            detail["reason"] = str(outcome.message.content)[:300]
    return detail

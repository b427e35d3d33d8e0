"""PostReport (outbound, boundary B3): post a finished report to the workspace's webhook.

The one tool that sends data out of the machine. It is bound to no LLM pass: the graph's DELIVER
step (``refgate.nodes.deliver``) calls it through the executor after HARVEST, and the executor asks
a person first (``boundaries.approve_outbound``, a LangGraph ``interrupt``: approved in the CLI or
in Studio). The URL is the workspace's ``[outbound] webhook_url``, read by the tool itself: no
argument names a destination, so neither a model nor a document can choose where a report goes.
An approval that arrives after ``expires_at`` (the request time plus ``[outbound]
approval_timeout_s``) is refused.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from pydantic import Field

from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec

#: Seconds the POST may take.
POST_TIMEOUT_S = 15.0


class PostReportArgs(ToolArgs):
    report: dict[str, Any] = Field(description="The finished report: question, answer, verdict.")
    expires_at: float = Field(description="Unix time after which an approval no longer counts.")


def post_report(args: PostReportArgs, ctx: ToolContext) -> ToolResult:
    configured = ctx.workspace.webhook_url if ctx.workspace is not None else None
    if not configured:
        return ToolResult.failure("no webhook is configured ([outbound] webhook_url)")
    if time.time() > args.expires_at:
        return ToolResult.failure(
            "the approval came after the request expired ([outbound] approval_timeout_s); not sent"
        )
    body = json.dumps(args.report, ensure_ascii=False, default=str).encode("utf-8")
    try:
        reply = httpx.post(
            configured,
            content=body,
            headers={"content-type": "application/json", "user-agent": "refgate"},
            timeout=POST_TIMEOUT_S,
            follow_redirects=False,
        )
    except httpx.HTTPError as exc:
        return ToolResult.failure(f"the webhook could not be reached: {type(exc).__name__}: {exc}")
    if reply.status_code >= 300:
        return ToolResult.failure(
            f"the webhook answered HTTP {reply.status_code}; the report was not accepted"
        )
    # The webhook's reply body is not kept: it is text from outside that nothing needs.
    return ToolResult(
        ok=True, data={"status": reply.status_code, "bytes": len(body)}, untrusted_content=False
    )


SPEC = ToolSpec(
    name="PostReport",
    description=(
        "Post the finished report (question, answer, gate verdict) as JSON to the workspace's "
        "configured webhook, after a person approves."
    ),
    args_schema=PostReportArgs,
    func=post_report,
    read_only=False,
    outbound=True,
)

"""McpCall (WORK): call a tool of one of the workspace's MCP servers (``[mcp.servers.NAME]``).

Read-only capabilities from outside refgate, under refgate's rules:

- **Untrusted, secondary.** Everything a server returns (output, error text, tool listings) is
  its text: declared untrusted, fenced for the model, scanned (B5), and the turn that read it
  loses its write tools (B1). A result is a docRef (``source_type="external"``,
  ``authority="secondary"``, source ``mcp:SERVER/TOOL``): evidence of what the server said,
  never primary support for a number.
- **Arguments are outbound.** The model's arguments leave refgate for the server, so the
  outbound policy (``refgate.tools.outbound``) checks them before the call, as it does
  WebSearch's query (after an untrusted read only the person's words; never workspace data
  unless ``outbound_workspace_data``), and every argument sent is recorded for the reports.
- **Write-like tools need a person.** A tool is read-only only by the server's
  ``readOnlyHint``, narrowed by the workspace's ``read_only_tools``
  (``refgate.tools.mcp_client.judge``); any other runs only after a person approves that exact
  call (B3: LangGraph ``interrupt``, the request's ``call`` digest), and never in a turn that
  read untrusted text (B1).
- **Who may start them.** A command starts only in a workspace the person trusts on this
  machine (``refgate.trust``: ``refgate trust WS``), sandboxed (``refgate.tools.sandbox.
  servers``). A served graph starts a client-named workspace's servers only under
  ``REFGATE_ALLOWED_WORKSPACES``; the server's own ``REFGATE_WORKSPACE`` is the operator's
  choice and may (``Workspace.may_start_servers``, ``nodes.common.resolve_workspace``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from pydantic import BaseModel, Field

from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.mcp_servers import McpServerSpec
from refgate.payloads import JsonDict
from refgate.provenance import boundaries
from refgate.tools import outbound
from refgate.tools.engine_call import json_safe
from refgate.tools.mcp_client import (
    McpOutput,
    McpServerError,
    McpSessions,
    McpTool,
    McpToolHeld,
    call_tool,
    list_tools,
)
from refgate.trust import untrusted_reason

NAME = "McpCall"
#: ``ToolContext.extra`` key of the pass's kept stdio sessions (``pass_sessions``).
SESSIONS = "mcp_sessions"
#: Why the loop held a write-like tool back (never shown as the server's text).
_NEEDS_APPROVAL = "write-like"
#: Where a server's own text lands in a call's result and in a tool listing, and what it is
#: (``SPEC`` declares both).
UNTRUSTED_OUTPUT = {"output": "the MCP server's output (its own text)"}
UNTRUSTED_LISTING = {
    "tools[].description": "tool descriptions written by the MCP server",
    "tools[].arguments": "argument schemas written by the MCP server",
}


class McpCallArgs(ToolArgs):
    server: str = Field(
        min_length=1,
        max_length=64,
        json_schema_extra={"slot": "tool_name"},
        description="The MCP server's name, as the workspace lists it.",
    )
    tool: str = Field(
        default="",
        max_length=128,
        json_schema_extra={"slot": "tool_name"},
        description="The tool to call; leave empty to list the server's tools (names, "
        "descriptions, arguments, read-only or not).",
    )
    arguments: dict[str, object] = Field(
        default_factory=dict,
        # each key is a slot by its name (a tool's url, path, query ...)
        json_schema_extra={"slot": "kwargs"},
        description="The tool's arguments as JSON, as its input schema names them.",
    )


def unavailable(ctx: ToolContext) -> str | None:
    """Why this run may not reach any MCP server, else None."""
    ws = ctx.workspace
    if ws is None or not ws.mcp_servers:
        return "this workspace lists no MCP servers ([mcp.servers.NAME] in refgate.toml)"
    if not ws.may_start_servers:
        return (
            "this workspace was named by a client of a served graph, and its MCP servers start "
            "only when the operator allowlists it (REFGATE_ALLOWED_WORKSPACES)"
        )
    if all(s.command for s in ws.mcp_servers.values()):
        return untrusted_reason(ws)  # only commands, and none may start
    return None


def untrusted(spec: McpServerSpec, ctx: ToolContext) -> str | None:
    """Why this command server may not start (its workspace is not trusted), else None."""
    ws = ctx.workspace
    if ws is None or not spec.command:
        return None
    return untrusted_reason(ws)


class _Where(TypedDict):
    """Where a call's server runs, logs and is kept."""

    cwd: Path
    log: Path
    sessions: McpSessions | None
    sandbox: str


@contextlib.contextmanager
def pass_sessions(ctx: ToolContext) -> Iterator[None]:
    """Keep each stdio server McpCall starts in this pass until the pass ends (a pass calling
    a server k times starts it once); stop them all when it ends, however it ends."""
    sessions = McpSessions()
    ctx.extra[SESSIONS] = sessions
    try:
        yield
    finally:
        ctx.extra.pop(SESSIONS, None)
        sessions.close()


def _listing(spec: McpServerSpec, tools: dict[str, McpTool]) -> ToolResult:
    rows = [
        {
            "name": t.name,
            "read_only": t.read_only,
            "why": t.why,
            "description": t.description[:1000],
            "arguments": json_safe(t.input_schema.get("properties") or {}),
        }
        for t in tools.values()
    ]
    return ToolResult(
        ok=True,
        data={"server": spec.name, "tools": rows},
        untrusted_fields=list(UNTRUSTED_LISTING),
    )


def _approve(spec: McpServerSpec, tool: McpTool, args: McpCallArgs, ctx: ToolContext) -> str | None:
    """A refusal for a write-like tool (B1 in an untrusted turn; B3 otherwise), else None."""
    if ctx.extra.get("untrusted_turn"):
        return (
            f"refused: {spec.name}.{tool.name} is write-like ({tool.why}) and this turn read "
            "untrusted content (boundary B1)"
        )
    approved = boundaries.approve_outbound(
        SPEC,
        args.model_dump(),
        ctx,
        reason=f"{spec.name}.{tool.name} is write-like ({tool.why}); a person approves each "
        "call (boundary B3)",
        to=spec.destination,
        bind=True,
    )
    if not approved:
        return (
            f"refused: {spec.name}.{tool.name} is write-like ({tool.why}) and a person did not "
            "approve this call within approval_timeout_s (boundary B3)"
        )
    return None


def _call(args: BaseModel, ctx: ToolContext) -> ToolResult:
    assert isinstance(args, McpCallArgs)
    why = unavailable(ctx)
    if why:
        return ToolResult.failure(why)
    ws = ctx.workspace
    assert ws is not None
    spec = ws.mcp_servers.get(args.server)
    if spec is None:
        known = ", ".join(sorted(ws.mcp_servers))
        return ToolResult.failure(
            f"no MCP server {args.server!r} in this workspace (servers: {known})"
        )
    refusal = untrusted(spec, ctx)
    if refusal:
        return ToolResult.failure(refusal)
    kept = ctx.extra.get(SESSIONS)
    where = _Where(
        cwd=ws.root,
        log=ws.state_dir / "mcp" / f"{spec.name}.log",
        sessions=kept if isinstance(kept, McpSessions) else None,
        sandbox=ctx.settings.sandbox,
    )
    sent = args.model_dump()
    approved = False

    def allow(tool: McpTool) -> str | None:
        if not (tool.read_only or approved):
            return _NEEDS_APPROVAL
        # about to send: what leaves refgate is recorded (reports, audit)
        outbound.record_sent(boundaries.provenance_of(ctx), NAME, sent)
        return None

    try:
        if not args.tool:
            return _listing(spec, list_tools(spec, **where))
        try:
            tool, out = call_tool(spec, args.tool, args.arguments, allow=allow, **where)
        except McpToolHeld as held:
            refusal = _approve(spec, held.tool, args, ctx)
            if refusal:
                return ToolResult.failure(refusal)
            approved = True
            tool, out = call_tool(spec, args.tool, args.arguments, allow=allow, **where)
    except McpServerError as exc:
        return ToolResult.failure(str(exc))
    return _result(spec, tool, out, args, ctx)


def _result(
    spec: McpServerSpec, tool: McpTool, out: McpOutput, args: McpCallArgs, ctx: ToolContext
) -> ToolResult:
    """The tool's output as untrusted data, cited by a docRef unless the tool reported an error."""
    ctx.emit({"event": "tool", "tool": NAME, "server": spec.name, "mcp_tool": tool.name})
    data: JsonDict = {
        "server": spec.name,
        "tool": tool.name,
        "read_only": tool.read_only,
        "output": out.text,
    }
    if out.cut:
        data["truncated"] = f"output cut at {spec.max_result_chars} characters"
    if out.is_error:
        return ToolResult(
            ok=False,
            error=f"the MCP tool {spec.name}.{tool.name} reported an error (its text: data.output)",
            data=data,
            untrusted_fields=list(UNTRUSTED_OUTPUT),
        )
    ref = ctx.issue(
        "docRef",
        {
            "origin": "mcp_server",
            "server": spec.name,
            "tool": tool.name,
            "arguments": json_safe(args.arguments),
            "excerpt": out.text,
            "truncated": out.cut,
        },
        title=f"MCP {spec.name}.{tool.name} result",
        source=f"mcp:{spec.name}/{tool.name}",
        source_type="external",
        authority="secondary",
    )
    data["ref"] = ref.id
    return ToolResult(ok=True, data=data, refs=[ref], untrusted_fields=list(UNTRUSTED_OUTPUT))


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Call a tool of one of the workspace's MCP servers (listed under 'MCP servers'); leave "
        "tool empty to list a server's tools. The output is the server's text: untrusted, "
        "secondary evidence (a docRef to cite, never primary support for a number). Arguments "
        "are sent to the server; write-like tools run only when a person approves the call."
    ),
    args_schema=McpCallArgs,
    func=_call,
    read_only=True,
    issues=("docRef",),
    untrusted_fields={**UNTRUSTED_OUTPUT, **UNTRUSTED_LISTING},
)

"""WORK: produce evidence with the pass's tools (RunPython, InspectDataset, EngineCall, ...).

On a GATE retry it receives the gate's issues and must produce the missing evidence.
"""

from __future__ import annotations

from refgate.catalog.toolspec import ToolContext
from refgate.config import WORK
from refgate.events import TraceEvent, event
from refgate.nodes.common import Deps, plan_block, refs_block
from refgate.nodes.conversation import conversation_block
from refgate.nodes.frame import PassFrame, PassNode, PassOutput, PassRun, attempt_start, pass_node
from refgate.nodes.state import Plan, WorkbenchState
from refgate.refs import ref_data
from refgate.tools.mcp_call import pass_sessions as mcp_pass_sessions
from refgate.tools.mcp_call import unavailable as mcp_unavailable
from refgate.tools.registry import tools_for
from refgate.trust import untrusted_reason


def _datasets_block(ctx: ToolContext) -> str:
    ws = ctx.workspace
    if ws is None or not ws.datasets:
        return "No datasets."
    return "\n".join(f"- {n}: {s.description}" for n, s in ws.datasets.items())


def _mcp_block(ctx: ToolContext) -> str:
    """The workspace's MCP servers as its refgate.toml describes them (the workspace's words,
    not the servers': a server's own descriptions come only from a McpCall listing, fenced)."""
    ws = ctx.workspace
    if ws is None or not ws.mcp_servers or not ws.may_start_servers:
        return ""
    lines = []
    blocked = untrusted_reason(ws) is not None
    for name, spec in ws.mcp_servers.items():
        if spec.command and blocked:
            continue  # not started until the person trusts the workspace
        tools = f" tools: {', '.join(spec.tools)}" if spec.tools else ""
        ro = (
            f" (read-only at most: {', '.join(spec.read_only_tools)})"
            if spec.read_only_tools
            else ""
        )
        about = f": {spec.description}" if spec.description else ""
        lines.append(f"- {name}{about}.{tools}{ro}")
    return "\n\nMCP servers (McpCall):\n" + "\n".join(lines) if lines else ""


def _gate_issues_block(state: WorkbenchState) -> str:
    gate = state.get("gate") or {}
    issues = gate.get("issues") or []
    if not issues:
        return ""
    lines = [
        f"- {i.get('code')}: {i.get('claim', '')[:200]} -- {i.get('detail', '')}"
        for i in issues
        if i.get("severity", "block") == "block"
    ]
    return (
        "\n\nThe GATE blocked the previous answer. Produce the evidence these claims lack "
        "(emit each number, date and ranking table they need), or establish that it does not "
        "exist:\n" + "\n".join(lines)
    )


def _prompt_influence(external: list[str], plan: Plan) -> list[str]:
    """What WORK's first turn may follow: the external refs its prompt shows, and what BRIEF's
    plan was influenced by (a plan that restates fenced memory in its own words still carries
    the memory's id: influence follows meaning)."""
    found = [*external, *(plan.get("influenced_by") or [])]
    if not found and plan.get("untrusted_fields"):
        found = ["BRIEF's plan"]
    return list(dict.fromkeys(str(x) for x in found))


#: WORK's frame: its tools may read the store; it writes the run's provenance and budget.
WORK_FRAME = PassFrame(WORK, uses_store=True, writes_provenance=True)


def make_work(deps: Deps) -> PassNode:
    return pass_node(WORK_FRAME, deps, _work_run, start=attempt_start)


def _work_run(run: PassRun) -> PassOutput:
    """WORK pass: run tools, issue evidence refs (the prompt, the tools it may call, the tool
    rounds, its notes)."""
    ctx, state = run.ctx, run.state
    plan = state.get("plan") or {}
    external = [r.id for r in ctx.ledger.all().values() if r.is_external]
    allowed = _allowed_tools(plan, ctx, run.events)
    with mcp_pass_sessions(ctx):
        out = run.tool_rounds(
            _work_prompt(state, ctx),
            allowed=allowed,
            # "Refs so far" shows external refs (BRIEF's reads, the first WORK's on a
            # GATE retry) to the model: B1 holds from the first round
            untrusted_prompt=bool(external) or bool(plan.get("untrusted_fields")),
            prompt_influence=_prompt_influence(external, plan),
        )
    issued = {r.id: r for r in ctx.ledger.issued}
    notes = out.final_text
    if out.hit_bound:
        notes = (notes + "\n" if notes else "") + (
            f"(WORK stopped at its bound of {ctx.settings.rounds_for(WORK)} tool rounds.)"
        )
    update: WorkbenchState = {
        "refs": ref_data(issued),
        "work_notes": notes,
        "work_notes_untrusted": out.untrusted_seen,
        "caveats": list(state.get("caveats") or []) + out.caveats,
    }
    return PassOutput(
        update, end={"refs": list(issued), "rounds": out.rounds, "hit_bound": out.hit_bound}
    )


def _work_prompt(state: WorkbenchState, ctx: ToolContext) -> str:
    """WORK's prompt: the question (and conversation), plan, datasets, MCP servers, refs so far
    and, on a GATE retry, the claims the GATE blocked."""
    return (
        f"Question: {state.get('question', '')}"
        f"{conversation_block(state, ctx.settings.history_turns)}\n\n"
        f"Plan: {plan_block(state.get('plan') or {})}\n\n"
        f"Datasets:\n{_datasets_block(ctx)}{_mcp_block(ctx)}\n\n"
        f"Refs so far:\n{refs_block(ctx.ledger.all(), pass_name=WORK)}"
        f"{_gate_issues_block(state)}"
    )


def _allowed_tools(plan: Plan, ctx: ToolContext, events: list[TraceEvent]) -> list[str]:
    """WORK's tools less those the chosen skills forbid and, when no MCP server may start
    here, McpCall (each removal traced)."""
    # A chosen skill may forbid a tool by name (e.g. no RunPython for explanations).
    forbidden = {str(f).strip() for f in plan.get("forbidden") or []}
    allowed = [t for t in tools_for(WORK) if t not in forbidden]
    if len(allowed) < len(tools_for(WORK)):
        events.append(
            event(
                "tools_forbidden_by_skill",
                WORK,
                tools=sorted(set(tools_for(WORK)) - set(allowed)),
            )
        )
    no_mcp = mcp_unavailable(ctx)
    if no_mcp:
        allowed = [t for t in allowed if t != "McpCall"]
        ws = ctx.workspace
        if ws is not None and ws.mcp_servers:
            # configured but not startable here (a served graph's client-named folder)
            events.append(event("mcp_servers_disabled", WORK, reason=no_mcp))
            ctx.emit({"event": "notice", "text": f"MCP servers not started: {no_mcp}"})
    return allowed

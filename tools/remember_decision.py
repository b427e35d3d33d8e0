"""RememberDecision (HARVEST, a write tool): store one decision for later runs; a decisionRef.

Decisions go to the run's LangGraph Store, namespaced by workspace (``refgate.memory.decisions``), and are
recalled by BRIEF in later threads by semantic search.
"""

from __future__ import annotations

from pydantic import Field

from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.memory.decisions import remember_decision as _remember


class RememberDecisionArgs(ToolArgs):
    decision: str = Field(
        min_length=3,
        max_length=600,
        description="What to do (or avoid) next time, reusable across questions.",
    )
    why: str = Field(default="", max_length=1000, description="The evidence from this run.")
    tags: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="Short labels (skill ids, dataset names, tool names).",
    )


def remember(args: RememberDecisionArgs, ctx: ToolContext) -> ToolResult:
    if ctx.store is None:
        return ToolResult.failure(
            "no store is attached to this run: decisions cannot be "
            "remembered (compile the graph with a store)"
        )
    ref = _remember(
        ctx.store,
        ctx,
        args.decision.strip(),
        args.why.strip(),
        tags=[t.strip() for t in args.tags if t.strip()],
    )
    return ToolResult(
        ok=True, data={"remembered": ref.id, "decision": args.decision.strip()}, refs=[ref]
    )


SPEC = ToolSpec(
    name="RememberDecision",
    description=(
        "Remember one decision for future questions on this workspace (what to do or avoid and "
        "why). Issues a decisionRef."
    ),
    args_schema=RememberDecisionArgs,
    func=remember,
    read_only=False,
    issues=("decisionRef",),
)

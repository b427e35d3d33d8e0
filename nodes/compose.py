"""COMPOSE: the answer, citing refs inline as [refId]; on a retry, fixes or drops blocked claims."""

from __future__ import annotations

from typing import get_args

from refgate.catalog.toolspec import ToolContext
from refgate.config import COMPOSE
from refgate.nodes.common import (
    Deps,
    fenced_model_text,
    notes_block,
    plan_block,
    refs_block,
)
from refgate.nodes.conversation import conversation_block
from refgate.nodes.frame import PassFrame, PassNode, PassOutput, PassRun, attempt_start, pass_node
from refgate.nodes.loop import stream_model
from refgate.nodes.state import WorkbenchState
from refgate.provenance.budget import check_answer_length
from refgate.refs import RefKind

#: Refs a composed answer may cite: every kind but the GATE's own verifyRefs.
CITABLE = set(get_args(RefKind)) - {"verifyRef"}


def _retry_block(state: WorkbenchState) -> str:
    gate = state.get("gate") or {}
    issues = [i for i in gate.get("issues") or [] if i.get("severity", "block") == "block"]
    if not issues:
        return ""
    lines = [
        f'- {i.get("code")}: "{i.get("claim", "")[:240]}" -- {i.get("detail", "")}' for i in issues
    ]
    return (
        "\n\nThe gate blocked the previous draft for these claims. Do not repeat them as they "
        "were: cite a ref that holds the exact value, or drop the claim.\n" + "\n".join(lines)
    )


def _critiques(critiques: list[str], ctx: ToolContext) -> list[str]:
    """CRITIQUE's points as COMPOSE sees them: fenced when the run read untrusted content
    (CRITIQUE's model wrote them with that content in its prompt)."""
    if not any(r.is_external for r in ctx.ledger.all().values()):
        return list(critiques)
    return [fenced_model_text(str(c), "critique") for c in critiques]


#: COMPOSE's frame: no tools; it writes the run budget back.
COMPOSE_FRAME = PassFrame(COMPOSE)


def make_compose(deps: Deps) -> PassNode:
    return pass_node(COMPOSE_FRAME, deps, _compose_run, start=attempt_start)


def _compose_run(run: PassRun) -> PassOutput:
    """COMPOSE pass (no tools): writes ``answer``, streamed as it is written."""
    ctx = run.ctx
    # the answer is streamed as it is written (answer_delta events; the messages stream)
    reply = stream_model(
        run.model(), run.messages(_compose_prompt(run.state, ctx)), COMPOSE, run.events, ctx.emit
    )
    answer = reply.content if isinstance(reply.content, str) else str(reply.content)
    check_answer_length(answer.strip(), ctx.settings)
    return PassOutput({"answer": answer.strip()}, end={"chars": len(answer)})


def _compose_prompt(state: WorkbenchState, ctx: ToolContext) -> str:
    """COMPOSE's prompt: question, plan, WORK's notes, citable refs, critiques, caveats and,
    on a retry, the claims the GATE blocked."""
    critiques = state.get("critiques") or []
    caveats = state.get("caveats") or []
    refs = refs_block(ctx.ledger.all(), kinds=CITABLE, pass_name=COMPOSE)
    return (
        f"Question: {state.get('question', '')}"
        f"{conversation_block(state, ctx.settings.history_turns)}\n\n"
        f"Plan: {plan_block(state.get('plan') or {})}\n\n"
        f"WORK's notes: {notes_block(state)}\n\n"
        f"Evidence refs (cite these ids):\n{refs}\n\n"
        "Critiques to address:\n"
        + ("\n".join(f"- {c}" for c in _critiques(critiques, ctx)) or "- none")
        + (
            "\n\nCaveats recorded during the run:\n" + "\n".join(f"- {c}" for c in caveats)
            if caveats
            else ""
        )
        + _retry_block(state)
    )

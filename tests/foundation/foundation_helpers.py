"""Test doubles for graph-path tests: a scripted evidence tool standing in for RunPython."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from refgate.catalog.toolspec import ToolContext, ToolResult, ToolSpec

REF_ID = re.compile(r"\b(val|tbl|dat|exe|skl|api|doc|web|art|dec)_[0-9a-f]{10}\b")


class EvidenceArgs(BaseModel):
    code: str = Field(description="code")


def evidence_spec(
    values: dict[str, float],
    *,
    units: str = "USD",
    scale: str | None = "billion",
    period: str = "2009Q3",
    name: str = "RunPython",
) -> ToolSpec:
    """A RunPython double that issues an executionRef and a valueRef holding ``values``."""
    executed: list[str] = []

    def run(args: EvidenceArgs, ctx: ToolContext) -> ToolResult:
        executed.append(args.code)
        exe = ctx.issue("executionRef", {"code": args.code, "ok": True}, title="scripted run")
        payload = {"values": dict(values), "units": {k: units for k in values}, "period": period}
        if scale:
            payload["scale"] = scale
        val = ctx.issue("valueRef", payload, title="scripted values", source="test")
        return ToolResult(ok=True, data={"emitted": [val.id]}, refs=[exe, val])

    spec = ToolSpec(
        name, "scripted evidence", EvidenceArgs, run, issues=("executionRef", "valueRef")
    )
    run.executed = executed  # type: ignore[attr-defined]
    return spec


def ids_in(text: str, prefix: str) -> list[str]:
    """Ref ids of one kind prefix that appear in a prompt text, in order of appearance."""
    return [m.group(0) for m in REF_ID.finditer(text) if m.group(1) == prefix]


def cite_first(prefix: str, template: str):
    """A scripted response: ``template`` formatted with the last ``prefix`` id in the prompt."""

    def respond(text: str) -> str:
        ids = ids_in(text, prefix)
        assert ids, f"no {prefix}_ ref in the prompt"
        return template.format(ref=ids[-1])

    return respond

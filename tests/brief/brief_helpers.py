"""Test doubles for the BRIEF/CRITIQUE/HARVEST graph tests."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from refgate.catalog.toolspec import ToolContext, ToolResult, ToolSpec

REF_ID = re.compile(r"\b(val|tbl|dat|exe|skl|api|doc|web|art|dec|vfy)_[0-9a-f]{10}\b")


class CodeArgs(BaseModel):
    code: str = Field(description="code")


def evidence_spec(*, table: bool = False) -> ToolSpec:
    """A RunPython double: a valueRef realgdp 2009Q3 = 12990.341 billion USD (or a tableRef)."""

    def run(args: CodeArgs, ctx: ToolContext) -> ToolResult:
        exe = ctx.issue("executionRef", {"code": args.code, "ok": True}, title="scripted run")
        if table:
            ref = ctx.issue(
                "tableRef",
                {
                    "columns": ["rank", "Symbol", "Market Cap"],
                    "rows": [[1, "AAPL", 809508034020]],
                    "units": {"Market Cap": "USD"},
                },
                title="ranking",
            )
        else:
            ref = ctx.issue(
                "valueRef",
                {
                    "values": {"realgdp": 12990.341},
                    "units": {"realgdp": "USD"},
                    "scale": "billion",
                    "period": "2009Q3",
                },
                title="realgdp 2009Q3",
            )
        return ToolResult(ok=True, data={"emitted": [ref.id]}, refs=[exe, ref])

    return ToolSpec(
        "RunPython",
        "scripted evidence",
        CodeArgs,
        run,
        issues=("executionRef", "valueRef", "tableRef"),
    )


def ids_in(text: str, prefix: str) -> list[str]:
    return [m.group(0) for m in REF_ID.finditer(text) if m.group(1) == prefix]


def citing(template: str, *prefixes: str):
    """A scripted reply: ``template`` formatted with the last id of each prefix in the prompt."""

    def respond(text: str) -> str:
        found = {}
        for p in prefixes:
            ids = ids_in(text, p)
            assert ids, f"no {p}_ ref in the prompt"
            found[p] = ids[-1]
        return template.format(**found)

    return respond

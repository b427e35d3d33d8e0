"""Test doubles for graph tests: a scripted evidence tool standing in for RunPython, and
scripted replies that cite the ref ids a prompt shows."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from refgate.catalog.toolspec import ToolContext, ToolResult, ToolSpec

REF_ID = re.compile(r"\b(val|tbl|dat|exe|skl|api|doc|web|art|dec|vfy)_[0-9a-f]{10}\b")
#: The realgdp 2009Q3 value of the sample's macro data (billion USD), the doubles' default.
REALGDP = {"realgdp": 12990.341}
RANKING = {
    "columns": ["rank", "Symbol", "Market Cap"],
    "rows": [[1, "AAPL", 809508034020]],
    "units": {"Market Cap": "USD"},
}


class CodeArgs(BaseModel):
    """RunPython's argument: the code to run."""

    code: str = Field(description="code")


def evidence_spec(
    values: dict[str, float] | None = None,
    *,
    table: bool = False,
    units: str = "USD",
    scale: str | None = "billion",
    period: str = "2009Q3",
    name: str = "RunPython",
    title: str = "scripted values",
) -> ToolSpec:
    """A RunPython double that issues an executionRef and a valueRef holding ``values``
    (realgdp 2009Q3 by default), or with ``table`` a ranking tableRef; ``spec.fn.executed``
    lists the code it was given."""
    values = dict(REALGDP if values is None else values)
    executed: list[str] = []

    def run(args: CodeArgs, ctx: ToolContext) -> ToolResult:
        executed.append(args.code)
        exe = ctx.issue("executionRef", {"code": args.code, "ok": True}, title="scripted run")
        if table:
            ref = ctx.issue("tableRef", dict(RANKING), title="ranking")
        else:
            payload = {"values": values, "units": {k: units for k in values}, "period": period}
            if scale:
                payload["scale"] = scale
            ref = ctx.issue("valueRef", payload, title=title, source="test")
        return ToolResult(ok=True, data={"emitted": [ref.id]}, refs=[exe, ref])

    issues = ("executionRef", "valueRef", "tableRef")
    spec = ToolSpec(name, "scripted evidence", CodeArgs, run, issues=issues)
    run.executed = executed  # type: ignore[attr-defined]
    return spec


def ids_in(text: str, prefix: str) -> list[str]:
    """Ref ids of one kind prefix that appear in a prompt text, in order of appearance."""
    return [m.group(0) for m in REF_ID.finditer(text) if m.group(1) == prefix]


def cite_first(prefix: str, template: str):
    """A scripted response: ``template`` formatted with the last ``prefix`` id in the prompt."""
    return citing(template.replace("{ref}", "{" + prefix + "}"), prefix)


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

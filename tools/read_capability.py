"""ReadCapability (BRIEF): read the engine catalog generated from the capabilities' docstrings.

Finds capabilities by exact name or by words of a query (matched against names, signatures and
docstrings) and issues one apiRef per capability returned, carrying its name, signature and
docstring: the API's single source of truth (capability docstrings). The RunPython prelude helper
``emit_result`` is listed too (kind ``prelude``), since WORK must call it to make evidence.
"""

from __future__ import annotations

import inspect
import re
from functools import cache

from pydantic import Field, model_validator

from refgate.catalog.capabilities import catalog
from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.lexical import FUNCTION_WORDS
from refgate.payloads import JsonDict
from refgate.tools.sandbox.worker.prelude import make_emit
from refgate.tools.sandbox.worker.sql import Sql

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = FUNCTION_WORDS | frozenset({"i", "me", "my", "that"})


class ReadCapabilityArgs(ToolArgs):
    name: str | None = Field(
        default=None, description="An exact capability name (e.g. 'top_n'), to read its docs."
    )
    query: str | None = Field(
        default=None,
        max_length=500,
        description="Words describing what you need (e.g. 'latest value with period', "
        "'ranking top companies', 'change between quarters'). Omit both name and query to list "
        "every capability.",
    )
    limit: int = Field(default=5, ge=1, le=20, description="Most capabilities to return (1-20).")

    @model_validator(mode="after")
    def _strip(self) -> ReadCapabilityArgs:
        if self.name is not None and not self.name.strip():
            self.name = None
        if self.query is not None and not self.query.strip():
            self.query = None
        return self


@cache
def _prelude_entries() -> tuple[dict[str, str], ...]:
    emit = make_emit(None)
    sig = f"emit_result{inspect.signature(emit)}"
    doc = inspect.getdoc(emit) or ""
    doc += (
        "\n\nAvailable only inside RunPython code, next to pd, np, datasets['<name>'] "
        "(DataFrames) and engine.<capability>(...). Reserved: never define, assign or wrap it."
    )
    sql_doc = (inspect.getdoc(Sql.__call__) or "") + (
        "\n\nOne read-only SELECT (or WITH ... SELECT); every dataset is a view of its name. "
        "Warehouse datasets (tables in a database) are reached only this way. A frame returned "
        "by sql() and passed to emit_result(table=...) records its query in the tableRef."
    )
    return (
        {"name": "emit_result", "signature": sig, "doc": doc, "kind": "prelude"},
        {
            "name": "sql",
            "signature": "sql(query: str) -> DataFrame",
            "doc": sql_doc,
            "kind": "prelude",
        },
    )


_QUOTED = re.compile(r"(:\s*|->\s*|=\s*)'([^']*)'")
_RETURNS = re.compile(r"\)\s*->\s*[^)]*$")


def clean_signature(signature: str) -> str:
    """``f(x: 'str') -> refgate.catalog.capabilities.Evidence`` -> ``f(x: str)``: what a caller needs."""
    plain = _QUOTED.sub(
        lambda m: m.group(1) + m.group(2) if m.group(1).startswith((":", "-")) else m.group(0),
        signature,
    )
    return _RETURNS.sub(")", plain)


def entries() -> list[dict[str, str]]:
    """The catalog as generated from signatures and docstrings, plus the prelude helper."""
    out = []
    for cap in catalog().values():
        entry = dict(cap.describe(), kind="capability")
        entry["signature"] = clean_signature(entry["signature"])
        out.append(entry)
    return out + [dict(e) for e in _prelude_entries()]


def _words(text: str) -> set[str]:
    words = set()
    for w in _WORD.findall(text.lower()):
        if w in _STOP:
            continue
        words.add(w)
        words.update(p for p in w.split("_") if p and p not in _STOP)
    return words


def search(query: str, items: list[dict[str, str]]) -> list[tuple[float, dict[str, str]]]:
    """Score entries against ``query`` (name hits weigh most); best first, zero scores dropped."""
    wanted = _words(query)
    if not wanted:
        return []
    scored = []
    for item in items:
        name_words = _words(item["name"])
        doc_words = _words(item["signature"] + " " + item["doc"])
        score = 5.0 * len(wanted & name_words) + 1.0 * len(wanted & doc_words)
        score += sum(
            0.5 for w in wanted if len(w) > 3 and w not in doc_words and w in item["doc"].lower()
        )
        if query.strip().lower() == item["name"].lower():
            score += 100
        if score > 0:
            scored.append((score, item))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["name"]))
    return scored


def _issued(chosen: list[dict[str, str]], ctx: ToolContext) -> ToolResult:
    """The ``chosen`` capabilities as matches, each issued an apiRef (name, signature, doc)."""
    refs = []
    matches: list[JsonDict] = []
    for item in chosen:
        ref = ctx.issue(
            "apiRef",
            {
                "name": item["name"],
                "signature": item["signature"],
                "doc": item["doc"],
                "kind": item["kind"],
            },
            title=f"Capability {item['name']}",
            source=f"catalog:{item['name']}",
        )
        refs.append(ref)
        matches.append(
            {
                "ref": ref.id,
                "name": item["name"],
                "kind": item["kind"],
                "signature": item["signature"],
                "doc": item["doc"],
            }
        )
    return ToolResult(ok=True, data={"matches": matches}, refs=refs)


def read_capability(args: ReadCapabilityArgs, ctx: ToolContext) -> ToolResult:
    items = entries()
    by_name = {e["name"]: e for e in items}
    if args.name is not None:
        name = args.name.strip()
        if name not in by_name:
            close = [s[1]["name"] for s in search(name.replace(".", " "), items)[:3]]
            hint = f"; closest: {', '.join(close)}" if close else ""
            return ToolResult.failure(
                f"no capability named {name!r}{hint}. Known: {', '.join(sorted(by_name))}"
            )
        chosen = [by_name[name]]
    elif args.query is not None:
        chosen = [item for _, item in search(args.query, items)[: args.limit]]
    else:
        chosen = items
    if not chosen:
        return ToolResult(
            ok=True,
            data={
                "matches": [],
                "note": "no capability matches the query",
                "available": sorted(by_name),
            },
        )
    return _issued(chosen, ctx)


SPEC = ToolSpec(
    name="ReadCapability",
    description=(
        "Read the engine's capability catalog (generated from the functions' signatures and "
        "docstrings): look one up by name, search by words, or list all. Each capability "
        "returned is issued an apiRef. Capabilities are called in WORK via EngineCall or as "
        "engine.<name>(...) inside RunPython."
    ),
    args_schema=ReadCapabilityArgs,
    func=read_capability,
    read_only=True,
    issues=("apiRef",),
)

"""EngineCall (WORK): call a registered engine capability by name with JSON arguments.

Issues an executionRef for the call (ok or error) plus the refs the capability backs. The same
``invoke_capability`` serves ``engine.<name>(...)`` inside RunPython, so both paths issue refs
the same way.
"""

from __future__ import annotations

import inspect
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from refgate.catalog.capabilities import EngineEnv, Evidence, get_capability
from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.errors import InputError
from refgate.payloads import JsonDict, JsonValue
from refgate.provenance.map import string_leaves
from refgate.refs import Ref
from refgate.tools.prose_cells import is_text_cell

#: Characters of a capability's data shown to the model before it is cut (about 3,000 tokens:
#: search_documents' default hit budget fits whole).
DATA_PREVIEW_CHARS = 12_000

Issue = Callable[..., Ref]


class CapabilityError(InputError, ValueError):
    """A capability call failed (unknown name, bad arguments, or the capability raised)."""


@dataclass
class Invocation:
    name: str
    data: JsonValue
    refs: list[Ref] = field(default_factory=list)
    untrusted_fields: list[str] = field(default_factory=list)


def json_safe(value: object, depth: int = 0) -> JsonValue:
    """Plain JSON (dicts, lists, str, finite numbers, None) from capability data."""
    if depth > 50:
        raise CapabilityError("capability data is nested too deeply")
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v, depth + 1) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        try:
            return json_safe(value.item(), depth + 1)
        except (TypeError, ValueError):
            pass
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        return json_safe(value.model_dump(), depth + 1)
    return str(value)


#: ``EngineEnv.extra`` key of the outbound policy's check (set from the tool context).
OUTBOUND_GUARD = "outbound_guard"


#: ``EngineEnv.extra`` key of the run's ``OutboundPolicy`` (a capability that starts a graph
#: of its own, ``deep_research``, applies it to what that graph sends, and records it).
OUTBOUND_POLICY = "outbound_policy"


def outbound_extra(ctx: ToolContext) -> dict[str, object]:
    """The engine environment's extras from a tool context: its outbound guard and policy."""
    return {k: ctx.extra[k] for k in (OUTBOUND_GUARD, OUTBOUND_POLICY) if ctx.extra.get(k)}


def invoke_capability(
    name: str,
    args: Sequence[object] = (),
    kwargs: Mapping[str, object] | None = None,
    *,
    env: EngineEnv,
    issue: Issue,
) -> Invocation:
    """Run capability ``name``; issue its ref specs through ``issue(kind, payload, **fields)``."""
    if not isinstance(name, str) or not name:
        raise CapabilityError("a capability name is required")
    try:
        cap = get_capability(name)
    except KeyError as exc:
        raise CapabilityError(str(exc.args[0]) if exc.args else str(exc)) from None
    kwargs = dict(kwargs or {})
    if "env" in kwargs:
        raise CapabilityError("'env' is supplied by refgate, not by the caller")
    sig = inspect.signature(cap.func)
    try:
        bound = sig.bind(*args, **kwargs, env=env)
    except TypeError as exc:
        raise CapabilityError(f"{cap.signature}: {exc}") from None
    guard = env.extra.get(OUTBOUND_GUARD)
    if callable(guard):
        # Outbound is a write: a capability that sends its arguments off the machine passes
        # the run's outbound policy first (refgate.tools.outbound), from EngineCall and
        # from RunPython's engine.<name> alike.
        sent = {k: v for k, v in bound.arguments.items() if k != "env"}
        refusal = guard("EngineCall", {"name": name, "arguments": sent})
        if refusal:
            raise CapabilityError(f"refused: {refusal}")
    try:
        result = cap.func(*bound.args, **bound.kwargs)
    except CapabilityError:
        raise
    except (ValueError, KeyError, TypeError, LookupError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise CapabilityError(f"{name}: {message}") from None
    if isinstance(result, Evidence):
        refs = [
            issue(
                spec.kind,
                json_safe(spec.payload),
                title=spec.title,
                source=spec.source,
                source_type=spec.source_type,
                **({"same_as": spec.same_as} if spec.same_as else {}),
            )
            for spec in result.refs
        ]
        refs = list({r.id: r for r in refs}.values())
        return Invocation(name, json_safe(result.data), refs, list(result.untrusted_fields))
    return Invocation(name, json_safe(result))


def _preview(data: object) -> tuple[object, bool]:
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) <= DATA_PREVIEW_CHARS:
        return data, False
    if isinstance(data, dict) and isinstance(data.get("hits"), list) and data["hits"]:
        # whole hits (document chunks), never one cut in the middle; the rest are counted
        hits, used = data["hits"], len(text) - len(json.dumps(data["hits"], default=str))
        kept: list[object] = []
        for hit in hits:
            size = len(json.dumps(hit, ensure_ascii=False, default=str))
            if kept and used + size > DATA_PREVIEW_CHARS:
                break
            kept.append(hit)
            used += size
        dropped = [h.get("chunk_id") for h in hits[len(kept) :] if isinstance(h, dict)]
        cut = dict(data, hits=kept, left_out=int(data.get("left_out") or 0) + len(dropped))
        cut["left_out_chunk_ids"] = list(data.get("left_out_chunk_ids") or []) + dropped
        return cut, True
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        rows = data["rows"]
        keep = max(1, len(rows) * DATA_PREVIEW_CHARS // max(len(text), 1))
        cut = dict(data, rows=rows[:keep])
        cut["rows_total"] = len(rows)
        return cut, True
    return text[:DATA_PREVIEW_CHARS] + " ...", True


class EngineCallArgs(ToolArgs):
    name: str = Field(
        description="The capability's name as listed by ReadCapability (e.g. 'latest_value', "
        "'top_n', 'period_change', 'series', 'list_datasets')."
    )
    arguments: dict[str, object] = Field(
        default_factory=dict,
        # each key is a slot by its name (a capability's query, path, url, question ...)
        json_schema_extra={"slot": "kwargs"},
        description="Keyword arguments as JSON, exactly as the capability's signature names them "
        '(e.g. {"dataset": "macro", "column": "unemp"}).',
    )


def engine_call(args: EngineCallArgs, ctx: ToolContext) -> ToolResult:
    env = EngineEnv(workspace=ctx.workspace, settings=ctx.settings, extra=outbound_extra(ctx))
    t0 = time.perf_counter()
    error: str | None = None
    inv: Invocation | None = None
    try:
        inv = invoke_capability(args.name, (), args.arguments, env=env, issue=ctx.issue)
    except CapabilityError as exc:
        error = str(exc)
    except Exception as exc:  # a capability bug must reach the model as an error, not a crash
        error = f"{args.name} failed: {type(exc).__name__}: {exc}"
    duration_ms = round((time.perf_counter() - t0) * 1000, 2)
    cap_refs = inv.refs if inv else []
    execution = ctx.issue(
        "executionRef",
        {
            "tool": "EngineCall",
            "capability": args.name,
            "arguments": json_safe(args.arguments),
            "ok": error is None,
            "error": error,
            "duration_ms": duration_ms,
            "refs": [r.id for r in cap_refs],
        },
        title=f"EngineCall {args.name}: {'ok' if error is None else 'error'}",
        source=f"capability:{args.name}",
    )
    if error is not None:
        return ToolResult(ok=False, error=error, data={"execution": execution.id}, refs=[execution])
    assert inv is not None
    preview, cut = _preview(inv.data)
    data: JsonDict = {
        "execution": execution.id,
        "refs": [{"id": r.id, "kind": r.kind, "title": r.title} for r in cap_refs],
        "result": preview,
    }
    if cut:
        data["truncated"] = True
    untrusted = [f"result.{p}" if not p.startswith("result") else p for p in inv.untrusted_fields]
    # Data cells are data: a dataset's prose cell in a capability's result is fenced too.
    untrusted += [
        f"result.{p}" if p and not p.startswith("[") else f"result{p}"
        for p, text in string_leaves(preview)
        if is_text_cell(text)
    ]
    return ToolResult(ok=True, data=data, refs=[execution, *cap_refs], untrusted_fields=untrusted)


SPEC = ToolSpec(
    name="EngineCall",
    description=(
        "Call one registered engine capability (a documented data function; see ReadCapability "
        "for names, signatures and docstrings) with JSON keyword arguments. Returns its result "
        "and issues an executionRef plus the valueRef/tableRef the capability backs (cite those "
        "ids). Use it for direct lookups: latest value with its period, a series, a top-N "
        "ranking, a period-over-period change."
    ),
    args_schema=EngineCallArgs,
    func=engine_call,
    read_only=True,
    issues=("executionRef", "valueRef", "tableRef"),
    untrusted_fields={
        "result.*": "capabilities that read documents (search_documents) return document text; "
        "the capability names the exact paths in each result"
    },
    # Trust follows origin: each result names its untrusted paths (none for a capability over
    # the datasets), so a value_at or series call leaves the turn trusted (B1 keeps its unit).
    origin_tracked=True,
)

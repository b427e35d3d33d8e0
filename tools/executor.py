"""Executes one model tool call under the pass's whitelist and the provenance boundaries.

Every call ends in exactly one ``ToolMessage``: a tool outside the pass's bound set, malformed
arguments, a refused argument (taint), a tool failure or a withheld result are all answered with
an error message and never crash the pass. Each call also yields one trace event.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from langchain_core.messages import InvalidToolCall, ToolCall, ToolMessage
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, ValidationError

from refgate.catalog.toolspec import ToolContext, ToolResult, ToolSpec, ToolUnavailable
from refgate.events import TraceEvent
from refgate.payloads import JsonValue
from refgate.provenance import boundaries
from refgate.redaction import redact_secrets
from refgate.tools import outbound
from refgate.tools.dataset_values import DatasetValues
from refgate.tools.engine_call import OUTBOUND_GUARD, OUTBOUND_POLICY
from refgate.tools.registry import get_spec

#: Longest error text the model receives.
MAX_ERROR_CHARS = 2000
#: Longest argument text kept in the trace per call.
MAX_TRACE_ARGS_CHARS = 4000


@dataclass
class CallOutcome:
    """What one tool call produced, for the pass loop and the trace."""

    message: ToolMessage
    event: TraceEvent
    result: ToolResult | None = None
    untrusted: bool = False
    withheld: bool = False
    caveats: list[str] = field(default_factory=list)


def _trim(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters trimmed] ...\n{text[-half:]}"


#: Deepest nesting of arguments accepted (tools take flat arguments; JSON encoders, checkpoint
#: serialisers and validators all recurse, so a deeper structure would crash them, not the call).
MAX_ARGS_DEPTH = 32


def nested_deeper_than(value: object, limit: int) -> bool:
    """True when dicts/lists/tuples in ``value`` nest more than ``limit`` levels (no recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _args_for_trace(args: JsonValue) -> JsonValue:
    try:
        text = json.dumps(args, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return _trim(repr(type(args)), MAX_TRACE_ARGS_CHARS)
    return args if len(text) <= MAX_TRACE_ARGS_CHARS else _trim(text, MAX_TRACE_ARGS_CHARS)


def _error(call_id: str, name: str, message: str) -> ToolMessage:
    body = json.dumps(
        {"ok": False, "error": message, "untrustedContent": False, "untrustedFields": []},
        ensure_ascii=False,
    )
    return ToolMessage(content=body, tool_call_id=call_id, name=name, status="error")


def _validation_message(spec: ToolSpec, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
        for err in exc.errors()
    )
    return f"malformed arguments for {spec.name}: {problems}. The call was not executed."


def outbound_refusal(
    tool: str,
    args: Mapping[str, object],
    ctx: ToolContext,
    *,
    record: bool = False,
    from_code: bool = False,
) -> str | None:
    """The outbound policy (``refgate.tools.outbound``) for one call of this turn: a
    refusal reason, else None (and, with ``record``, the sent text is recorded).
    ``from_code``: sandboxed code (RunPython's ``engine.<name>``) makes the call."""
    if not outbound.sent_arguments(tool, args):
        return None
    prov = boundaries.provenance_of(ctx)
    why = outbound.check_outbound(
        tool,
        args,
        untrusted_turn=bool(ctx.extra.get("untrusted_turn")),
        trusted=prov.trusted,
        refs=ctx.ledger.all().values(),
        allow_data=ctx.settings.outbound_workspace_data,
        datasets=DatasetValues.of(ctx.workspace),
        from_code=from_code and ctx.workspace is not None and bool(ctx.workspace.datasets),
    )
    if why is None and record:
        record_sent(tool, args, ctx)
    return why


def outbound_policy(ctx: ToolContext) -> outbound.OutboundPolicy:
    """This turn's outbound policy for what a capability starts (the research graph's queries
    and fetches): the person's words, the run's workspace data, and where to record sends."""
    prov = boundaries.provenance_of(ctx)
    return outbound.OutboundPolicy(
        trusted=tuple(prov.trusted),
        refs=tuple(ctx.ledger.all().values()),
        allow_data=ctx.settings.outbound_workspace_data,
        datasets=DatasetValues.of(ctx.workspace),
        record=prov.record_sent,
    )


def record_sent(tool: str, args: Mapping[str, object], ctx: ToolContext) -> None:
    """Keep every query and URL this call sends in the run's provenance (audit, reports)."""
    outbound.record_sent(boundaries.provenance_of(ctx), tool, args)


class _CallTrace:
    """One call's trace event, closed with its status, duration and progress event."""

    def __init__(self, name: str, args: JsonValue, too_deep: bool, ctx: ToolContext) -> None:
        self.name, self.ctx = name, ctx
        self.started = time.perf_counter()
        self.event: TraceEvent = {
            "type": "tool_call",
            "pass": ctx.pass_name,
            "tool": name,
            "args": f"(arguments nested deeper than {MAX_ARGS_DEPTH} levels)"
            if too_deep
            else _args_for_trace(args),
            "refs": [],
        }

    def finish(self, status: str, outcome: CallOutcome) -> CallOutcome:
        """Close the event with ``status`` and report the call's end to the progress sink."""
        event = self.event
        event["status"] = status
        event["duration_ms"] = round((time.perf_counter() - self.started) * 1000, 2)
        if status != "ok" and "error" not in event:
            event["error"] = _trim(str(outcome.message.content), 500)
        self.ctx.emit(
            {
                "event": "tool_call",
                "pass": self.ctx.pass_name,
                "tool": self.name,
                "status": status,
                "refs": list(event["refs"]),
            }
        )
        return outcome


def _malformed(name: str, args: object, too_deep: bool) -> str | None:
    """Why the arguments are not a JSON object the call can take, else None."""
    if not isinstance(args, dict):
        return f"malformed arguments for {name}: expected a JSON object. The call was not executed."
    if too_deep:
        return (
            f"malformed arguments for {name}: nested deeper than {MAX_ARGS_DEPTH} levels. "
            "The call was not executed."
        )
    return None


def _policy_refusal(spec: ToolSpec, parsed: BaseModel, ctx: ToolContext) -> str | None:
    """Why the boundaries or the outbound policy refuse the call, else None; arms the outbound
    guard that capabilities called by this tool pass (B3 approval asked here for outbound)."""
    name = spec.name
    refusal = boundaries.check_call(spec, parsed.model_dump(), ctx) or outbound_refusal(
        name, parsed.model_dump(), ctx
    )
    if refusal:
        return f"refused: {refusal}"
    from_code = name == "RunPython"  # engine.<name>(...) inside the sandbox
    ctx.extra[OUTBOUND_GUARD] = lambda tool, a: outbound_refusal(
        tool, a, ctx, record=True, from_code=from_code
    )
    ctx.extra[OUTBOUND_POLICY] = outbound_policy(ctx)
    if spec.outbound and not boundaries.approve_outbound(spec, parsed.model_dump(), ctx):
        return f"refused: {name} sends data out and a human did not approve it"
    return None


def _run_tool(spec: ToolSpec, parsed: BaseModel, ctx: ToolContext, event: TraceEvent) -> ToolResult:
    """The tool's result; a tool that raises or returns something else fails, not the run."""
    name = spec.name
    try:
        result = spec.func(parsed, ctx)
    except GraphBubbleUp:
        raise  # an interrupt (a person's approval, B3) pauses the run; it is no tool failure
    except ToolUnavailable as exc:
        result = ToolResult.failure(str(exc))
    except Exception as exc:  # a tool bug must not end the run; the model sees the error
        tb = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        result = ToolResult.failure(redact_secrets(f"{name} failed: {_trim(tb)}"))
        event["exception"] = type(exc).__name__
    if not isinstance(result, ToolResult):
        result = ToolResult.failure(f"{name} returned {type(result).__name__}, not a ToolResult")
    return result


def _answer(
    spec: ToolSpec, result: ToolResult, call_id: str, trace: _CallTrace, ctx: ToolContext
) -> CallOutcome:
    """The result rendered for the model (scanned and armored), recorded on the trace."""
    event = trace.event
    event["refs"] = [r.id for r in result.refs]
    rendered = boundaries.render_result(spec, result, ctx)
    status = "ok" if result.ok else "error"
    if rendered.withheld:
        status = "withheld"
        event["signals"] = rendered.signals
    if result.error:
        event["error"] = _trim(result.error, 500)
    message = ToolMessage(
        content=rendered.text,
        tool_call_id=call_id,
        name=spec.name,
        status="success" if result.ok and not rendered.withheld else "error",
    )
    outcome = CallOutcome(
        message=message,
        event=event,
        result=result,
        untrusted=bool(result.untrusted_content) or rendered.untrusted,
        withheld=rendered.withheld,
        caveats=list(rendered.caveats),
    )
    return trace.finish(status, outcome)


def execute_tool_call(call: ToolCall, allowed: Collection[str], ctx: ToolContext) -> CallOutcome:
    """Run ``call`` (``{"name", "args", "id"}``) if ``allowed`` and well formed; always answer."""
    name = str(call.get("name") or "")
    call_id = str(call.get("id") or f"call_{name}")
    args = call.get("args")
    too_deep = nested_deeper_than(args, MAX_ARGS_DEPTH)
    trace = _CallTrace(name, args, too_deep, ctx)

    def refuse(status: str, msg: str) -> CallOutcome:
        return trace.finish(status, CallOutcome(_error(call_id, name, msg), trace.event))

    if name not in allowed:
        bound = ", ".join(sorted(allowed)) or "none"
        return refuse(
            "rejected",
            f"tool {name!r} is not available in the {ctx.pass_name} pass (bound: {bound}). "
            "The call was not executed.",
        )
    spec = get_spec(name)
    malformed = _malformed(name, args, too_deep)
    if malformed:
        return refuse("rejected", malformed)
    try:
        parsed = spec.args_schema.model_validate(args)
    except ValidationError as exc:
        return refuse("rejected", _validation_message(spec, exc))
    refusal = _policy_refusal(spec, parsed, ctx)
    if refusal:
        return refuse("refused", refusal)
    result = _run_tool(spec, parsed, ctx, trace.event)
    if name in outbound.SENDS and name != "PostReport":
        record_sent(name, parsed.model_dump(), ctx)
    return _answer(spec, result, call_id, trace, ctx)


def answer_invalid_call(call: InvalidToolCall, ctx: ToolContext) -> CallOutcome:
    """Answer a tool call whose arguments the model emitted as invalid JSON."""
    name = str(call.get("name") or "")
    call_id = str(call.get("id") or f"call_{name}")
    msg = (
        f"malformed arguments for {name or 'a tool'}: not valid JSON ({call.get('error') or 'parse error'}). "
        "The call was not executed."
    )
    event: TraceEvent = {
        "type": "tool_call",
        "pass": ctx.pass_name,
        "tool": name,
        "status": "rejected",
        "args": _args_for_trace(call.get("args")),
        "refs": [],
        "duration_ms": 0.0,
        "error": msg,
    }
    return CallOutcome(message=_error(call_id, name, msg), event=event)

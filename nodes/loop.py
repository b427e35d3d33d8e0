"""The tool loop of an LLM pass: bind exactly the pass's tools, run bounded rounds, trace all.

- Binds ``tools_for(pass_name)`` (minus the write tools once untrusted content was read: B1; from
  the start when the prompt already carries it, ``untrusted_prompt``: refs read by an earlier pass).
- Each round: one model call; its tool calls go through ``execute_tool_call`` (whitelist,
  argument validation, provenance boundaries); invalid JSON arguments are answered too.
- A withheld result (B5) is not retried: ``boundaries.check_call`` refuses a repeat of the same
  call (its record is checkpointed, so this holds across passes too).
- At ``max_rounds`` the pass stops with what it has and records why.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    message_chunk_to_message,
)
from langchain_core.runnables import Runnable

from refgate.catalog.toolspec import ToolContext
from refgate.events import ProgressSink, TraceEvent, event
from refgate.nodes.common import usage_of
from refgate.provenance.budget import budget_of
from refgate.tools.executor import CallOutcome, answer_invalid_call, execute_tool_call
from refgate.tools.registry import get_spec, tools_for

#: A chat model, or one with tools bound (``bind_tools``).
ChatRunnable = Runnable[LanguageModelInput, AIMessage]


@dataclass
class PassOutcome:
    messages: list[BaseMessage]
    final: AIMessage | None
    events: list[TraceEvent] = field(default_factory=list)
    rounds: int = 0
    hit_bound: bool = False
    untrusted_seen: bool = False
    caveats: list[str] = field(default_factory=list)
    outcomes: list[CallOutcome] = field(default_factory=list)

    @property
    def final_text(self) -> str:
        if self.final is None:
            return ""
        content = self.final.content
        return content if isinstance(content, str) else json.dumps(content, default=str)

    @property
    def called_tools(self) -> list[str]:
        return [o.event.get("tool", "") for o in self.outcomes]


#: Bound models by (model identity, tool names); bounded, holds the model so ids stay valid.
_BOUND: OrderedDict[tuple[int, tuple[str, ...]], tuple[BaseChatModel, ChatRunnable]] = OrderedDict()
_BOUND_MAX = 64
_BOUND_LOCK = threading.Lock()


def _bind(model: BaseChatModel, names: list[str]) -> ChatRunnable:
    """``model.bind_tools`` for these catalog tools, reused across passes and runs."""
    if not names:
        return model
    specs = [get_spec(n) for n in names]
    key = (id(model), tuple(f"{s.name}:{id(s)}" for s in specs))
    with _BOUND_LOCK:
        hit = _BOUND.get(key)
        if hit is not None and hit[0] is model:
            _BOUND.move_to_end(key)
            return hit[1]
    bound = model.bind_tools([s.openai_schema() for s in specs])
    with _BOUND_LOCK:
        _BOUND[key] = (model, bound)
        while len(_BOUND) > _BOUND_MAX:
            _BOUND.popitem(last=False)
    return bound


def _untrusted_sources(outcome: CallOutcome) -> list[str]:
    """What an untrusted result brought into the turn: its external refs, else the tool."""
    refs = [r.id for r in (outcome.result.refs if outcome.result else []) if r.is_external]
    return refs or [f"{outcome.event.get('tool')} result"]


def invoke_model(
    model: ChatRunnable, messages: list[BaseMessage], pass_name: str, events: list[TraceEvent]
) -> AIMessage:
    """One model call, traced with duration and token usage. Tagged ``nostream``: the graph's
    ``messages`` stream carries the answer (``stream_model``), not the passes' plans and calls."""
    started = time.perf_counter()
    reply = model.invoke(messages, config={"tags": ["nostream"]})
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=str(getattr(reply, "content", reply)))
    events.append(
        event(
            "model_call",
            pass_name,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
            usage=usage_of(reply),
            tool_calls=[c["name"] for c in reply.tool_calls],
        )
    )
    return reply


def _text_of(content: object) -> str:
    """The text of a message's content: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text") or "")
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        )
    return ""


def stream_model(
    model: ChatRunnable,
    messages: list[BaseMessage],
    pass_name: str,
    events: list[TraceEvent],
    emit: ProgressSink,
) -> AIMessage:
    """One model call whose text is sent as it is written: every piece goes to ``emit`` as an
    ``answer_delta`` event (the custom stream: ``on_event``, the CLI, SDK clients), and the
    graph's ``messages`` stream carries the same tokens. Traced like ``invoke_model``."""
    started = time.perf_counter()
    final: Any = None
    for chunk in model.stream(messages):
        piece = _text_of(getattr(chunk, "content", ""))
        if piece:
            emit({"event": "answer_delta", "pass": pass_name, "text": piece})
        final = chunk if final is None else final + chunk
    if isinstance(final, AIMessageChunk):
        reply: AIMessage = message_chunk_to_message(final)  # type: ignore[assignment]
    elif isinstance(final, AIMessage):
        reply = final
    else:
        reply = AIMessage(content=_text_of(getattr(final, "content", "")))
    if not isinstance(reply.content, str):
        reply = AIMessage(content=_text_of(reply.content), usage_metadata=reply.usage_metadata)
    events.append(
        event(
            "model_call",
            pass_name,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
            usage=usage_of(reply),
            tool_calls=[],
            streamed=True,
        )
    )
    return reply


def run_tool_pass(
    *,
    pass_name: str,
    model: BaseChatModel,
    messages: list[BaseMessage],
    ctx: ToolContext,
    max_rounds: int,
    allowed: list[str] | None = None,
    untrusted_prompt: bool = False,
    prompt_influence: Sequence[str] = (),
) -> PassOutcome:
    """Run up to ``max_rounds`` model turns with the pass's tools; return messages and events.

    ``untrusted_prompt``: ``messages`` already show untrusted content (external refs read by an
    earlier pass, fenced): the write tools are never bound (B1 from the first round), and
    ``prompt_influence`` names them (what the turn's results record as ``influenced_by``).

    The unit of B1 is the turn: in a round whose prompt holds untrusted text (the pass's
    prompt, or a result of an earlier round), the write tools are unbound, outbound tools may
    send only what the person or code wrote (``untrusted_turn``, refgate.tools.outbound),
    and every result, artifact and execution issued records ``influenced_by``."""
    names = list(tools_for(pass_name) if allowed is None else allowed)
    write_tools = {n for n in names if not get_spec(n).read_only}
    msgs = list(messages)
    out = PassOutcome(messages=msgs, final=None)
    influence: list[str] = list(prompt_influence)
    if untrusted_prompt:
        out.untrusted_seen = True
        influence = influence or ["the pass's prompt"]
        removed = sorted(write_tools & set(names))
        if removed:
            names = [n for n in names if n not in write_tools]
            out.events.append(
                event(
                    "write_tools_removed",
                    pass_name,
                    tools=removed,
                    reason="the prompt carries untrusted content read earlier (boundary B1)",
                )
            )
    bound = _bind(model, names)

    for round_no in range(1, max_rounds + 1):
        reply = invoke_model(bound, msgs, pass_name, out.events)
        msgs.append(reply)
        out.rounds = round_no
        invalid = list(getattr(reply, "invalid_tool_calls", None) or [])
        if not reply.tool_calls and not invalid:
            out.final = reply
            ctx.ledger.influence = ()
            return out
        round_untrusted = False
        budget = budget_of(ctx.extra, ctx.settings)
        ctx.extra["untrusted_turn"] = out.untrusted_seen
        ctx.ledger.influence = tuple(dict.fromkeys(influence))[:20] if out.untrusted_seen else ()
        for call in reply.tool_calls:
            # Run budgets: a call past one stops the run (BudgetExceeded), resumable.
            budget.before_call(str(call.get("name") or ""))
            outcome = execute_tool_call(call, names, ctx)
            if ctx.ledger.influence:
                # what this turn had read: HARVEST keeps the origin of each decision it derives
                outcome.event["influenced_by"] = list(ctx.ledger.influence)
            if call.get("name") == "RunPython" and outcome.event.get("status") != "rejected":
                budget.add_sandbox(float(outcome.event.get("duration_ms") or 0) / 1000)
            msgs.append(outcome.message)
            out.events.append(outcome.event)
            out.outcomes.append(outcome)
            out.caveats.extend(outcome.caveats)
            if outcome.withheld:
                out.events.append(
                    event(
                        "injection_withheld",
                        pass_name,
                        tool=call.get("name"),
                        signals=outcome.event.get("signals", []),
                    )
                )
            round_untrusted = round_untrusted or outcome.untrusted
            if outcome.untrusted or outcome.withheld:
                influence.extend(_untrusted_sources(outcome))
        for call in invalid:
            budget.before_call(str(call.get("name") or ""))
            outcome = answer_invalid_call(call, ctx)
            msgs.append(outcome.message)
            out.events.append(outcome.event)
            out.outcomes.append(outcome)
        if round_untrusted:
            out.untrusted_seen = True
            removed = sorted(write_tools & set(names))
            if removed:
                # B1: no write tools for the rest of a pass that read untrusted content.
                names = [n for n in names if n not in write_tools]
                bound = _bind(model, names)
                out.events.append(
                    event(
                        "write_tools_removed",
                        pass_name,
                        tools=removed,
                        reason="untrusted content was read (boundary B1)",
                    )
                )
    ctx.ledger.influence = ()
    out.hit_bound = True
    out.events.append(
        event(
            "round_bound_hit",
            pass_name,
            rounds=max_rounds,
            reason=f"the pass used its {max_rounds} tool rounds; moving on with "
            "the evidence gathered so far",
        )
    )
    return out

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
import operator
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import reduce

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    message_chunk_to_message,
)
from langchain_core.messages.tool import ToolCall
from langchain_core.runnables import Runnable

from refgate.catalog.toolspec import ToolContext
from refgate.events import ProgressSink, TraceEvent, event
from refgate.nodes.common import usage_of
from refgate.provenance.budget import RunBudget, budget_of
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
    events.append(_model_call(pass_name, started, reply, [c["name"] for c in reply.tool_calls]))
    return reply


def _model_call(
    pass_name: str, started: float, reply: AIMessage, tool_calls: list[str]
) -> TraceEvent:
    """The ``model_call`` event of a call that started at ``started`` (``perf_counter``)."""
    return event(
        "model_call",
        pass_name,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
        usage=usage_of(reply),
        tool_calls=tool_calls,
    )


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


def _whole_reply(pieces: Sequence[BaseMessage]) -> AIMessage:
    """A streamed reply as one message: its chunks added up (a model that streams one whole
    message: that message; nothing streamed: an empty one)."""
    chunks = [p for p in pieces if isinstance(p, AIMessageChunk)]
    if chunks and len(chunks) == len(pieces):
        whole = message_chunk_to_message(reduce(operator.add, chunks))
        return whole if isinstance(whole, AIMessage) else AIMessage(content=_text_of(whole.content))
    if len(pieces) == 1 and isinstance(pieces[0], AIMessage):
        return pieces[0]
    return AIMessage(content="")


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
    pieces: list[BaseMessage] = []
    for chunk in model.stream(messages):
        piece = _text_of(getattr(chunk, "content", ""))
        if piece:
            emit({"event": "answer_delta", "pass": pass_name, "text": piece})
        pieces.append(chunk)
    reply = _whole_reply(pieces)
    if not isinstance(reply.content, str):
        reply = AIMessage(content=_text_of(reply.content), usage_metadata=reply.usage_metadata)
    events.append({**_model_call(pass_name, started, reply, []), "streamed": True})
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
    loop = _ToolLoop(
        pass_name=pass_name,
        model=model,
        ctx=ctx,
        names=list(tools_for(pass_name) if allowed is None else allowed),
        out=PassOutcome(messages=list(messages), final=None),
        influence=list(prompt_influence),
    )
    if untrusted_prompt:
        loop.out.untrusted_seen = True
        loop.influence = loop.influence or ["the pass's prompt"]
        loop.drop_write_tools("the prompt carries untrusted content read earlier (boundary B1)")
    loop.bind()
    for round_no in range(1, max_rounds + 1):
        if loop.run_round(round_no):
            return loop.out
    ctx.ledger.influence = ()
    loop.out.hit_bound = True
    loop.out.events.append(
        event(
            "round_bound_hit",
            pass_name,
            rounds=max_rounds,
            reason=f"the pass used its {max_rounds} tool rounds; moving on with "
            "the evidence gathered so far",
        )
    )
    return loop.out


@dataclass
class _ToolLoop:
    """The tool rounds of one pass: the tools bound now, what the turn may follow, the outcome."""

    pass_name: str
    model: BaseChatModel
    ctx: ToolContext
    names: list[str]
    out: PassOutcome
    influence: list[str]
    write_tools: set[str] = field(init=False)
    bound: ChatRunnable = field(init=False)

    def __post_init__(self) -> None:
        self.write_tools = {n for n in self.names if not get_spec(n).read_only}

    def bind(self) -> None:
        """Bind the model to the tools the pass has now."""
        self.bound = _bind(self.model, self.names)

    def drop_write_tools(self, reason: str) -> bool:
        """B1: no write tools for the rest of the pass; True (and traced) when any were there."""
        removed = sorted(self.write_tools & set(self.names))
        if removed:
            self.names = [n for n in self.names if n not in self.write_tools]
            self.out.events.append(
                event("write_tools_removed", self.pass_name, tools=removed, reason=reason)
            )
        return bool(removed)

    def run_round(self, round_no: int) -> bool:
        """One model turn and its tool calls; True when the model answered without a call."""
        out, ctx = self.out, self.ctx
        reply = invoke_model(self.bound, out.messages, self.pass_name, out.events)
        out.messages.append(reply)
        out.rounds = round_no
        invalid = list(getattr(reply, "invalid_tool_calls", None) or [])
        if not reply.tool_calls and not invalid:
            out.final = reply
            ctx.ledger.influence = ()
            return True
        budget = budget_of(ctx.extra, ctx.settings)
        ctx.extra["untrusted_turn"] = out.untrusted_seen
        ctx.ledger.influence = (
            tuple(dict.fromkeys(self.influence))[:20] if out.untrusted_seen else ()
        )
        round_untrusted = False
        for call in reply.tool_calls:
            round_untrusted = self.run_call(call, budget) or round_untrusted
        for bad in invalid:
            budget.before_call(str(bad.get("name") or ""))
            self.record(answer_invalid_call(bad, ctx))
        if round_untrusted:
            out.untrusted_seen = True
            # B1: no write tools for the rest of a pass that read untrusted content.
            if self.drop_write_tools("untrusted content was read (boundary B1)"):
                self.bind()
        return False

    def run_call(self, call: ToolCall, budget: RunBudget) -> bool:
        """Execute one tool call within the run budget; True when its result is untrusted."""
        # Run budgets: a call past one stops the run (BudgetExceeded), resumable.
        budget.before_call(str(call.get("name") or ""))
        outcome = execute_tool_call(call, self.names, self.ctx)
        if self.ctx.ledger.influence:
            # what this turn had read: HARVEST keeps the origin of each decision it derives
            outcome.event["influenced_by"] = list(self.ctx.ledger.influence)
        if call.get("name") == "RunPython" and outcome.event.get("status") != "rejected":
            budget.add_sandbox(float(outcome.event.get("duration_ms") or 0) / 1000)
        self.record(outcome)
        self.out.caveats.extend(outcome.caveats)
        if outcome.withheld:
            self.out.events.append(
                event(
                    "injection_withheld",
                    self.pass_name,
                    tool=call.get("name"),
                    signals=outcome.event.get("signals", []),
                )
            )
        if outcome.untrusted or outcome.withheld:
            self.influence.extend(_untrusted_sources(outcome))
        return outcome.untrusted

    def record(self, outcome: CallOutcome) -> None:
        """A call's answer to the model, its trace event and its outcome."""
        self.out.messages.append(outcome.message)
        self.out.events.append(outcome.event)
        self.out.outcomes.append(outcome)

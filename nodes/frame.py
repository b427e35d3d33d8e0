"""The pass frame: what every workbench pass does around its own logic, written once.

A pass is a node ``(state: WorkbenchState, runtime: Runtime[RunContext]) -> WorkbenchState``
(react-agent's shape). ``run_pass`` builds its tool context (``make_context``: ledger, settings
with the run context applied, workspace, provenance, budget), starts its timer and its
``pass_start`` event, runs the pass's body, closes with the ``pass_end`` event (its fields the
body's) and returns the body's update with the ``trace`` and the run-wide channels the pass's
``PassFrame`` says it writes (``provenance``, ``budget``)::

    WORK_FRAME = PassFrame(WORK, uses_store=True, writes_provenance=True)

    def work(state: WorkbenchState, runtime: Runtime[RunContext]) -> WorkbenchState:
        return run_pass(WORK_FRAME, deps, state, runtime, lambda run: _work_run(run, deps))

    def _work_run(run: PassRun) -> PassOutput:
        ...  # the pass's own logic: run.ctx, run.state, run.events (append its events)
        return PassOutput({"work_notes": notes}, end={"refs": [...], "rounds": 3})

The run's config (thread id, the checkpointer HARVEST reads) is LangGraph's ``get_config()``:
the same object LangGraph hands a node that asks for ``config``.

Two shapes use the frame's halves, ``open_pass`` and ``close_pass``, themselves:

- a pass that routes (the GATE's ``Command``): ``Command(goto=out.goto, update=close_pass(run,
  out))``, its route chosen by its body (``PassOutput.goto``);
- a pass that adds to the update after its end event (HARVEST: the trace summary counts its
  own ``pass_end``, and the audit record's event follows it).

DELIVER stays outside: it is code that posts once, and leaves no pass events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from refgate.catalog.toolspec import ToolContext
from refgate.config import RunContext
from refgate.events import EventFields, TraceEvent
from refgate.nodes.common import Deps, PassTimer, budget_state, load_prompt, make_context
from refgate.nodes.loop import PassOutcome, run_tool_pass
from refgate.nodes.state import WorkbenchState


@dataclass(frozen=True)
class PassFrame:
    """How the frame opens and closes one pass: its name, whether its tools may use the run's
    store, and which run-wide channels it writes back."""

    name: str
    #: The pass's tools reach the run's store (memory: recall, remembered decisions).
    uses_store: bool = False
    #: The pass writes the run's provenance back (its tools read or sent).
    writes_provenance: bool = False
    #: The pass writes the run budget back (what it spent of it).
    writes_budget: bool = True


@dataclass
class PassRun:
    """One pass as it runs: what its body reads (``state``, ``ctx``) and the trace it adds."""

    frame: PassFrame
    deps: Deps
    state: WorkbenchState
    config: RunnableConfig
    store: BaseStore | None
    ctx: ToolContext
    timer: PassTimer
    #: The pass's trace events, its ``pass_start`` first; the body appends its own.
    events: list[TraceEvent] = field(default_factory=list)

    def model(self) -> BaseChatModel:
        """The pass's chat model (its setting, else the run's model)."""
        return self.deps.model(self.frame.name, self.ctx.settings)

    def messages(self, human: str) -> list[BaseMessage]:
        """The pass's prompt file (``nodes/<pass>_prompt.md``) and ``human``."""
        return [SystemMessage(load_prompt(self.frame.name)), HumanMessage(human)]

    def tool_rounds(
        self,
        human: str,
        *,
        allowed: list[str] | None = None,
        untrusted_prompt: bool = False,
        prompt_influence: Sequence[str] = (),
    ) -> PassOutcome:
        """The pass's tool rounds on ``human`` (``run_tool_pass``, bounded by the pass's
        rounds setting); their events join the pass's."""
        out = run_tool_pass(
            pass_name=self.frame.name,
            model=self.model(),
            messages=self.messages(human),
            ctx=self.ctx,
            max_rounds=self.ctx.settings.rounds_for(self.frame.name),
            allowed=allowed,
            untrusted_prompt=untrusted_prompt,
            prompt_influence=prompt_influence,
        )
        self.events.extend(out.events)
        return out


@dataclass(frozen=True)
class PassOutput:
    """What a pass's body returns: its channels, and the fields of its ``pass_end`` event."""

    update: WorkbenchState
    end: EventFields = field(default_factory=lambda: EventFields())
    #: Where a routing pass goes next (its node reads it; the frame does not route).
    goto: str | None = None


#: A pass's own logic, run inside its frame.
PassBody = Callable[[PassRun], PassOutput]


class PassNode(Protocol):
    """A workbench pass as a graph node."""

    def __call__(self, state: WorkbenchState, runtime: Runtime[RunContext]) -> WorkbenchState: ...


def open_pass(
    frame: PassFrame,
    deps: Deps,
    state: WorkbenchState,
    runtime: Runtime[RunContext],
    start: EventFields,
) -> PassRun:
    """The pass's context (ledger, settings, workspace, budget), timer and ``pass_start``."""
    config = get_config()
    store = runtime.store if frame.uses_store else None
    ctx = make_context(frame.name, state, deps, config=config, store=store)
    timer = PassTimer(frame.name, ctx)
    run = PassRun(frame, deps, state, config, store, ctx, timer)
    run.events.append(timer.start_event(**start))
    return run


def close_pass(run: PassRun, out: PassOutput) -> WorkbenchState:
    """The pass's update: its channels, the trace with its ``pass_end``, and the run-wide
    channels its frame writes (provenance, then budget)."""
    run.events.append(run.timer.end_event(**out.end))
    update: WorkbenchState = {**out.update, "trace": run.events}
    if run.frame.writes_provenance:
        update["provenance"] = run.ctx.provenance.to_state()
    if run.frame.writes_budget:
        update["budget"] = budget_state(run.ctx)
    return update


def pass_node(
    frame: PassFrame,
    deps: Deps,
    body: PassBody,
    start: Callable[[WorkbenchState], EventFields] | None = None,
) -> PassNode:
    """The graph node of a pass whose body is all it adds to the frame; ``start``: the
    ``pass_start`` event's fields, from the state."""

    def node(state: WorkbenchState, runtime: Runtime[RunContext]) -> WorkbenchState:
        fields = start(state) if start is not None else None
        return run_pass(frame, deps, state, runtime, body, start=fields)

    node.__name__ = node.__qualname__ = frame.name
    node.__doc__ = body.__doc__
    return node


def attempt_start(state: WorkbenchState) -> EventFields:
    """The ``pass_start`` fields of a pass the GATE may send the run back through: which
    attempt this is."""
    return {"attempt": int(state.get("gate_attempts") or 0) + 1}


def run_pass(
    frame: PassFrame,
    deps: Deps,
    state: WorkbenchState,
    runtime: Runtime[RunContext],
    body: PassBody,
    *,
    start: EventFields | None = None,
) -> WorkbenchState:
    """Run one pass in its frame: open (context, timer, ``pass_start``), the body, close
    (``pass_end``, trace, provenance, budget). ``start``: the ``pass_start`` event's fields."""
    run = open_pass(frame, deps, state, runtime, start or {})
    return close_pass(run, body(run))

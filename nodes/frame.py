"""The pass frame: what every workbench pass does around its own logic, written once.

``run_pass`` builds the pass's tool context (``make_context``), starts its timer and its
``pass_start`` event, runs the pass's body, closes with the ``pass_end`` event (its fields the
body's), and returns the body's update with the ``trace`` and the run-wide channels the pass
writes (``provenance``: what untrusted text the run read and sent; ``budget``: what it spent)::

    def work(state: WorkbenchState, config: RunnableConfig, runtime: Runtime[RunContext]):
        return run_pass(WORK_FRAME, deps, state, config, runtime, work_body)

    def work_body(run: PassRun) -> PassOutput:
        ...  # the pass's own logic: run.ctx, run.state, run.events
        return PassOutput({"work_notes": notes}, end={"refs": [...], "rounds": 3})

A pass that routes (the GATE's ``Command``) wraps the returned update:
``Command(goto=..., update=run_pass(...))``, its route chosen by its body (``PassOutput.goto``).
A pass that adds to the trace after its end (HARVEST's audit record) appends to the update's
``trace`` once ``run_pass`` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from refgate.catalog.toolspec import ToolContext
from refgate.config import RunContext
from refgate.events import EventFields, TraceEvent
from refgate.nodes.common import Deps, PassTimer, budget_state, make_context
from refgate.nodes.state import WorkbenchState


@dataclass(frozen=True)
class PassFrame:
    """How the frame opens and closes one pass: its name, whether its tools may read the
    run's store, and which run-wide channels it writes back."""

    name: str
    #: The pass's tools reach the run's store (memory: recall, remembered decisions).
    uses_store: bool = False
    #: The pass writes the run's provenance back (it ran tools that read or send).
    writes_provenance: bool = False
    #: The pass writes the run budget back (it spent tool calls or model turns of it).
    writes_budget: bool = True


@dataclass
class PassRun:
    """One pass as it runs: what its body reads (``state``, ``ctx``) and the trace it adds."""

    frame: PassFrame
    state: WorkbenchState
    config: RunnableConfig
    store: BaseStore | None
    ctx: ToolContext
    timer: PassTimer
    #: The pass's trace events, its ``pass_start`` first; the body appends its own.
    events: list[TraceEvent] = field(default_factory=list)


@dataclass(frozen=True)
class PassOutput:
    """What a pass's body returns: its channels, and the fields of its ``pass_end`` event."""

    update: WorkbenchState
    end: EventFields = field(default_factory=lambda: EventFields())
    #: Where a routing pass goes next (read by its node; the frame does not route).
    goto: str | None = None


#: A pass's own logic, run inside its frame.
PassBody = Callable[[PassRun], PassOutput]


class PassNode(Protocol):
    """A workbench pass as a graph node: ``(state, config, runtime) -> update``."""

    def __call__(
        self, state: WorkbenchState, config: RunnableConfig, runtime: Runtime[RunContext]
    ) -> WorkbenchState: ...


def open_pass(
    frame: PassFrame,
    deps: Deps,
    state: WorkbenchState,
    config: RunnableConfig,
    runtime: Runtime[RunContext] | None,
    start: EventFields,
) -> PassRun:
    """The pass's context (ledger, settings, workspace, budget), timer and ``pass_start``."""
    store = runtime.store if runtime is not None and frame.uses_store else None
    ctx = make_context(frame.name, state, deps, config=config, store=store)
    timer = PassTimer(frame.name, ctx)
    run = PassRun(frame, state, config, store, ctx, timer)
    run.events.append(timer.start_event(**start))
    return run


def close_pass(run: PassRun, out: PassOutput) -> WorkbenchState:
    """The pass's update: its channels, the trace with its ``pass_end``, and the run-wide
    channels its frame writes (provenance, then budget)."""
    run.events.append(run.timer.end_event(**out.end))
    update: WorkbenchState = {**out.update, "trace": run.events}
    if run.frame.writes_provenance:
        update["provenance"] = run.ctx.taint.to_state()
    if run.frame.writes_budget:
        update["budget"] = budget_state(run.ctx)
    return update


def run_pass(
    frame: PassFrame,
    deps: Deps,
    state: WorkbenchState,
    config: RunnableConfig,
    runtime: Runtime[RunContext] | None,
    body: PassBody,
    *,
    start: EventFields | None = None,
) -> WorkbenchState:
    """Run one pass in its frame: open (context, timer, ``pass_start``), the body, close
    (``pass_end``, trace, provenance, budget). ``start``: the ``pass_start`` event's fields."""
    run = open_pass(frame, deps, state, config, runtime, start or {})
    return close_pass(run, body(run))

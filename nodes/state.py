"""The workbench's state and BRIEF's plan: what every pass reads and writes.

Every pass is a node ``(state: WorkbenchState, config) -> WorkbenchState``: the state has no
required key, so a pass returns only the channels it writes (a partial update), and mypy checks
each key and value against this declaration. ``refgate.graph.state`` builds the graph's input
and output schemas around it.

Channels with reducers: ``refs`` (the ref ledger, merged by id), ``trace`` (events appended
by every pass) and ``turns`` (the conversation: one record per finished question, so a thread
takes follow-ups). Everything else is written by one pass and read by later ones. Every channel
holds plain data (dicts, lists, strings, numbers), so any checkpointer stores it as it is.
"""

from __future__ import annotations

import operator
from typing import Annotated, Protocol, TypeVar

from langchain_core.runnables import RunnableConfig

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

from refgate.events import TraceEvent, TraceSummary
from refgate.provenance.budget import BudgetState
from refgate.provenance.record import ProvenanceState
from refgate.refs import RefData, merge_refs
from refgate.turns import Turn
from refgate.usage import UsageRecord
from refgate.verdict import GateAttempt, Verdict


class Plan(TypedDict, total=False):
    """BRIEF's plan; ``required_evidence`` becomes the GATE's checklist."""

    skills: list[str]
    skill_refs: list[str]
    lens: str
    required_evidence: list[str]
    require_emitted: bool
    forbidden: list[str]
    tools: list[str]
    capabilities: list[str]
    knowledge: list[str]
    criteria: list[str]
    recalled: list[str]
    notes: str
    fallback: str
    untrusted_fields: list[str]
    #: What the plan may follow: untrusted text BRIEF's prompt or tool results showed it (refs,
    #: decisions); WORK's turns record it as ``influenced_by`` (influence follows meaning).
    influenced_by: list[str]


class WorkbenchState(TypedDict, total=False):
    question: str
    workspace: str | None
    #: The identity of the workspace that started the thread (thread owner), set by BRIEF.
    owner: str
    run_id: str
    plan: Plan
    refs: Annotated[dict[str, RefData], merge_refs]
    trace: Annotated[list[TraceEvent], operator.add]
    work_notes: str
    work_notes_untrusted: bool
    critiques: list[str]
    caveats: list[str]
    answer: str
    #: The GATE's verdict on the answer (the last check's); ``{}`` until this turn's first check.
    gate: Verdict
    gate_attempts: int
    #: Every GATE check of this run, in order.
    gate_history: list[GateAttempt]
    #: What untrusted text the run read and sent (``RunProvenance.to_state``).
    provenance: ProvenanceState
    #: The run budget's counters (``RunBudget.to_state``); None when a run starts.
    budget: BudgetState | None
    decisions: list[str]
    trace_summary: TraceSummary
    #: Finished turns (question, answer, verdict, cited ids), appended by HARVEST.
    turns: Annotated[list[Turn], operator.add]
    #: This turn's token usage (``Usage.to_dict()``), written by HARVEST.
    usage: UsageRecord


StateT = TypeVar("StateT", contravariant=True)
UpdateT = TypeVar("UpdateT", covariant=True)


class Step(Protocol[StateT, UpdateT]):
    """A node that reads its state only: ``(state) -> update``."""

    def __call__(self, state: StateT) -> UpdateT: ...


class ConfiguredStep(Protocol[StateT, UpdateT]):
    """A node that also reads the run's config (thread, workspace): ``(state, config) -> update``."""

    def __call__(self, state: StateT, config: RunnableConfig) -> UpdateT: ...

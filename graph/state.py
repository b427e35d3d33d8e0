"""The workbench graph's state, input and output schemas.

Channels with reducers: ``refs`` (the ref ledger, merged by id), ``trace`` (events appended
by every pass) and ``turns`` (the conversation: one record per finished question, so a thread
takes follow-ups). Everything else is written by one pass and read by later ones.

Every channel holds plain data (dicts, lists, strings, numbers): refs are ``RefData`` dicts, which
nodes validate into ``Ref`` where they read them (``make_context``'s ledger), so any checkpointer
(SQLite, PostgreSQL, the dev server's and LangGraph Server's own) stores and reads the state
without an allowlist, and stream output and ``invoke``'s result are JSON as they are.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

from refgate.refs import RefData, merge_refs


class WorkbenchInput(TypedDict):
    """What a caller (CLI, Studio, SDK) passes in."""

    question: str
    workspace: NotRequired[str | None]


class WorkbenchOutput(TypedDict):
    """What a finished run returns."""

    answer: str
    refs: dict[str, RefData]
    gate: dict[str, Any]
    trace_summary: dict[str, Any]
    #: The conversation: every finished turn of the thread (``nodes/conversation.py``).
    turns: list[dict[str, Any]]
    #: This turn's tokens per pass, total, models and estimated cost (``refgate.usage``).
    usage: dict[str, Any]


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


class WorkbenchState(TypedDict, total=False):
    question: str
    workspace: str | None
    run_id: str
    plan: Plan
    refs: Annotated[dict[str, RefData], merge_refs]
    trace: Annotated[list[dict[str, Any]], operator.add]
    work_notes: str
    work_notes_untrusted: bool
    critiques: list[str]
    caveats: list[str]
    answer: str
    gate: dict[str, Any]
    gate_attempts: int
    gate_history: list[dict[str, Any]]
    provenance: dict[str, Any]
    budget: dict[str, Any]
    decisions: list[str]
    trace_summary: dict[str, Any]
    #: Finished turns (question, answer, verdict, cited ids), appended by HARVEST.
    turns: Annotated[list[dict[str, Any]], operator.add]
    #: This turn's token usage (``Usage.to_dict()``), written by HARVEST.
    usage: dict[str, Any]

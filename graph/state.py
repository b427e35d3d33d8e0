"""The workbench graph's state, input and output schemas (the state and the plan are defined
in ``refgate.nodes.state``, where the passes that read and write them live).

Every channel holds plain data (dicts, lists, strings, numbers): refs are ``RefData`` dicts, which
nodes validate into ``Ref`` where they read them (``make_context``'s ledger), so any checkpointer
(SQLite, PostgreSQL, the dev server's and LangGraph Server's own) stores and reads the state
without an allowlist, and stream output and ``invoke``'s result are JSON as they are.
"""

from __future__ import annotations

from typing import NotRequired

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

from refgate.nodes.state import Plan, WorkbenchState
from refgate.refs import RefData
from refgate.turns import Turn
from refgate.usage import UsageRecord
from refgate.verdict import Verdict

__all__ = ["Plan", "WorkbenchInput", "WorkbenchOutput", "WorkbenchState"]


class WorkbenchInput(TypedDict):
    """What a caller (CLI, Studio, SDK) passes in."""

    question: str
    workspace: NotRequired[str | None]


class WorkbenchOutput(TypedDict):
    """What a finished run returns."""

    answer: str
    refs: dict[str, RefData]
    #: The GATE's verdict on the answer.
    gate: Verdict
    #: Counts and timings of the run (``refgate.events.TraceSummary``; a plain object here: its
    #: ``history`` is recursive JSON, which the schema generator cannot draw).
    trace_summary: dict[str, object]
    #: The conversation: every finished turn of the thread (``nodes/conversation.py``).
    turns: list[Turn]
    #: This turn's tokens per pass, total, models and estimated cost (``refgate.usage``).
    usage: UsageRecord

"""The GATE's verdict as plain data: the one type that state, reports, memory, the API and the
CLI read.

The GATE (``refgate/gate/``) builds it (``GateReport.to_dict``) and the GATE pass adds what the run
knows (``conclusions``, ``attempt``, ``verify_ref``). It travels through the graph's state and
the checkpoints as plain dicts, as refs do; these TypedDicts are static only.
"""

from __future__ import annotations

from typing import Literal

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

#: A blocking issue fails the answer; a warning is shown beside it.
Severity = Literal["block", "warn"]


class IssueRecord(TypedDict):
    """One finding: its code (``refgate/gate/verdict.py: ISSUE_CODES``), the claim it is about
    ('' for the whole answer), the reason in words, the refs it names, and its severity."""

    code: str
    claim: str
    detail: str
    ref_ids: list[str]
    severity: Severity


class MatchRecord(TypedDict):
    """A cited ref's place that supports a mention, and how (``how`` names the cell or field)."""

    ref_id: str
    how: str
    #: The ref is secondary evidence (a web page): alone it does not make a number primary.
    secondary: bool


class MentionRecord(TypedDict):
    """One number, date or ranking inside a claim, and what supports it."""

    kind: str
    text: str
    supported: bool
    matches: list[MatchRecord]
    note: str


class ClaimRecord(TypedDict):
    """One claim (sentence, list item, heading or table row) with its citations and mentions."""

    text: str
    unit: str
    line: int
    ref_ids: list[str]
    supported: bool
    mentions: list[MentionRecord]


class VerdictCounts(TypedDict):
    claims: int
    supported_claims: int
    blocking: int
    warnings: int


class Verdict(TypedDict, total=False):
    """The GATE's report on one answer: ``passed`` is False iff an issue blocks. The GATE writes
    ``passed``, ``issues``, ``claims`` and ``counts``; the state holds ``{}`` until a turn's first
    check, so readers use ``.get``."""

    passed: bool
    issues: list[IssueRecord]
    claims: list[ClaimRecord]
    counts: VerdictCounts
    #: Sentences of the answer that are the model's conclusions, not verified claims.
    conclusions: list[str]
    #: Which check of the run this is (1, or 2 after the WORK retry).
    attempt: int
    #: The verifyRef issued for this verdict.
    verify_ref: str


class GateAttempt(TypedDict):
    """One GATE check of a run, as ``gate_history`` keeps it."""

    passed: bool
    issues: int
    verify_ref: str

"""The deep-research graph's state schemas: the run, one angle's subgraph, and their edges."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class ResearchInput(TypedDict):
    question: str


class ResearchState(TypedDict, total=False):
    question: str
    run_token: str
    status: str
    scope: dict[str, Any] | None
    searches: Annotated[list[dict[str, Any]], operator.add]
    sources: Annotated[list[dict[str, Any]], operator.add]
    claims: list[dict[str, Any]]
    claims_extracted: int
    cut_claims: list[dict[str, Any]]
    votes: Annotated[list[dict[str, Any]], operator.add]
    tallied: list[dict[str, Any]]
    synthesis: dict[str, Any] | None
    findings: list[dict[str, Any]]
    notes: Annotated[list[str], operator.add]
    model_calls: Annotated[int, operator.add]
    #: What the run sent off the machine (queries, fetched URLs) and the queries it refused.
    sent: Annotated[list[dict[str, str]], operator.add]
    refused: Annotated[list[dict[str, str]], operator.add]
    report: dict[str, Any]
    markdown: str


class AngleState(TypedDict, total=False):
    question: str
    run_token: str
    angle: dict[str, Any]
    searches: Annotated[list[dict[str, Any]], operator.add]
    sources: Annotated[list[dict[str, Any]], operator.add]
    model_calls: Annotated[int, operator.add]
    sent: Annotated[list[dict[str, str]], operator.add]
    refused: Annotated[list[dict[str, str]], operator.add]


class AngleInput(TypedDict):
    question: str
    run_token: str
    angle: dict[str, Any]


class FetchTask(TypedDict):
    """What ``after_search`` sends to ``fetch``: one novel search result of an angle."""

    question: str
    run_token: str
    angle: dict[str, Any]
    source: dict[str, Any]


class VerifyTask(TypedDict):
    """What ``after_rank`` sends to ``verify``: one voter on one claim."""

    question: str
    run_token: str
    claim: dict[str, Any]
    voter: int
    withheld: list[str]
    known: list[str]


class AngleOutput(TypedDict, total=False):
    searches: Annotated[list[dict[str, Any]], operator.add]
    sources: Annotated[list[dict[str, Any]], operator.add]
    model_calls: Annotated[int, operator.add]
    sent: Annotated[list[dict[str, str]], operator.add]
    refused: Annotated[list[dict[str, str]], operator.add]

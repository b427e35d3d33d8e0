"""Structured outputs of the research steps (the research pipeline's schemas; field names as its prompts use)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Angle(BaseModel):
    """One search angle on the question."""

    label: str = Field(description="Short name of the angle, e.g. 'recent news'")
    query: str = Field(description="The web search query for this angle")
    rationale: str | None = Field(default=None, description="Why this angle helps")


class Scope(BaseModel):
    """The question decomposed into 3-6 complementary search angles."""

    question: str
    summary: str = Field(description="1-2 sentence decomposition strategy")
    angles: list[Angle] = Field(min_length=3, max_length=6)


class SearchResult(BaseModel):
    url: str
    title: str
    snippet: str | None = None
    relevance: Literal["high", "medium", "low"]


class Search(BaseModel):
    """The most relevant 4-6 results for one angle, chosen from the results given."""

    results: list[SearchResult] = Field(max_length=6)


class Claim(BaseModel):
    claim: str
    quote: str = Field(description="A direct, verbatim quote from the source supporting the claim")
    importance: Literal["central", "supporting", "tangential"]


class Extract(BaseModel):
    """Falsifiable claims extracted from one source."""

    sourceQuality: Literal["primary", "secondary", "blog", "forum", "unreliable"]
    publishDate: str | None = None
    claims: list[Claim] = Field(max_length=5)


class Verdict(BaseModel):
    """One skeptical voter's verdict on one claim."""

    refuted: bool
    evidence: str
    confidence: Literal["high", "medium", "low"]
    counterSource: str | None = Field(
        default=None,
        description="URL of the source your vote rests on: a page listed under counter-evidence, "
        "or the claim's own source",
    )
    sourceQuote: str | None = Field(
        default=None,
        description="The sentence of that source your vote rests on, copied verbatim",
    )


class Finding(BaseModel):
    claim: str
    confidence: Literal["high", "medium", "low"]
    sources: list[str] = Field(default_factory=list)
    evidence: str = ""
    claims: list[int] = Field(
        default_factory=list, description="Numbers [i] of the confirmed claims merged here"
    )
    vote: str | None = None


class Report(BaseModel):
    """The synthesis: merged findings, summary, caveats, open questions."""

    summary: str
    findings: list[Finding]
    caveats: str = ""
    openQuestions: list[str] | None = None

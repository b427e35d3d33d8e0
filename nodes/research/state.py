"""The deep-research graph's state schemas (the run, one angle's subgraph, their edges) and the
records its channels hold: angles, search records, sources, claims, votes, findings.

Every record is plain JSON data (a checkpointer stores it as it is); the camelCase keys are the
research pipeline's own, shared with its prompts and the report.
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal, NotRequired

# typing_extensions' TypedDict: pydantic (LangServe, Studio schemas) refuses typing's on 3.11.
from typing_extensions import TypedDict

Relevance = Literal["high", "medium", "low"]
Confidence = Literal["high", "medium", "low"]
Importance = Literal["central", "supporting", "tangential"]
SourceQuality = Literal["primary", "secondary", "blog", "forum", "unreliable"]
Outcome = Literal["survives", "refuted", "unverified"]
VoteStatus = Literal["support", "refute", "uncertain", "failed"]


class RejectedRefutation(TypedDict):
    """A refutation that did not hold (``refute.refutation_problem``): its page, sentence, why."""

    source: str | None
    quote: str | None
    why: str


class AngleRecord(TypedDict):
    """One search angle of the scope (``schemas.Angle``) and whether its query was written after
    the step read untrusted text."""

    label: str
    query: str
    rationale: NotRequired[str | None]
    writtenAfterUntrusted: NotRequired[bool]


class ScopeRecord(TypedDict):
    summary: str
    angles: list[AngleRecord]


class PickedResult(TypedDict):
    """A search result the agent picked to fetch: the provider's URL, title, snippet and date,
    and the agent's relevance."""

    url: str
    title: str
    snippet: str
    date: str | None
    relevance: Relevance


class WithheldRead(TypedDict):
    """A page or search result a voter was not shown, and why."""

    url: str
    reason: str


class Withheld(WithheldRead):
    """A page or search result withheld after an injection signal."""

    title: str
    kinds: list[str]


class PageVerdict(TypedDict):
    """Why a fetched page is withheld (``inspect.page_verdict``)."""

    reason: str
    kinds: list[str]
    where: Literal["text", "hidden text"]


class Refusal(TypedDict):
    """A query the outbound policy refused (not sent)."""

    query: str
    reason: str


class SearchRecord(TypedDict):
    """What one angle's search did."""

    angle: str
    query: str
    hits: int
    picked: list[PickedResult]
    novel: list[PickedResult]
    dupes: int
    budgetDropped: int
    unretrieved: list[str]
    withheldHits: list[Withheld]
    refined: list[str]
    refusedQueries: list[Refusal]
    error: str | None


class ClaimRecord(TypedDict):
    """A claim extracted from one source, with its verified quote; ranking adds ``site``,
    ``corroboratedBy`` and (sent to verification) ``id`` or (past the cut) ``cutReason``."""

    claim: str
    quote: str
    importance: Importance
    sourceUrl: str
    sourceTitle: str
    sourceQuality: SourceQuality
    publishDate: str | None
    angle: str
    site: NotRequired[str]
    corroboratedBy: NotRequired[list[str]]
    id: NotRequired[str]
    cutReason: NotRequired[str]


class SourceRecord(TypedDict):
    """One fetched source and the claims extracted from it."""

    url: str
    title: str
    angle: str
    relevance: Relevance | None
    fetched: bool
    extracted: bool
    error: str | None
    sourceQuality: SourceQuality
    publishDate: str | None
    claims: list[ClaimRecord]
    quotesRejected: int
    withheld: NotRequired[PageVerdict]


class VerdictRecord(TypedDict):
    """One voter's verdict (``schemas.Verdict``); ``uncertain`` when its source is unusable."""

    refuted: bool
    evidence: str
    confidence: Confidence
    counterSource: str | None
    sourceQuote: str | None
    uncertain: NotRequired[bool]


class ReadPage(TypedDict):
    """A counter-evidence page a voter read: the text it was shown."""

    url: str
    title: str
    text: str


class VoteRecord(TypedDict):
    """One voter on one claim."""

    claim_id: str
    voter: int
    verdict: VerdictRecord | None
    read: list[str]
    withheld: list[WithheldRead]
    status: NotRequired[VoteStatus]
    uncertainWhy: NotRequired[str]
    counterSourceDropped: NotRequired[str | None]
    site: NotRequired[str]
    #: A refutation rejected (no contradiction, or an instruction in its sentence); the voter
    #: voted again without that page.
    rejected: NotRequired[RejectedRefutation]


class Ballot(TypedDict):
    """One vote as the report shows it."""

    voter: int
    status: str
    why: str | None
    source: str | None
    quote: str | None
    evidence: str | None
    read: list[str]
    rejected: NotRequired[RejectedRefutation]
    overruled: NotRequired[str]


class TallyRecord(TypedDict):
    """One claim's votes counted (``core.tally``)."""

    outcome: Outcome
    survives: bool
    valid: list[VerdictRecord]
    refutedVotes: int
    uncertainVotes: int
    supportVotes: int
    abstained: int
    vote: str


class TalliedClaim(ClaimRecord, TallyRecord):
    """A verified claim with its tally, its ballots and the independent sites that support it."""

    ballots: list[Ballot]
    supportSites: list[str]
    #: The one site (or one copied text) the claim's outcome rests on, when it rests on one.
    fateRestsOn: NotRequired[str | None]


class FindingDraft(TypedDict):
    """A finding as the synthesis wrote it (``schemas.Finding``)."""

    claim: str
    confidence: Confidence
    sources: list[str]
    evidence: str
    claims: list[int]
    vote: str | None


class SynthesisRecord(TypedDict):
    """The synthesis (``schemas.Report``) and the summary's numbers no verified quote holds."""

    summary: str
    findings: list[FindingDraft]
    caveats: str
    openQuestions: list[str] | None
    summaryUnquotedNumbers: list[str]


class FindingRecord(TypedDict):
    """A finding grounded in the pages retrieved in the run."""

    claim: str
    confidence: Confidence
    sources: list[str]
    evidence: str
    claims: list[str]
    unquotedNumbers: list[str]


class ClaimVotes(TypedDict):
    support: int
    refute: int
    uncertain: int
    abstain: int


class ClaimOut(TypedDict):
    """A verified claim as the report lists it."""

    id: str
    claim: str
    quote: str
    source: str
    sourceTitle: str
    sourceQuality: SourceQuality | None
    publishDate: str | None
    importance: Importance | None
    outcome: Outcome
    vote: str
    votes: ClaimVotes
    verdicts: list[dict[str, object]]
    ballots: list[Ballot]
    corroboratedBy: list[str]
    supportSites: list[str]
    singleSite: bool
    fateRestsOn: NotRequired[str | None]


class CutClaim(TypedDict):
    claim: str
    quote: str
    source: str
    importance: Importance | None
    sourceQuality: SourceQuality | None
    reason: str


class SourceCount(TypedDict):
    source: str
    count: int


class CutOut(TypedDict):
    """The claims past the cut: how many per source, and each with its reason."""

    count: int
    bySource: list[SourceCount]
    claims: list[CutClaim]


class SourceOut(TypedDict):
    """A source as the report lists it."""

    url: str
    title: str
    angle: str | None
    quality: SourceQuality | None
    publishDate: str | None
    fetched: bool
    withheld: bool
    claimCount: int
    error: str | None


class ResearchReport(TypedDict):
    """The research report (``report.build_report``), rendered as markdown, HTML or JSON."""

    question: str
    status: str
    summary: str
    findings: list[FindingRecord]
    confirmed: list[ClaimOut]
    refuted: list[ClaimOut]
    unverified: list[ClaimOut]
    summaryUnquotedNumbers: list[str]
    caveats: str
    openQuestions: list[str]
    angles: list[AngleRecord]
    sources: list[SourceOut]
    killedSources: list[Withheld]
    cut: CutOut
    notes: list[str]
    sent: list[dict[str, str]]
    refusedQueries: list[Refusal]
    stats: dict[str, int]


class ResearchInput(TypedDict):
    question: str


class ResearchState(TypedDict, total=False):
    question: str
    run_token: str
    status: str
    scope: ScopeRecord | None
    searches: Annotated[list[SearchRecord], operator.add]
    sources: Annotated[list[SourceRecord], operator.add]
    claims: list[ClaimRecord]
    claims_extracted: int
    cut_claims: list[ClaimRecord]
    votes: Annotated[list[VoteRecord], operator.add]
    tallied: list[TalliedClaim]
    synthesis: SynthesisRecord | None
    findings: list[FindingRecord]
    notes: Annotated[list[str], operator.add]
    model_calls: Annotated[int, operator.add]
    #: What the run sent off the machine (queries, fetched URLs) and the queries it refused.
    sent: Annotated[list[dict[str, str]], operator.add]
    refused: Annotated[list[Refusal], operator.add]
    report: ResearchReport
    markdown: str


class AngleState(TypedDict, total=False):
    question: str
    run_token: str
    angle: AngleRecord
    searches: Annotated[list[SearchRecord], operator.add]
    sources: Annotated[list[SourceRecord], operator.add]
    model_calls: Annotated[int, operator.add]
    sent: Annotated[list[dict[str, str]], operator.add]
    refused: Annotated[list[Refusal], operator.add]


class AngleInput(TypedDict):
    question: str
    run_token: str
    angle: AngleRecord


class FetchTask(TypedDict):
    """What ``after_search`` sends to ``fetch``: one novel search result of an angle."""

    question: str
    run_token: str
    angle: AngleRecord
    source: PickedResult


class VerifyTask(TypedDict):
    """What ``after_rank`` sends to ``verify``: one voter on one claim."""

    question: str
    run_token: str
    claim: ClaimRecord
    voter: int
    withheld: list[str]
    known: list[str]


class AngleOutput(TypedDict, total=False):
    searches: Annotated[list[SearchRecord], operator.add]
    sources: Annotated[list[SourceRecord], operator.add]
    model_calls: Annotated[int, operator.add]
    sent: Annotated[list[dict[str, str]], operator.add]
    refused: Annotated[list[Refusal], operator.add]

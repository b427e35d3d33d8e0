"""Step 4, verify (one per claim and voter): a skeptical voter tries to refute one claim.

**Votes on read sources.** Each voter first looks for counter-evidence within a small budget
(``VoterBudget``): a search whose query code writes from the user's question and a per-voter
skeptical suffix (never page text), then pages fetched, inspected (``page_verdict``, as every
page) and shown inside a nonce fence. Only page bodies are shown: a search snippet is not read. A
page withheld anywhere in the run, or on the voter's fetch, is never shown and cannot be cited.

**Independent counter-evidence.** A claim's voters read different sites, none of them the claim's
own site or a site that corroborates it (``corroboratedBy``), and at most one of them a page the
research had not already read (``known``): a page planted for the voters' search reaches at most
one vote on a claim.

**A vote rests on a sentence.** A vote names its source (``counterSource``: a page it read, or
the claim's own source) and the sentence it rests on (``sourceQuote``), checked as synthesis
quotes are (``quote_in_text``, against the text the voter was shown); a sentence from a page
other than the claim's own must also bear on the claim (``bears_on``). A vote without a usable
source is **uncertain**, and the tally counts uncertain as refuted (the design's "default to
refuted when uncertain"). A refutation resting on another page must quote a contradiction
carrying no instruction (``refute``); one that does not is rejected, recorded on the vote, and
the voter votes again without that page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from langchain_core.runnables import RunnableConfig

from refgate.lexical import terms
from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.common import emit, research_prompt, run_shared
from refgate.nodes.research.core import VoterBudget, quote_in_text, select_passages, site_of
from refgate.nodes.research.deps import ResearchDeps, run_backend
from refgate.nodes.research.inspect import page_verdict, screen_hits
from refgate.nodes.research.outbound import Sending
from refgate.nodes.research.refute import refutation_problem
from refgate.nodes.research.schemas import Verdict
from refgate.nodes.research.state import (
    ClaimRecord,
    ReadPage,
    ResearchState,
    VerdictRecord,
    VerifyTask,
    VoteRecord,
    VoteStatus,
    WithheldRead,
)
from refgate.nodes.state import ConfiguredStep
from refgate.provenance import armor
from refgate.tools.urls import norm_url
from refgate.tools.web_providers import Fetch, HitRecord, WebSearch

#: What each voter adds to the question when it searches (voter i uses entry i mod len).
SKEPTIC_SUFFIXES = ("criticism", "contradicting evidence", "correction")
#: Content terms a refuting sentence must share with the claim and its quote.
BEARING_TERMS = 3


def voter_query(question: str, voter: int) -> str:
    """The voter's search query: the user's question (trusted) and a skeptical suffix."""
    return f"{question.strip()} {SKEPTIC_SUFFIXES[voter % len(SKEPTIC_SUFFIXES)]}"


def bears_on(sentence: str, claim: Mapping[str, object]) -> bool:
    """True when ``sentence`` shares at least ``BEARING_TERMS`` content terms with the claim and
    its quote (a refutation must be about the claim, not a general order or remark)."""
    about = set(terms(f"{claim.get('claim', '')} {claim.get('quote', '')}"))
    return len(set(terms(sentence or "")) & about) >= BEARING_TERMS


def always(_kind: str, _site: str) -> bool:
    return True


def _voter_hits(
    question: str, voter: int, searcher: WebSearch, budget: VoterBudget
) -> list[HitRecord]:
    """The voter's search results, its searches' queries written by code."""
    hits: list[HitRecord] = []
    for n in range(budget.searches):
        try:
            found = searcher.search(voter_query(question, voter + n), max_results=budget.results)
            hits += [h.as_dict() for h in found]
        except Exception:  # noqa: BLE001 (a flaky provider leaves the voter without evidence)
            continue
    return hits


def gather_counter_evidence(
    question: str, claim: ClaimRecord, voter: int, searcher: WebSearch | None,
    fetcher: Fetch | None,
    budget: VoterBudget, withheld_urls: frozenset[str] = frozenset(),
    known_urls: frozenset[str] | None = None,
    reserve: Callable[[str, str], bool] = always,
) -> tuple[list[ReadPage], list[WithheldRead]]:  # fmt: skip
    """``(read, withheld)``: the pages the voter read (url, title, text shown) and what the
    untrusted-content screening kept from it.

    Candidates are the voter's search results minus the claim's own site, the sites that
    corroborate it and pages withheld in the run (``withheld_urls``, normalised).
    ``reserve(kind, site)`` (``kind`` is ``"site"`` or ``"new"``) lets the voters of one claim
    share what they took: a site one voter took is not read by another, and only one voter may
    read a page not in ``known_urls`` (the run's read sources; None: every page counts as
    known). Provider failures cost the evidence only."""
    read: list[ReadPage] = []
    withheld: list[WithheldRead] = []
    if searcher is None or budget.searches <= 0:
        return read, withheld
    hits, dropped = screen_hits(_voter_hits(question, voter, searcher, budget))
    withheld += dropped
    own = str(claim.get("sourceUrl") or "")
    excluded_sites = {site_of(own), *claim.get("corroboratedBy", ())}
    seen = {norm_url(own)} | set(withheld_urls)
    focus = f"{claim.get('claim', '')} {claim.get('quote', '')}"
    for h in hits[: max(0, budget.results) * max(1, budget.searches)]:
        if len(read) >= budget.fetches or fetcher is None:
            break
        url = str(h.get("url") or "")
        key, site = norm_url(url), site_of(url)
        if not key or key in seen or site in excluded_sites:
            continue
        seen.add(key)
        new = known_urls is not None and key not in known_urls
        if new and not reserve("new", ""):
            continue
        if not reserve("site", site):
            continue
        try:
            page = fetcher.fetch(url)
        except Exception:  # noqa: BLE001
            continue
        if not getattr(page, "ok", False) or not page.text.strip():
            continue
        verdict = page_verdict(
            page.title, page.text, str((page.meta or {}).get("hidden_text") or "")
        )
        if verdict is not None:
            withheld.append({"url": url, "reason": verdict["reason"]})
            continue
        shown = select_passages(page.text, focus, budget.page_chars)
        read.append({"url": url, "title": page.title or h.get("title", ""), "text": shown})
    return read, withheld


def evidence_block(read: list[ReadPage]) -> str:
    if not read:
        return "(no counter-evidence page read within the voter's budget)"
    parts = []
    for i, item in enumerate(read, 1):
        body = f"Title: {item.get('title', '')}\nPage text: {item.get('text', '')}"
        parts.append(f"[S{i}] {item['url']}\n" + armor(body, source_label=item["url"]))
    return "\n\n".join(parts)


def verify_prompt(
    question: str,
    claim: ClaimRecord,
    v: int,
    votes_per_claim: int,
    refutations_required: int,
    read: list[ReadPage] | None = None,
) -> str:
    fenced_claim = armor(
        'Claim: "' + claim["claim"] + '"\n'
        'Supporting quote: "' + claim["quote"] + '"\n'
        "Publish date: " + str(claim.get("publishDate") or "unknown"),
        source_label=claim["sourceUrl"],
    )
    return research_prompt(
        "verify",
        voter=v + 1,
        votes=votes_per_claim,
        required=refutations_required,
        question=question,
        claim=fenced_claim,
        source=claim["sourceUrl"],
        quality=claim["sourceQuality"],
        evidence=evidence_block(read or []),
    )


def check_vote(
    verdict: VerdictRecord, claim: ClaimRecord, read: list[ReadPage]
) -> tuple[VoteStatus | Literal["rejected"], str | None]:
    """``(status, why)``: ``support`` or ``refute`` when the vote rests on a usable source, else
    ``uncertain`` with the reason. A usable source is a page the voter read or the claim's own
    source, and the quoted sentence is in the text the voter was shown (for the claim's own
    source, its verified quote); a sentence from another page must bear on the claim, and a
    refutation resting on one must quote a contradiction that carries no instruction
    (``refute.refutation_problem``), else it is ``rejected``."""
    shown = {norm_url(item["url"]): item["text"] for item in read}
    own = norm_url(str(claim.get("sourceUrl") or ""))
    shown.setdefault(own, str(claim.get("quote") or ""))
    cited = norm_url(str(verdict.get("counterSource") or ""))
    quote = str(verdict.get("sourceQuote") or "")
    if not cited:
        return "uncertain", "names no source"
    if cited not in shown:
        return "uncertain", "cites a source it did not read"
    # A refutation resting on a page the voter read is the page's doing when it does not hold:
    # rejected (the voter votes again without that page), never counted as uncertain.
    on_page = cited != own and bool(verdict["refuted"])
    if not quote_in_text(quote, shown[cited]):
        if on_page:
            return "rejected", "its quoted sentence is not in the page it cites"
        return "uncertain", "its quoted sentence is not in the source it cites"
    if cited != own and not bears_on(quote, claim):
        if on_page:
            return "rejected", "its quoted sentence does not bear on the claim"
        return "uncertain", "its quoted sentence does not bear on the claim"
    if on_page:
        problem = refutation_problem(quote, claim)
        if problem:
            return "rejected", problem
    return ("refute" if verdict["refuted"] else "support"), None


def run_vote(
    question: str,
    claim: ClaimRecord,
    voter: int,
    backend: ResearchBackend,
    *,
    votes_per_claim: int,
    refutations_required: int,
    searcher: WebSearch | None = None,
    fetcher: Fetch | None = None,
    budget: VoterBudget | None = None,
    withheld_urls: frozenset[str] = frozenset(),
    known_urls: frozenset[str] | None = None,
    reserve: Callable[[str, str], bool] = always,
) -> VoteRecord:
    """``{"claim_id", "voter", "status", "verdict", "read", "withheld"}``. ``status`` is
    ``support``, ``refute``, ``uncertain`` (``uncertainWhy`` says why; the verdict is marked
    ``uncertain`` for the tally) or ``failed`` (no valid answer; ``verdict`` is None)."""
    read, withheld = gather_counter_evidence(
        question, claim, voter, searcher, fetcher, budget or VoterBudget(), withheld_urls,
        known_urls, reserve,
    )  # fmt: skip
    vote: VoteRecord = {
        "claim_id": claim["id"],
        "voter": voter,
        "verdict": None,
        "read": [item["url"] for item in read],
        "withheld": withheld,
    }
    verdict = _ask(backend, question, claim, voter, votes_per_claim, refutations_required, read)
    status, why = check_vote(verdict, claim, read) if verdict is not None else ("failed", None)
    if status == "rejected" and verdict is not None:
        # Not a refutation: the voter votes again without the page it rested on.
        vote["rejected"] = {
            "source": verdict.get("counterSource"),
            "quote": verdict.get("sourceQuote"),
            "why": str(why),
        }
        dropped = norm_url(str(verdict.get("counterSource") or ""))
        read = [item for item in read if norm_url(item["url"]) != dropped]
        verdict = _ask(backend, question, claim, voter, votes_per_claim, refutations_required, read)
        status, why = check_vote(verdict, claim, read) if verdict is not None else ("failed", None)
        if status == "rejected":
            status = "uncertain"  # a second refutation that does not hold: uncertain
    vote["verdict"] = verdict
    if verdict is None:
        vote["status"] = "failed"
        return vote
    assert status != "rejected"
    vote["status"] = status
    _settle(vote, verdict, why)
    return vote


def _settle(vote: VoteRecord, verdict: VerdictRecord, why: str | None) -> None:
    """A vote that stands: a counter-source the voter did not read dropped, an uncertain
    verdict marked with why, else the site the vote rests on."""
    cited = norm_url(str(verdict.get("counterSource") or ""))
    if cited and why == "cites a source it did not read":
        # model output never chooses a URL: a source the voter did not read is dropped
        vote["counterSourceDropped"] = verdict["counterSource"]
        verdict["counterSource"] = None
    if why:
        verdict["uncertain"] = True
        vote["uncertainWhy"] = why
    else:
        vote["site"] = site_of(str(verdict["counterSource"]))


def _ask(
    backend: ResearchBackend,
    question: str,
    claim: ClaimRecord,
    voter: int,
    votes_per_claim: int,
    refutations_required: int,
    read: list[ReadPage],
) -> VerdictRecord | None:
    """One voter's verdict on what it read, or None when the model gave no valid answer."""
    prompt = verify_prompt(question, claim, voter, votes_per_claim, refutations_required, read)
    answer = backend.run(prompt, Verdict, label=f"v{voter}:{claim['id']}")
    if answer is None:
        return None
    return {
        "refuted": answer.refuted,
        "evidence": answer.evidence,
        "confidence": answer.confidence,
        "counterSource": answer.counterSource,
        "sourceQuote": answer.sourceQuote,
    }


def make_verify(deps: ResearchDeps) -> ConfiguredStep[VerifyTask, ResearchState]:
    lim = deps.limits

    def verify(state: VerifyTask, config: RunnableConfig) -> ResearchState:
        backend = run_backend(deps, config)
        # the voter's query is code: the question and a skeptical suffix
        out = Sending.for_run(deps, config, state["question"], code_words=SKEPTIC_SUFFIXES)
        searcher, fetcher = out.searcher, out.fetcher
        sh = run_shared(state["run_token"], config, lim)
        claim_id = state["claim"]["id"]

        def reserve(kind: str, site: str) -> bool:
            return sh.claim_site(claim_id, f"{kind}:{site}", state["voter"])

        known = state.get("known")
        with sh.limiter:
            vote = run_vote(
                state["question"],
                state["claim"],
                state["voter"],
                backend,
                votes_per_claim=lim.votes_per_claim,
                refutations_required=lim.refutations_required,
                searcher=searcher,
                fetcher=fetcher,
                budget=lim.voter,
                withheld_urls=frozenset(state.get("withheld") or ()),
                known_urls=None if known is None else frozenset(known),
                reserve=reserve,
            )
        emit("verify", claim=vote["claim_id"], voter=vote["voter"], status=vote["status"])
        calls = 2 if vote.get("rejected") else 1
        update: ResearchState = {"votes": [vote], "model_calls": calls}
        return out.added_to(update)

    return verify

"""Rules of ranking and voting that no other test pins down by their values: the per-page claim
cap, voters reading away from the claim's corroborating sites, and a vote's sentence from another
page that must bear on its claim (``BEARING_TERMS``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from refgate.nodes.research.core import PAGE_CLAIM_CAP, rank_claims
from refgate.nodes.research.state import ClaimRecord, ReadPage, VerdictRecord
from refgate.nodes.research.verify import (
    BEARING_TERMS,
    VoterBudget,
    check_vote,
    gather_counter_evidence,
)
from refgate.tools.web_providers import Page, SearchHit

TOPICS = ("bridge", "harbour", "railway", "airport", "canal", "tunnel")


def claim(text: str, url: str, quote: str = "") -> ClaimRecord:
    return {
        "claim": text,
        "quote": quote or text,
        "importance": "high",
        "sourceUrl": url,
        "sourceTitle": "t",
        "sourceQuality": "high",
        "publishDate": None,
        "angle": "a",
    }


def test_one_page_with_six_claims_sends_four_and_cuts_two():
    assert PAGE_CLAIM_CAP == 4
    claims = [
        claim(f"The {t} opened in {1990 + i} with {10 + i} lanes.", "https://one.example/p")
        for i, t in enumerate(TOPICS)
    ]
    verified, cut = rank_claims(claims)
    assert len(verified) == 4 and len(cut) == 2
    assert all(c["cutReason"] == "page cap (4 claims per page)" for c in cut)


@dataclass
class Web:
    """A search that returns fixed hits and a fetch that records what it read."""

    hits: list[str]
    name: str = "fixed"
    fetched: list[str] = field(default_factory=list)

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]:
        return [SearchHit(url=u, title="page") for u in self.hits][:max_results]

    def fetch(self, url: str) -> Page:
        self.fetched.append(url)
        return Page(url=url, title="page", text="The tunnel opened in 1994 after delays.")


def test_voters_read_neither_the_claims_own_site_nor_the_sites_that_corroborate_it():
    c = claim("The tunnel opened in 1994.", "https://own.example/a")
    c["corroboratedBy"] = ["ally.example"]
    web = Web(["https://own.example/b", "https://ally.example/c", "https://other.example/d"])
    read, _ = gather_counter_evidence(
        "When did the tunnel open?", c, 0, web, web, VoterBudget(results=3, fetches=3)
    )
    assert web.fetched == ["https://other.example/d"]
    assert [p["url"] for p in read] == ["https://other.example/d"]


def _vote(url: str, quote: str, *, refuted: bool) -> VerdictRecord:
    return {
        "refuted": refuted,
        "evidence": "e",
        "confidence": "high",
        "counterSource": url,
        "sourceQuote": quote,
    }


def test_a_quoted_sentence_must_share_enough_terms_with_the_claim():
    assert BEARING_TERMS == 3
    c = claim(
        "The Aurora rail tunnel opened to passengers in 1994.",
        "https://own.example/a",
        quote="The Aurora rail tunnel opened to passengers in 1994.",
    )
    two = "Aurora tunnel traffic statistics are published yearly."  # aurora, tunnel
    three = "The Aurora rail tunnel carried its first passengers in 1994."  # 4 shared terms
    url = "https://other.example/x"
    read: list[ReadPage] = [{"url": url, "title": "x", "text": f"{two} {three}"}]
    off_topic = "its quoted sentence does not bear on the claim"
    # a vote resting on another page's sentence counts only when that sentence bears on the claim
    assert check_vote(_vote(url, two, refuted=False), c, read) == ("uncertain", off_topic)
    assert check_vote(_vote(url, three, refuted=False), c, read) == ("support", None)
    # a refutation that does not bear is the page's doing: rejected, the voter votes again
    assert check_vote(_vote(url, two, refuted=True), c, read) == ("rejected", off_topic)

"""The deterministic core of deep research: pure functions, no model, no network.

The research design's semantics (URL normalisation, dedup across angles, the fetch budget, the
synthesis blocks, the stats block and its ``agentCalls`` formula), with two rules of our own:

- **Ranking by code** (``rank_claims``): no source fills the verification budget. Each page sends
  at most ``PAGE_CLAIM_CAP`` claims and each site (``site_of``) at most ``DOMAIN_CLAIM_CAP``; sites
  take turns (round-robin: every site's best claim before any site's second); the best claim of
  each group of claims that independent sites corroborate (``corroboration``) goes first and its
  copies last; the extractor's importance and quality ratings only break ties. Claims past the cut are returned
  with the reason, never dropped silently.
- **The tally** (``tally``) is the design's: a vote with no usable source counts as uncertain,
  uncertain counts as refuted, and two of three (refuting or uncertain) kill a claim. A voter that
  gave no answer at all casts no vote; too few votes leave the claim ``unverified``.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from refgate.lexical import terms
from refgate.nodes.research.state import (
    ClaimRecord,
    Outcome,
    PickedResult,
    SourceRecord,
    TalliedClaim,
    TallyRecord,
    VerdictRecord,
)
from refgate.text import split_sentences
from refgate.tools.urls import host_of, norm_url

#: The research pipeline's constants.
VOTES_PER_CLAIM = 3
REFUTATIONS_REQUIRED = 2
MAX_FETCH = 15
MAX_VERIFY_CLAIMS = 25
CONCURRENCY = 10

#: Most claims one page, and one site, may send to verification (ranking by code).
PAGE_CLAIM_CAP = 4
DOMAIN_CLAIM_CAP = 8
#: Two claims corroborate each other when their quotes (page text, not the model's words) share
#: this share of the shorter quote's content terms, and at least ``CORROBORATION_MIN_TERMS``.
CORROBORATION_OVERLAP = 0.6
CORROBORATION_MIN_TERMS = 4

REL_RANK = {"high": 0, "medium": 1, "low": 2}
IMP_RANK = {"central": 0, "supporting": 1, "tangential": 2}
QUAL_RANK = {"primary": 0, "secondary": 1, "blog": 2, "forum": 3, "unreliable": 4}
CONF_RANK = {"high": 0, "medium": 1, "low": 2}

OUTCOMES = ("survives", "refuted", "unverified")


@dataclass(frozen=True)
class VoterBudget:
    """How much one voter may read: searches, results considered per search, pages read."""

    searches: int = 1
    results: int = 3
    fetches: int = 1
    page_chars: int = 2_000


@dataclass(frozen=True)
class ResearchLimits:
    """The knobs of one research run (the research pipeline's constants by default)."""

    votes_per_claim: int = VOTES_PER_CLAIM
    refutations_required: int = REFUTATIONS_REQUIRED
    max_fetch: int = MAX_FETCH
    max_verify_claims: int = MAX_VERIFY_CLAIMS
    max_concurrency: int = CONCURRENCY
    #: Most claims one page, and one site, send to verification (ranking by code).
    page_claim_cap: int = PAGE_CLAIM_CAP
    site_claim_cap: int = DOMAIN_CLAIM_CAP
    #: Characters of page text given to the extractor (most question-relevant passages first).
    page_chars: int = 12_000
    #: Results asked of the search provider per angle.
    results_per_angle: int = 8
    #: Extra queries an angle may try when its results are empty or none is picked.
    search_refinements: int = 1
    #: Each voter's counter-evidence budget: searches, results kept, pages fetched and read.
    voter: VoterBudget = VoterBudget()


class Deduper:
    """Dedup across angles plus the fetch budget (the research pipeline's second stage).

    Results of one angle are taken best relevance first. A URL already taken (by normalised form)
    is a dupe. Once the budget is spent, ``medium`` and ``low`` results are dropped; ``high`` still
    passes (the budget can go negative). Calls are serialised by a lock, so angles running in
    parallel threads can share one deduper.
    """

    def __init__(self, max_fetch: int = MAX_FETCH) -> None:
        self.seen: dict[str, dict[str, str]] = {}
        self.dupes: list[dict[str, object]] = []
        self.budget_dropped: list[dict[str, object]] = []
        self.fetch_slots = max_fetch
        self._lock = threading.Lock()

    def filter_novel(self, angle: str, results: Sequence[PickedResult]) -> list[PickedResult]:
        """The results of ``angle`` to fetch (the research pipeline's novelty filter)."""
        return self.filter(angle, results)[0]

    def filter(
        self, angle: str, results: Sequence[PickedResult]
    ) -> tuple[list[PickedResult], list[dict[str, object]], list[dict[str, object]]]:
        """``(novel, dupes, budget_dropped)`` for this call; the totals accumulate on self."""
        ordered = sorted(results, key=lambda r: REL_RANK.get(r.get("relevance", "low"), 2))
        novel: list[PickedResult] = []
        dupes: list[dict[str, object]] = []
        dropped: list[dict[str, object]] = []
        with self._lock:
            for r in ordered:
                key = norm_url(r["url"])
                rank = REL_RANK.get(r.get("relevance", "low"), 2)
                if key in self.seen:
                    dupes.append({**r, "angle": angle, "dupOf": self.seen[key]})
                    continue
                if self.fetch_slots <= 0 and rank >= 1:
                    dropped.append({**r, "angle": angle})
                    continue
                self.seen[key] = {"angle": angle, "title": r.get("title", "")}
                self.fetch_slots -= 1
                novel.append(r.copy())
            self.dupes.extend(dupes)
            self.budget_dropped.extend(dropped)
        return novel, dupes, dropped


def dedup_sources(
    sources: Iterable[SourceRecord],
) -> tuple[list[SourceRecord], list[SourceRecord]]:
    """Keep the first source per normalised URL (a safety net after a resumed run)."""
    kept: dict[str, SourceRecord] = {}
    dropped: list[SourceRecord] = []
    for s in sources:
        key = norm_url(s["url"])
        if key in kept:
            dropped.append(s.copy())
        else:
            kept[key] = s.copy()
    return list(kept.values()), dropped


_NUMBER_TOKEN = re.compile(r"\d+(?:[.,/-]\d+)*")
_SECOND_LEVEL = {"co", "com", "ac", "gov", "org", "net", "edu", "or", "ne", "go"}


def site_of(url: str) -> str:
    """The site a URL belongs to, for independence: its host's registrable part
    (``news.example.com`` -> ``example.com``, ``a.b.co.uk`` -> ``b.co.uk``)."""
    labels = host_of(url).split(".")
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def _rating(c: ClaimRecord) -> tuple[int, int]:
    """The extractor's own ratings: a tie-break only."""
    return (
        IMP_RANK.get(c.get("importance", "tangential"), 2),
        QUAL_RANK.get(c.get("sourceQuality", "unreliable"), 4),
    )


def corroboration(claims: Sequence[Mapping[str, object]]) -> list[int]:
    """Each claim's group: claims of different sites whose quotes say the same thing (the same
    numbers, most of their content terms) are joined (transitively); a claim no other site corroborates is alone in its group. Returns the group
    number of each claim (the index of its first member)."""
    quote_terms = [set(terms(str(c.get("quote") or ""))) for c in claims]
    # quotes that differ in a number say different things, however many words they share
    numbers = [set(_NUMBER_TOKEN.findall(str(c.get("quote") or ""))) for c in claims]
    sites = [site_of(str(c.get("sourceUrl") or "")) for c in claims]
    parent = list(range(len(claims)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(claims)):
        for j in range(i + 1, len(claims)):
            if sites[i] == sites[j] or numbers[i] != numbers[j]:
                continue
            a, b = quote_terms[i], quote_terms[j]
            shared = len(a & b)
            if shared >= CORROBORATION_MIN_TERMS and shared >= CORROBORATION_OVERLAP * min(
                len(a), len(b)
            ):
                ri, rj = root(i), root(j)
                parent[max(ri, rj)] = min(ri, rj)
    return [root(i) for i in range(len(claims))]


def _mark_sites(items: list[ClaimRecord], groups: Sequence[int]) -> None:
    """Give each claim its ``site`` and ``corroboratedBy`` (its group's other sites)."""
    members: dict[int, set[str]] = {}
    for c, g in zip(items, groups, strict=True):
        c["site"] = site_of(str(c.get("sourceUrl") or ""))
        members.setdefault(g, set()).add(c["site"])
    for c, g in zip(items, groups, strict=True):
        c["corroboratedBy"] = sorted(members[g] - {c["site"]})


def _within_caps(
    items: list[ClaimRecord], order: Sequence[int], page_cap: int, domain_cap: int
) -> tuple[dict[int, int], list[ClaimRecord]]:
    """``(rounds, cut)``: each claim within the page and site caps with its site's turn (its
    claims before it), in ``order``; the others, each with its ``cutReason``."""
    rounds: dict[int, int] = {}
    per_page: Counter[str] = Counter()
    per_site: Counter[str] = Counter()
    cut: list[ClaimRecord] = []
    for i in order:
        c = items[i]
        page = norm_url(str(c.get("sourceUrl") or ""))
        if per_page[page] >= page_cap:
            cut.append({**c, "cutReason": f"page cap ({page_cap} claims per page)"})
            continue
        if per_site[c["site"]] >= domain_cap:
            cut.append({**c, "cutReason": f"site cap ({domain_cap} claims per site)"})
            continue
        rounds[i] = per_site[c["site"]]
        per_page[page] += 1
        per_site[c["site"]] += 1
    return rounds, cut


def rank_claims(
    claims: Sequence[ClaimRecord],
    max_verify: int = MAX_VERIFY_CLAIMS,
    *,
    page_cap: int = PAGE_CLAIM_CAP,
    domain_cap: int = DOMAIN_CLAIM_CAP,
) -> tuple[list[ClaimRecord], list[ClaimRecord]]:
    """``(verified, cut)``: the claims sent to verification, in order, and the rest, each with
    ``cutReason``. Every claim carries ``corroboratedBy`` (the other sites whose claims say the
    same thing) and ``site``.

    Order: the best claim of each corroborated group first; then the distinct claims, sites
    taking turns (each site's k-th claim before any site's k+1-th); then the copies (the other
    members of a corroborated group, already verified through its first); within each, the
    extractor's importance and quality ratings, then extraction order. A page past ``page_cap`` or a site past
    ``domain_cap`` sends no more claims.
    """
    items = [c.copy() for c in claims]
    groups = corroboration(items)
    _mark_sites(items, groups)
    order = sorted(
        range(len(items)), key=lambda i: (-bool(items[i]["corroboratedBy"]), _rating(items[i]), i)
    )
    rounds, cut = _within_caps(items, order, page_cap, domain_cap)
    first_of_group: dict[int, int] = {}
    for i in sorted(rounds, key=lambda i: (rounds[i], _rating(items[i]), i)):
        if items[i]["corroboratedBy"]:
            first_of_group.setdefault(groups[i], i)
    boosted = set(first_of_group.values())

    def key(i: int) -> tuple[int, int, int, tuple[int, int], int]:
        # a copy (a corroborated claim whose group is already verified) after distinct claims
        copy = bool(items[i]["corroboratedBy"]) and i not in boosted
        return (i not in boosted, copy, rounds[i], _rating(items[i]), i)

    ranked = sorted(rounds, key=key)
    verified = [items[i] for i in ranked[:max_verify]]
    cut += [
        {**items[i], "cutReason": f"past the {max_verify} claims verified"}
        for i in ranked[max_verify:]
    ]
    return verified, cut


def _as_verdict(v: object) -> VerdictRecord | None:
    """A verdict as a dict, or None for a failed voter (also for a verdict without a boolean)."""
    if v is None:
        return None
    if hasattr(v, "model_dump"):
        v = v.model_dump()
    if not isinstance(v, Mapping) or not isinstance(v.get("refuted"), bool):
        return None
    # a verdict as the voter recorded it (``schemas.Verdict``), its boolean checked above
    return cast(VerdictRecord, dict(v))


def tally(
    verdicts: Sequence[object],
    *,
    votes_per_claim: int = VOTES_PER_CLAIM,
    refutations_required: int = REFUTATIONS_REQUIRED,
) -> TallyRecord:
    """Count one claim's votes; ``None`` is a voter that failed (cast no vote).

    A verdict marked ``uncertain`` (its vote had no usable source) counts as uncertain, and
    uncertain counts as refuted (the design: "default to refuted when uncertain").

    - ``refuted``: at least ``refutations_required`` votes refute it or are uncertain;
    - ``survives``: fewer, and at least ``refutations_required`` votes were cast;
    - ``unverified``: too few votes were cast to decide, because verifiers failed.
    """
    valid = [d for d in (_as_verdict(v) for v in verdicts) if d is not None]
    uncertain = sum(1 for v in valid if v.get("uncertain"))
    refuted = sum(1 for v in valid if v["refuted"] and not v.get("uncertain"))
    support = len(valid) - refuted - uncertain
    against = refuted + uncertain
    abstained = max(0, votes_per_claim - len(valid))
    outcome: Outcome
    if against >= refutations_required:
        outcome = "refuted"
    elif len(valid) >= refutations_required:
        outcome = "survives"
    else:
        outcome = "unverified"
    return {
        "outcome": outcome,
        "survives": outcome == "survives",
        "valid": valid,
        "refutedVotes": against,
        "uncertainVotes": uncertain,
        "supportVotes": support,
        "abstained": abstained,
        "vote": f"{support}-{against}",
    }


def vote_str(claim: Mapping[str, object]) -> str:
    """``"<support>-<refute>"`` for a tallied claim."""
    return f"{claim['supportVotes']}-{claim['refutedVotes']}"


def build_synth_blocks(
    confirmed: Sequence[TalliedClaim], killed: Sequence[TalliedClaim]
) -> tuple[str, str]:
    """The research pipeline's synthesis ``block`` (confirmed claims, numbered) and ``killedBlock``."""
    parts = []
    for i, c in enumerate(confirmed):
        support = [v for v in c["valid"] if not v["refuted"] and not v.get("uncertain")] or list(
            c["valid"]
        )
        best = sorted(support, key=lambda v: CONF_RANK.get(v.get("confidence", "low"), 2))
        best_v: Mapping[str, object] = best[0] if best else {"confidence": "low", "evidence": ""}
        parts.append(
            f"### [{i}] {c['claim']}\n"
            f"Vote: {vote_str(c)} · Source: {c['sourceUrl']} ({c['sourceQuality']})\n"
            f'Quote: "{c["quote"]}"\n'
            f"Verifier evidence ({best_v.get('confidence', 'low')}): {best_v.get('evidence', '')}\n"
        )
    block = "\n".join(parts)
    if killed:
        killed_block = "\n## Refuted claims (for transparency)\n" + "\n".join(
            f'- "{c["claim"]}" ({c["sourceUrl"]}, vote {vote_str(c)})' for c in killed
        )
    else:
        killed_block = ""
    return block, killed_block


def build_stats(
    *,
    angles: int,
    sources: int,
    claims: int,
    voted: int,
    confirmed: int,
    killed: int,
    after_synth: int,
    dupes: int,
    budget_dropped: int,
    votes_per_claim: int = VOTES_PER_CLAIM,
    unverified: int = 0,
) -> dict[str, int]:
    """The research pipeline's stats block; ``agentCalls = 1 + angles + sources + voted * votes + 1``."""
    return {
        "angles": angles,
        "sourcesFetched": sources,
        "claimsExtracted": claims,
        "claimsVerified": voted,
        "confirmed": confirmed,
        "killed": killed,
        "unverified": unverified,
        "afterSynthesis": after_synth,
        "urlDupes": dupes,
        "budgetDropped": budget_dropped,
        "agentCalls": 1 + angles + sources + (voted * votes_per_claim) + 1,
    }


_WS = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def _squash(text: str) -> str:
    return _WS.sub(" ", (text or "").translate(_QUOTES)).strip().lower()


def quote_in_text(quote: str, text: str) -> bool:
    """True when ``quote`` occurs in ``text`` (case, whitespace and curly quotes ignored).

    A quote with leading/trailing ellipses or outer quotation marks still matches; an empty quote
    never does.
    """
    q = _squash(quote).strip(" \"'.…")
    if len(q) < 8:
        return False
    body = _squash(text)
    if q in body:
        return True
    # "part one ... part two": every part must occur, in order.
    parts = [p.strip(" \"'.") for p in re.split(r"\.\.\.|…", q) if p.strip(" \"'.")]
    if len(parts) < 2:
        return False
    pos = 0
    for p in parts:
        idx = body.find(p, pos)
        if idx < 0:
            return False
        pos = idx + len(p)
    return True


def select_passages(text: str, query: str, max_chars: int) -> str:
    """The page text if it fits, else the sentences that best match ``query`` in page order.

    Each chosen sentence brings its neighbours, so quotes keep their context; gaps are marked
    with `` [...] ``.
    """
    if len(text) <= max_chars:
        return text
    sentences = split_sentences(text)
    qterms = set(terms(query))
    scored = sorted(
        range(len(sentences)),
        key=lambda i: -sum(1 for t in terms(sentences[i]) if t in qterms),
    )
    chosen: set[int] = set()
    used = 0
    for i in scored:
        for j in (i - 1, i, i + 1):
            if 0 <= j < len(sentences) and j not in chosen:
                if used + len(sentences[j]) + 1 > max_chars:
                    continue
                chosen.add(j)
                used += len(sentences[j]) + 1
        if used >= max_chars * 0.95:
            break
    out: list[str] = []
    prev = -2
    for i in sorted(chosen):
        if prev >= 0 and i != prev + 1:
            out.append("[...]")
        out.append(sentences[i])
        prev = i
    return " ".join(out)

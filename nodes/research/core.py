"""The deterministic core of deep research: pure functions, no model, no network.

Seed 001's semantics (URL normalisation, dedup across angles, the fetch budget, ranking, the
synthesis blocks, the stats block and its ``agentCalls`` formula) with one change: the vote tally
has three outcomes (``survives``, ``refuted``, ``unverified``), so a claim whose verifiers failed is
reported as unverified instead of refuted.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from refgate.lexical import terms
from refgate.text import split_sentences
from refgate.urls import norm_url

#: Seed 001's constants.
VOTES_PER_CLAIM = 3
REFUTATIONS_REQUIRED = 2
MAX_FETCH = 15
MAX_VERIFY_CLAIMS = 25
CONCURRENCY = 10

REL_RANK = {"high": 0, "medium": 1, "low": 2}
IMP_RANK = {"central": 0, "supporting": 1, "tangential": 2}
QUAL_RANK = {"primary": 0, "secondary": 1, "blog": 2, "forum": 3, "unreliable": 4}
CONF_RANK = {"high": 0, "medium": 1, "low": 2}

OUTCOMES = ("survives", "refuted", "unverified")


@dataclass(frozen=True)
class ResearchLimits:
    """The knobs of one research run (seed 001's constants by default)."""

    votes_per_claim: int = VOTES_PER_CLAIM
    refutations_required: int = REFUTATIONS_REQUIRED
    max_fetch: int = MAX_FETCH
    max_verify_claims: int = MAX_VERIFY_CLAIMS
    max_concurrency: int = CONCURRENCY
    #: Characters of page text given to the extractor (most question-relevant passages first).
    page_chars: int = 12_000
    #: Results asked of the search provider per angle.
    results_per_angle: int = 8
    #: Extra queries an angle may try when its results are empty or none is picked.
    search_refinements: int = 1
    #: Each voter's counter-evidence budget: searches, results kept, pages fetched.
    voter_searches: int = 1
    voter_results: int = 3
    voter_fetches: int = 1


class Deduper:
    """Dedup across angles plus the fetch budget (seed 001's pipeline stage 2).

    Results of one angle are taken best relevance first. A URL already taken (by normalised form)
    is a dupe. Once the budget is spent, ``medium`` and ``low`` results are dropped; ``high`` still
    passes (the budget can go negative). Calls are serialised by a lock, so angles running in
    parallel threads can share one deduper.
    """

    def __init__(self, max_fetch: int = MAX_FETCH) -> None:
        self.seen: dict[str, dict[str, Any]] = {}
        self.dupes: list[dict[str, Any]] = []
        self.budget_dropped: list[dict[str, Any]] = []
        self.fetch_slots = max_fetch
        self._lock = threading.Lock()

    def filter_novel(self, angle: str, results: Sequence[Mapping[str, Any]]) -> list[dict]:
        """The results of ``angle`` to fetch (seed 001's ``filterNovel``)."""
        return self.filter(angle, results)[0]

    def filter(
        self, angle: str, results: Sequence[Mapping[str, Any]]
    ) -> tuple[list[dict], list[dict], list[dict]]:
        """``(novel, dupes, budget_dropped)`` for this call; the totals accumulate on self."""
        ordered = sorted(results, key=lambda r: REL_RANK.get(r.get("relevance", "low"), 2))
        novel: list[dict[str, Any]] = []
        dupes: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
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
                novel.append(dict(r))
            self.dupes.extend(dupes)
            self.budget_dropped.extend(dropped)
        return novel, dupes, dropped


def dedup_sources(sources: Iterable[Mapping[str, Any]]) -> tuple[list[dict], list[dict]]:
    """Keep the first source per normalised URL (a safety net after a resumed run)."""
    kept: dict[str, dict[str, Any]] = {}
    dropped: list[dict[str, Any]] = []
    for s in sources:
        key = norm_url(s["url"])
        if key in kept:
            dropped.append(dict(s))
        else:
            kept[key] = dict(s)
    return list(kept.values()), dropped


def rank_claims(claims: Sequence[Mapping[str, Any]], max_verify: int = MAX_VERIFY_CLAIMS) -> list:
    """Order claims by importance, then source quality (stable), and keep the first ``max_verify``."""
    return sorted(
        claims,
        key=lambda c: (
            IMP_RANK.get(c.get("importance", "tangential"), 2),
            QUAL_RANK.get(c.get("sourceQuality", "unreliable"), 4),
        ),
    )[:max_verify]


def _as_verdict(v: Any) -> dict[str, Any] | None:
    """A verdict as a dict, or None for a failed voter (also for a verdict without a boolean)."""
    if v is None:
        return None
    if hasattr(v, "model_dump"):
        v = v.model_dump()
    if not isinstance(v, Mapping) or not isinstance(v.get("refuted"), bool):
        return None
    return dict(v)


def tally(
    verdicts: Sequence[Any],
    *,
    votes_per_claim: int = VOTES_PER_CLAIM,
    refutations_required: int = REFUTATIONS_REQUIRED,
) -> dict[str, Any]:
    """Count one claim's votes; ``None`` is a voter that failed (abstained).

    - ``refuted``: at least ``refutations_required`` valid votes refute it;
    - ``survives``: fewer refutations, and at least ``refutations_required`` valid votes;
    - ``unverified``: too few valid votes to decide, because verifiers failed.
    """
    valid = [d for d in (_as_verdict(v) for v in verdicts) if d is not None]
    refuted = sum(1 for v in valid if v["refuted"])
    abstained = max(0, votes_per_claim - len(valid))
    if refuted >= refutations_required:
        outcome = "refuted"
    elif len(valid) >= refutations_required:
        outcome = "survives"
    else:
        outcome = "unverified"
    return {
        "outcome": outcome,
        "survives": outcome == "survives",
        "valid": valid,
        "refutedVotes": refuted,
        "supportVotes": len(valid) - refuted,
        "abstained": abstained,
        "vote": f"{len(valid) - refuted}-{refuted}",
    }


def vote_str(claim: Mapping[str, Any]) -> str:
    """``"<support>-<refute>"`` for a tallied claim."""
    return f"{len(claim['valid']) - claim['refutedVotes']}-{claim['refutedVotes']}"


def build_synth_blocks(
    confirmed: Sequence[Mapping[str, Any]], killed: Sequence[Mapping[str, Any]]
) -> tuple[str, str]:
    """Seed 001's synthesis ``block`` (confirmed claims, numbered) and ``killedBlock``."""
    parts = []
    for i, c in enumerate(confirmed):
        support = [v for v in c["valid"] if not v["refuted"]] or list(c["valid"])
        best = sorted(support, key=lambda v: CONF_RANK.get(v.get("confidence", "low"), 2))
        best_v = best[0] if best else {"confidence": "low", "evidence": ""}
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
    """Seed 001's stats block; ``agentCalls = 1 + angles + sources + voted * votes + 1``."""
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

"""Step 4, verify (one per claim and voter): a skeptical voter tries to refute one claim.

Each voter first looks for counter-evidence within a small budget (``VoterBudget``: searches and
fetches through the run's own providers, with the search step's untrusted-content handling:
results and pages screened, withheld ones never shown, everything read shown inside a nonce
fence). The query is written by code from the user's question and a per-voter skeptical suffix,
never from page text. The vote records what the voter read; a refutation counts only when it
cites a source the voter read (or the claim's own source, for a quote that does not support the
claim): a refutation without one is an abstention.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from refgate.nodes.research.common import emit, research_prompt, run_shared
from refgate.nodes.research.deps import ResearchDeps, run_backend, run_web
from refgate.nodes.research.inspect import page_verdict, screen_hits
from refgate.nodes.research.schemas import Verdict
from refgate.provenance import armor
from refgate.urls import norm_url

#: What each voter adds to the question when it searches (voter i uses entry i mod len).
SKEPTIC_SUFFIXES = ("criticism", "contradicting evidence", "correction")


@dataclass(frozen=True)
class VoterBudget:
    """How much one voter may read: searches, results kept per search, pages fetched."""

    searches: int = 1
    results: int = 3
    fetches: int = 1
    page_chars: int = 2_000


def voter_query(question: str, voter: int) -> str:
    """The voter's search query: the user's question (trusted) and a skeptical suffix."""
    return f"{question.strip()} {SKEPTIC_SUFFIXES[voter % len(SKEPTIC_SUFFIXES)]}"


def gather_counter_evidence(
    question: str, claim: dict[str, Any], voter: int, searcher: Any, fetcher: Any,
    budget: VoterBudget, withheld_urls: frozenset[str] = frozenset(),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """``(read, withheld)``: what the voter read (url, title, snippet, text of fetched pages) and
    what the untrusted-content screening kept from it. A page withheld earlier in the run
    (``withheld_urls``, normalised) or withheld when the voter fetches it is not shown at all,
    not even its snippet, and cannot be cited. Provider failures cost the evidence only."""
    read: list[dict[str, Any]] = []
    withheld: list[dict[str, Any]] = []
    own = norm_url(str(claim.get("sourceUrl") or ""))
    if searcher is None or budget.searches <= 0:
        return read, withheld
    hits: list[dict[str, Any]] = []
    for n in range(budget.searches):
        try:
            found = searcher.search(voter_query(question, voter + n), max_results=budget.results)
            hits += [h.as_dict() if hasattr(h, "as_dict") else dict(h) for h in found]
        except Exception:  # noqa: BLE001 (a flaky provider leaves the voter without evidence)
            continue
    hits, dropped = screen_hits(hits)
    withheld += dropped
    seen = {own} | set(withheld_urls)
    for h in hits:
        key = norm_url(str(h.get("url") or ""))
        if not key or key in seen:
            continue
        seen.add(key)
        read.append({"url": h["url"], "title": h.get("title", ""), "snippet": h.get("snippet", "")})
        if len(read) >= budget.results:
            break
    for item in read[: max(0, budget.fetches)] if fetcher is not None else []:
        try:
            page = fetcher.fetch(item["url"])
        except Exception:  # noqa: BLE001
            continue
        if not getattr(page, "ok", False) or not page.text.strip():
            continue
        verdict = page_verdict(
            page.title, page.text, str((page.meta or {}).get("hidden_text") or "")
        )
        if verdict is not None:
            withheld.append({"url": item["url"], "reason": verdict["reason"]})
            item["withheld"] = True
            continue
        item["text"] = page.text[: budget.page_chars]
    return [item for item in read if not item.get("withheld")], withheld


def evidence_block(read: list[dict[str, Any]]) -> str:
    if not read:
        return "(no counter-evidence found within the voter's search budget)"
    parts = []
    for i, item in enumerate(read, 1):
        body = f"Title: {item.get('title', '')}\nSnippet: {item.get('snippet', '')}"
        if item.get("text"):
            body += "\nPage text: " + item["text"]
        parts.append(f"[S{i}] {item['url']}\n" + armor(body, source_label=item["url"]))
    return "\n\n".join(parts)


def verify_prompt(
    question: str,
    claim: dict[str, Any],
    v: int,
    votes_per_claim: int,
    refutations_required: int,
    read: list[dict[str, Any]] | None = None,
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


def run_vote(
    question: str,
    claim: dict[str, Any],
    voter: int,
    backend: Any,
    *,
    votes_per_claim: int,
    refutations_required: int,
    searcher: Any = None,
    fetcher: Any = None,
    budget: VoterBudget | None = None,
    withheld_urls: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``{"claim_id", "voter", "verdict", "read", "withheld"}``; ``verdict`` is None when the
    voter failed or refuted without citing a source it read (``abstained`` says why)."""
    read, withheld = gather_counter_evidence(
        question, claim, voter, searcher, fetcher, budget or VoterBudget(), withheld_urls
    )
    prompt = verify_prompt(question, claim, voter, votes_per_claim, refutations_required, read)
    answer = backend.run(prompt, Verdict, label=f"v{voter}:{claim['id']}")
    verdict = answer.model_dump() if answer is not None else None
    vote: dict[str, Any] = {
        "claim_id": claim["id"],
        "voter": voter,
        "verdict": verdict,
        "read": [item["url"] for item in read],
        "withheld": withheld,
    }
    allowed = {norm_url(u) for u in vote["read"]} | {norm_url(str(claim.get("sourceUrl")))}
    cited = norm_url(str((verdict or {}).get("counterSource") or ""))
    if verdict is not None and cited and cited not in allowed:
        # model output never chooses a URL: a counter-source the voter did not read is dropped
        vote["counterSourceDropped"] = verdict["counterSource"]
        verdict["counterSource"] = None
        cited = ""
    if verdict is not None and verdict.get("refuted") and not cited:
        vote["abstained"] = "refuted without citing a source it read"
        vote["uncounted"] = verdict
        vote["verdict"] = None
    return vote


def make_verify(deps: ResearchDeps) -> Callable[[dict[str, Any], RunnableConfig], dict[str, Any]]:
    lim = deps.limits
    budget = VoterBudget(
        searches=lim.voter_searches, results=lim.voter_results, fetches=lim.voter_fetches
    )

    def verify(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        backend = run_backend(deps, config)
        searcher, fetcher = run_web(deps, config)
        with run_shared(state["run_token"], config, lim).limiter:
            vote = run_vote(
                state["question"],
                state["claim"],
                state["voter"],
                backend,
                votes_per_claim=lim.votes_per_claim,
                refutations_required=lim.refutations_required,
                searcher=searcher,
                fetcher=fetcher,
                budget=budget,
                withheld_urls=frozenset(state.get("withheld") or ()),
            )
        verdict = vote["verdict"]
        emit(
            "verify",
            claim=vote["claim_id"],
            voter=vote["voter"],
            refuted=None if verdict is None else verdict["refuted"],
        )
        return {"votes": [vote], "model_calls": 1}

    return verify

"""Step 5, synthesize: merge duplicate confirmed claims into findings with a confidence each, an
executive summary, caveats and open questions. Every finding's sources are then checked against
the pages retrieved in this run."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.runnables import RunnableConfig

from refgate.gate.numbers import find_numbers
from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.common import emit, research_prompt, run_shared
from refgate.nodes.research.core import build_synth_blocks
from refgate.nodes.research.deps import ResearchDeps, run_backend
from refgate.nodes.research.schemas import Report
from refgate.nodes.research.state import (
    FindingRecord,
    ResearchState,
    SourceRecord,
    SynthesisRecord,
    TalliedClaim,
)
from refgate.nodes.state import ConfiguredStep
from refgate.provenance import armor
from refgate.tools.urls import norm_url


def synth_prompt(
    question: str, block: str, killed_block: str, confirmed_count: int, votes_per_claim: int
) -> str:
    return research_prompt(
        "synthesize",
        question=question,
        confirmed_count=confirmed_count,
        votes=votes_per_claim,
        block=block,
        killed_block=killed_block,
    )


def run_synthesis(
    question: str,
    confirmed: Sequence[TalliedClaim],
    killed: Sequence[TalliedClaim],
    backend: ResearchBackend,
    *,
    votes_per_claim: int,
) -> Report | None:
    block, killed_block = build_synth_blocks(confirmed, killed)
    fenced = armor(block, source_label="claims extracted from retrieved web pages")
    fenced_killed = (
        armor(killed_block, source_label="refuted claims from retrieved web pages")
        if killed_block
        else ""
    )
    prompt = synth_prompt(question, fenced, fenced_killed, len(confirmed), votes_per_claim)
    return backend.run(prompt, Report, label="synthesize")


def unquoted_numbers(text: str, quotes: list[str]) -> list[str]:
    """The numbers ``text`` states that none of ``quotes`` states (same value as shown, or
    with its scale word applied): a number the synthesis wrote that no verified quote holds."""
    held: set[float] = set()
    for q in quotes:
        for n in find_numbers(q):
            held.update((n.shown, n.shown * n.scale))
    out: list[str] = []
    for n in find_numbers(text):
        if n.shown not in held and n.shown * n.scale not in held and n.text not in out:
            out.append(n.text.strip())
    return out


def ground_findings(
    report: Report, confirmed: Sequence[TalliedClaim], retrieved: dict[str, str]
) -> tuple[list[FindingRecord], list[str]]:
    """Findings whose sources are all pages retrieved in this run.

    ``retrieved`` maps ``norm_url`` to the URL as fetched. A finding's sources are the URLs of
    the confirmed claims it names plus any URL it lists that was retrieved; URLs never retrieved
    are removed, and a finding left with no source is dropped. Returns ``(findings, notes)``.
    """
    findings: list[FindingRecord] = []
    notes: list[str] = []
    for f in report.findings:
        idx = [i for i in f.claims if 0 <= i < len(confirmed)]
        urls: list[str] = []
        for i in idx:
            u = retrieved.get(norm_url(confirmed[i]["sourceUrl"]))
            if u and u not in urls:
                urls.append(u)
        for s in f.sources:
            u = retrieved.get(norm_url(s))
            if u is None:
                notes.append(f"removed a cited URL that was never retrieved: {s}")
            elif u not in urls:
                urls.append(u)
        if not urls:
            notes.append(f"dropped a finding that cited no retrieved page: {f.claim[:120]}")
            continue
        if not idx:
            idx = [
                i
                for i, c in enumerate(confirmed)
                if norm_url(c["sourceUrl"]) in {norm_url(u) for u in urls}
            ]
        # Numbers are the synthesis's own words: each must be in a verified quote of its claims,
        # else the finding is marked (web numbers are secondary and never cross-checked here).
        unquoted = unquoted_numbers(f"{f.claim} {f.evidence}", [confirmed[i]["quote"] for i in idx])
        if unquoted:
            notes.append(
                f"a finding states numbers no quote of its claims holds ({', '.join(unquoted)}): "
                f"{f.claim[:120]}"
            )
        findings.append(
            {
                "claim": f.claim,
                "confidence": f.confidence,
                "sources": urls,
                "evidence": f.evidence,
                "claims": [confirmed[i]["id"] for i in idx],
                "unquotedNumbers": unquoted,
            }
        )
    return findings, notes


def _retrieved(sources: Sequence[SourceRecord]) -> dict[str, str]:
    """The pages the run read (normalised URL -> URL): a finding may cite only these."""
    retrieved: dict[str, str] = {}
    for s in sources:
        # a withheld page was fetched but never read: it supports no finding
        if s.get("fetched") and not s.get("withheld"):
            retrieved.setdefault(norm_url(s["url"]), s["url"])
    return retrieved


def _synthesis_record(result: Report, confirmed: Sequence[TalliedClaim]) -> SynthesisRecord:
    """The synthesis as plain data, with the summary's numbers no verified quote holds."""
    return {
        "summary": result.summary,
        "findings": [
            {
                "claim": f.claim,
                "confidence": f.confidence,
                "sources": list(f.sources),
                "evidence": f.evidence,
                "claims": list(f.claims),
                "vote": f.vote,
            }
            for f in result.findings
        ],
        "caveats": result.caveats,
        "openQuestions": None if result.openQuestions is None else list(result.openQuestions),
        "summaryUnquotedNumbers": unquoted_numbers(result.summary, [c["quote"] for c in confirmed]),
    }


def make_synthesize(
    deps: ResearchDeps,
) -> ConfiguredStep[ResearchState, ResearchState]:
    lim = deps.limits

    def synthesize(state: ResearchState, config: RunnableConfig) -> ResearchState:
        tallied = state.get("tallied", [])
        confirmed = [c for c in tallied if c["outcome"] == "survives"]
        refuted = [c for c in tallied if c["outcome"] == "refuted"]
        emit("synthesize", status="started", confirmed=len(confirmed))
        backend = run_backend(deps, config)
        with run_shared(state["run_token"], config, lim).limiter:
            result = run_synthesis(
                state["question"], confirmed, refuted, backend, votes_per_claim=lim.votes_per_claim
            )
        if result is None:
            emit("synthesize", status="failed")
            return {
                "status": "synthesis_failed",
                "model_calls": 1,
                "notes": ["synthesis failed: the confirmed claims are listed unmerged"],
            }
        retrieved = _retrieved(state.get("sources", []))
        findings, notes = ground_findings(result, confirmed, retrieved)
        synthesis = _synthesis_record(result, confirmed)
        if synthesis["summaryUnquotedNumbers"]:
            notes.append(
                "the summary states numbers no verified quote holds: "
                + ", ".join(synthesis["summaryUnquotedNumbers"])
            )
        emit("synthesize", status="done", findings=len(findings))
        return {
            "synthesis": synthesis,
            "findings": findings,
            "notes": notes,
            "status": "complete",
            "model_calls": 1,
        }

    return synthesize

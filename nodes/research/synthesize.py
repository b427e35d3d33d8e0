"""Step 5, synthesize: merge duplicate confirmed claims into findings with a confidence each, an
executive summary, caveats and open questions. Every finding's sources are then checked against
the pages retrieved in this run."""

from __future__ import annotations

from typing import Any

from refgate.nodes.gate.numbers import find_numbers
from refgate.nodes.research.core import build_synth_blocks
from refgate.nodes.research.schemas import Report
from refgate.provenance import armor
from refgate.urls import norm_url


def synth_prompt(
    question: str, block: str, killed_block: str, confirmed_count: int, votes_per_claim: int
) -> str:
    return (
        "## Synthesis: research report\n\n"
        "**Question:** "
        + question
        + "\n\n"
        + str(confirmed_count)
        + " claims survived "
        + str(votes_per_claim)
        + "-vote adversarial verification. Merge semantic duplicates and synthesize.\n\n"
        "## Confirmed claims\n" + block + "\n" + killed_block + "\n\n"
        "## Instructions\n"
        "1. Identify claims that say the same thing — merge them, combine their sources.\n"
        "2. Group related claims into coherent findings. Each finding should directly address "
        "the research question. List in `claims` the numbers [i] of the confirmed claims it "
        "rests on, and in `sources` only URLs of those claims.\n"
        "3. Assign confidence per finding: high (multiple primary sources, unanimous votes), "
        "medium (secondary sources or split votes), low (single source or blog-quality).\n"
        "4. Write a 3-5 sentence executive summary answering the research question.\n"
        "5. Note caveats: what's uncertain, what sources were weak, what time-sensitivity "
        "applies.\n"
        "6. List 2-4 open questions that emerged but weren't answered.\n\n"
        "Structured output only."
    )


def run_synthesis(
    question: str,
    confirmed: list[dict[str, Any]],
    killed: list[dict[str, Any]],
    backend: Any,
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
    report: Report, confirmed: list[dict[str, Any]], retrieved: dict[str, str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Findings whose sources are all pages retrieved in this run.

    ``retrieved`` maps ``norm_url`` to the URL as fetched. A finding's sources are the URLs of
    the confirmed claims it names plus any URL it lists that was retrieved; URLs never retrieved
    are removed, and a finding left with no source is dropped. Returns ``(findings, notes)``.
    """
    findings: list[dict[str, Any]] = []
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

"""Step 4, verify (one per claim and voter): a skeptical voter tries to refute one claim."""

from __future__ import annotations

from typing import Any

from refgate.nodes.research.schemas import Verdict
from refgate.provenance import armor


def verify_prompt(
    question: str, claim: dict[str, Any], v: int, votes_per_claim: int, refutations_required: int
) -> str:
    evidence = armor(
        'Claim: "' + claim["claim"] + '"\n'
        'Supporting quote: "' + claim["quote"] + '"\n'
        "Publish date: " + str(claim.get("publishDate") or "unknown"),
        source_label=claim["sourceUrl"],
    )
    return (
        "## Adversarial Claim Verifier (voter " + str(v + 1) + "/" + str(votes_per_claim) + ")\n\n"
        "Be SKEPTICAL. Try to REFUTE this claim. ≥"
        + str(refutations_required)
        + "/"
        + str(votes_per_claim)
        + " refutations kill it.\n\n"
        "## Research question\n" + question + "\n\n"
        "## Claim under review\n" + evidence + "\n\n"
        "**Source:** " + claim["sourceUrl"] + " (" + claim["sourceQuality"] + ")\n\n"
        "## Checklist\n"
        "1. Is the claim actually supported by the quote, or is it an overreach/misread?\n"
        "2. Do you know of contradicting evidence — does any credible source dispute or heavily "
        "qualify this?\n"
        "3. Is the source quality sufficient for the claim's strength? (extraordinary claims "
        "need primary sources)\n"
        "4. Is the claim outdated? (check dates — old claims about fast-moving fields are "
        "suspect)\n"
        "5. Is this a marketing claim / press release / cherry-picked benchmark / forum "
        "speculation?\n\n"
        "**refuted=true** if: unsupported by quote / contradicted / low-quality source for "
        "strong claim / outdated / marketing fluff.\n"
        "**refuted=false** ONLY if: claim is well-supported, current, and source quality matches "
        "claim strength.\n"
        "Default to refuted=true if uncertain.\n\nStructured output only. Evidence MUST be "
        "specific."
    )


def run_vote(
    question: str,
    claim: dict[str, Any],
    voter: int,
    backend: Any,
    *,
    votes_per_claim: int,
    refutations_required: int,
) -> dict[str, Any]:
    """``{"claim_id", "voter", "verdict"}``; ``verdict`` is None when the voter failed."""
    prompt = verify_prompt(question, claim, voter, votes_per_claim, refutations_required)
    answer = backend.run(prompt, Verdict, label=f"v{voter}:{claim['id']}")
    return {
        "claim_id": claim["id"],
        "voter": voter,
        "verdict": answer.model_dump() if answer is not None else None,
    }

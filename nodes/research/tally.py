"""Tally (once every vote is in): each claim's votes counted into an outcome (``core.tally``:
uncertain counts as refuted), with the votes as cast and the independent sites that support it.
Refutations of one uncorroborated voice do not count against a claim independent sites confirm,
and a claim whose fate rests on one site says which (``refute``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from refgate.nodes.research.common import emit
from refgate.nodes.research.core import site_of, tally
from refgate.nodes.research.deps import ResearchDeps
from refgate.nodes.research.refute import copied_voices, fate_site, overrule_single_voice
from refgate.nodes.research.state import (
    Ballot,
    ClaimRecord,
    ResearchState,
    TalliedClaim,
    VoteRecord,
)
from refgate.nodes.state import Step


def ballot(vote: VoteRecord, overruled: str | None = None) -> Ballot:
    """One vote as the report shows it: status, why uncertain, source and sentence, what it
    read, a refutation rejected before it, and why it was overruled."""
    verdict = vote.get("verdict")
    out: Ballot = {
        "voter": vote["voter"] + 1,
        "status": vote.get("status") or ("failed" if not verdict else "uncertain"),
        "why": vote.get("uncertainWhy"),
        "source": verdict.get("counterSource") if verdict else None,
        "quote": verdict.get("sourceQuote") if verdict else None,
        "evidence": verdict.get("evidence") if verdict else None,
        "read": list(vote.get("read") or []),
    }
    if vote.get("rejected"):
        out["rejected"] = vote["rejected"]
    if overruled:
        out["overruled"] = overruled
    return out


#: Why a single voice's refutation does not count (``refute.overrule_single_voice``).
OVERRULED = (
    "refutes on a page no independent site corroborates, against a claim independent sites "
    "confirm: it cannot refute the claim by itself"
)


COPIED = "repeats a sentence another voter quoted from another page: copies are one voice"


def support_sites(claim: ClaimRecord, cast: Sequence[VoteRecord]) -> list[str]:
    """The independent sites that support a claim: its own, those whose claims corroborate it,
    and those a supporting vote rests on (a usable source, its sentence checked)."""
    sites = {site_of(str(claim.get("sourceUrl") or "")), *claim.get("corroboratedBy", ())}
    sites |= {v["site"] for v in cast if v.get("status") == "support" and v.get("site")}
    return sorted(sites)


def make_tally(deps: ResearchDeps) -> Step[ResearchState, ResearchState]:
    lim = deps.limits

    def tally_votes(state: ResearchState) -> ResearchState:
        by_claim: dict[str, dict[int, VoteRecord]] = {}
        for vote in state.get("votes", []):
            by_claim.setdefault(vote["claim_id"], {})[vote["voter"]] = vote
        tallied: list[TalliedClaim] = []
        for claim in state.get("claims", []):
            cast = [v for _, v in sorted(by_claim.get(claim["id"], {}).items())]
            sites = support_sites(claim, cast)
            overruled = dict.fromkeys(overrule_single_voice(claim, cast, sites), OVERRULED)
            for voter in copied_voices(claim, cast):
                overruled.setdefault(voter, COPIED)
            result = tally(
                [None if v["voter"] in overruled else v["verdict"] for v in cast],
                votes_per_claim=lim.votes_per_claim,
                refutations_required=lim.refutations_required,
            )
            tallied.append(
                {
                    **claim,
                    **result,
                    "ballots": [ballot(v, overruled.get(v["voter"])) for v in cast],
                    "supportSites": sites,
                    "fateRestsOn": fate_site(result["outcome"], claim, cast, sites),
                }
            )
        counts = {
            o: sum(1 for c in tallied if c["outcome"] == o)
            for o in ("survives", "refuted", "unverified")
        }
        emit("tally", **counts)
        update: ResearchState = {"tallied": tallied}
        if not counts["survives"]:
            update["status"] = "none_confirmed"
        return update

    return tally_votes


def after_tally(state: ResearchState) -> Literal["synthesize", "report"]:
    return "report" if state.get("status") else "synthesize"

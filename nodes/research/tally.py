"""Tally (once every vote is in): each claim's votes counted into an outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from refgate.nodes.research.common import emit
from refgate.nodes.research.core import tally
from refgate.nodes.research.deps import ResearchDeps
from refgate.nodes.research.state import ResearchState


def make_tally(deps: ResearchDeps) -> Callable[[ResearchState], dict[str, Any]]:
    lim = deps.limits

    def tally_votes(state: ResearchState) -> dict[str, Any]:
        by_claim: dict[str, dict[int, Any]] = {}
        for vote in state.get("votes", []):
            by_claim.setdefault(vote["claim_id"], {})[vote["voter"]] = vote["verdict"]
        tallied = []
        for claim in state.get("claims", []):
            verdicts = list(by_claim.get(claim["id"], {}).values())
            result = tally(
                verdicts,
                votes_per_claim=lim.votes_per_claim,
                refutations_required=lim.refutations_required,
            )
            tallied.append({**claim, **result})
        counts = {
            o: sum(1 for c in tallied if c["outcome"] == o)
            for o in ("survives", "refuted", "unverified")
        }
        emit("tally", **counts)
        update: dict[str, Any] = {"tallied": tallied}
        if not counts["survives"]:
            update["status"] = "none_confirmed"
        return update

    return tally_votes


def after_tally(state: ResearchState) -> Literal["synthesize", "report"]:
    return "report" if state.get("status") else "synthesize"

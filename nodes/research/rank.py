"""Rank (once every angle is done): the claims of all sources ranked by code
(``core.rank_claims``: per-page and per-site caps, sites taking turns, corroborated claims first,
the extractor's ratings only as tie-breaks), the first ``max_verify_claims`` sent to every voter;
the rest kept in ``cut_claims`` for the report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langgraph.types import Send

from refgate.nodes.research.common import emit
from refgate.nodes.research.core import dedup_sources, rank_claims
from refgate.nodes.research.deps import ResearchDeps
from refgate.nodes.research.state import ClaimRecord, ResearchState, VerifyTask
from refgate.nodes.state import Step
from refgate.tools.urls import norm_url


def make_rank(deps: ResearchDeps) -> Step[ResearchState, ResearchState]:
    def rank(state: ResearchState) -> ResearchState:
        sources, _ = dedup_sources(state.get("sources", []))
        all_claims = [c for s in sources for c in s["claims"]]
        lim = deps.limits
        verified, cut = rank_claims(
            all_claims,
            lim.max_verify_claims,
            page_cap=lim.page_claim_cap,
            domain_cap=lim.site_claim_cap,
        )
        ranked: list[ClaimRecord] = [{**c, "id": f"c{i}"} for i, c in enumerate(verified)]
        update: ResearchState = {
            "claims": ranked,
            "claims_extracted": len(all_claims),
            "cut_claims": cut,
        }
        if not ranked:
            update["status"] = "no_sources" if not sources else "no_claims"
        emit("rank", claims=len(all_claims), verifying=len(ranked), cut=len(cut))
        return update

    return rank


def make_after_rank(
    deps: ResearchDeps,
) -> Callable[[ResearchState], list[Send] | Literal["report"]]:
    def after_rank(state: ResearchState) -> list[Send] | Literal["report"]:
        if state.get("status"):
            return "report"
        # pages withheld anywhere in the run are never shown to a voter (B5: not read again)
        withheld = sorted(
            {norm_url(s["url"]) for s in state.get("sources", []) if s.get("withheld")}
            | {
                norm_url(h["url"])
                for rec in state.get("searches", [])
                for h in rec.get("withheldHits") or []
            }
        )
        # the pages the research read: a claim's voters may read at most one page beyond them
        known = sorted(
            {
                norm_url(s["url"])
                for s in state.get("sources", [])
                if s.get("fetched") and not s.get("withheld")
            }
        )
        tasks: list[VerifyTask] = [
            {
                "question": state["question"],
                "run_token": state["run_token"],
                "claim": c,
                "voter": v,
                "withheld": withheld,
                "known": known,
            }
            for c in state["claims"]
            for v in range(deps.limits.votes_per_claim)
        ]
        return [Send("verify", task) for task in tasks]

    return after_rank

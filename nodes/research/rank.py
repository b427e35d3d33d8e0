"""Rank (once every angle is done): the claims of all sources, ranked, the first
``max_verify_claims`` sent to verification, each to every voter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langgraph.types import Send

from refgate.nodes.research.common import emit
from refgate.nodes.research.core import dedup_sources, rank_claims
from refgate.nodes.research.deps import ResearchDeps
from refgate.nodes.research.state import ResearchState
from refgate.urls import norm_url


def make_rank(deps: ResearchDeps) -> Callable[[ResearchState], dict[str, Any]]:
    def rank(state: ResearchState) -> dict[str, Any]:
        sources, _ = dedup_sources(state.get("sources", []))
        all_claims = [c for s in sources for c in s["claims"]]
        ranked = [
            {**c, "id": f"c{i}"}
            for i, c in enumerate(rank_claims(all_claims, deps.limits.max_verify_claims))
        ]
        update: dict[str, Any] = {"claims": ranked, "claims_extracted": len(all_claims)}
        if not ranked:
            update["status"] = "no_sources" if not sources else "no_claims"
        emit("rank", claims=len(all_claims), verifying=len(ranked))
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
        return [
            Send(
                "verify",
                {
                    "question": state["question"],
                    "run_token": state["run_token"],
                    "claim": c,
                    "voter": v,
                    "withheld": withheld,
                },
            )
            for c in state["claims"]
            for v in range(deps.limits.votes_per_claim)
        ]

    return after_rank

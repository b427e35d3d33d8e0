"""The deep-research steps: one method per node of the graph ``refgate.graph.research`` assembles.

Each step reads its slice of the state, calls the step logic (``scope``, ``search``, ``extract``,
``verify``, ``synthesize``, ``report``) under the run-wide call limiter, emits a progress event
and returns its update; the routers (``after_*``) fan out with ``Send``.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.types import Send

from refgate.nodes.research.common import RunShared, emit, release, shared
from refgate.nodes.research.core import ResearchLimits, dedup_sources, rank_claims, tally
from refgate.nodes.research.deps import ResearchDeps
from refgate.nodes.research.extract import run_extract
from refgate.nodes.research.inspect import screen_hits
from refgate.nodes.research.report import build_report, to_markdown
from refgate.nodes.research.scope import run_scope
from refgate.nodes.research.search import refinements, run_search
from refgate.nodes.research.state import AngleState, ResearchState
from refgate.nodes.research.synthesize import ground_findings, run_synthesis, unquoted_numbers
from refgate.nodes.research.verify import VoterBudget, run_vote
from refgate.urls import norm_url


class ResearchSteps:
    """The nodes and routers of one compiled research graph, sharing its deps and limits."""

    def __init__(self, deps: ResearchDeps, limits: ResearchLimits) -> None:
        self.deps = deps
        self.lim = limits

    def _shared(self, token: str, config: RunnableConfig) -> RunShared:
        cap = config.get("max_concurrency") or self.lim.max_concurrency
        return shared(token, max_fetch=self.lim.max_fetch, max_concurrency=cap)

    # ----------------------------------------------------------------- scope
    def scope(self, state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
        question = (state.get("question") or "").strip()
        token = state.get("run_token") or uuid.uuid4().hex
        if not question:
            emit("scope", status="empty_question")
            return {"question": question, "run_token": token, "status": "empty_question"}
        emit("scope", status="started", question=question)
        # The workspace a client named passes the served allowlist check before anything runs.
        self.deps.workspace_for(config)
        backend_ = self.deps.backend(config)
        with self._shared(token, config).limiter:
            result = run_scope(question, backend_)
        if result is None:
            emit("scope", status="failed")
            return {
                "question": question,
                "run_token": token,
                "status": "scope_failed",
                "model_calls": 1,
            }
        angles = [a.model_dump() for a in result.angles]
        emit("scope", status="done", angles=[a["label"] for a in angles])
        return {
            "question": question,
            "run_token": token,
            "scope": {"summary": result.summary, "angles": angles},
            "model_calls": 1,
        }

    def after_scope(self, state: ResearchState) -> list[Send] | Literal["report"]:
        if state.get("status"):
            return "report"
        return [
            Send(
                "angle",
                {"question": state["question"], "run_token": state["run_token"], "angle": a},
            )
            for a in state["scope"]["angles"]
        ]

    # ----------------------------------------------------------------- angle subgraph
    def search(self, state: AngleState, config: RunnableConfig) -> dict[str, Any]:
        angle = state["angle"]
        sh = self._shared(state["run_token"], config)
        searcher, _ = self.deps.web(config)
        backend_ = self.deps.backend(config)
        error = None
        with sh.limiter:
            try:
                hits = [
                    h.as_dict()
                    for h in searcher.search(angle["query"], max_results=self.lim.results_per_angle)
                ]
            except Exception as exc:  # a flaky search provider costs one angle, not the run
                hits, error = [], f"search failed: {type(exc).__name__}: {exc}"
            hits, withheld_hits = screen_hits(hits)
            picked, unknown, called = run_search(state["question"], angle, hits, backend_)
            # Bounded refinement: empty or off-topic results (none picked) -> the question itself.
            refined: list[str] = []
            calls = int(called)
            for query in refinements(state["question"], angle["query"])[
                : self.lim.search_refinements
            ]:
                if picked:
                    break
                refined.append(query)
                try:
                    more = [
                        h.as_dict()
                        for h in searcher.search(query, max_results=self.lim.results_per_angle)
                    ]
                except Exception as exc:  # noqa: BLE001
                    more, error = [], f"search failed: {type(exc).__name__}: {exc}"
                more, more_withheld = screen_hits(more)
                withheld_hits += more_withheld
                hits = hits + more
                picked, unknown, called = run_search(
                    state["question"], {**angle, "query": query}, more, backend_
                )
                calls += int(called)
        novel, dupes, dropped = sh.deduper.filter(angle["label"], picked)
        emit(
            "search",
            angle=angle["label"],
            results=len(hits),
            picked=len(picked),
            novel=len(novel),
        )
        record = {
            "angle": angle["label"],
            "query": angle["query"],
            "hits": len(hits),
            "picked": picked,
            "novel": novel,
            "dupes": len(dupes),
            "budgetDropped": len(dropped),
            "unretrieved": unknown,
            "withheldHits": withheld_hits,
            "refined": refined,
            "error": error,
        }
        return {"searches": [record], "model_calls": calls}

    def after_search(self, state: AngleState) -> list[Send] | Literal["__end__"]:
        novel = [s for rec in state.get("searches", []) for s in rec["novel"]]
        if not novel:
            return END
        return [
            Send(
                "fetch",
                {
                    "question": state["question"],
                    "run_token": state["run_token"],
                    "angle": state["angle"],
                    "source": s,
                },
            )
            for s in novel
        ]

    def fetch(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        source = state["source"]
        _, fetcher = self.deps.web(config)
        backend_ = self.deps.backend(config)
        with self._shared(state["run_token"], config).limiter:
            record = run_extract(
                state["question"],
                source,
                state["angle"]["label"],
                fetcher,
                backend_,
                page_chars=self.lim.page_chars,
            )
        emit(
            "fetch",
            url=record["url"],
            fetched=record["fetched"],
            claims=len(record["claims"]),
            error=record["error"],
            withheld=bool(record.get("withheld")),
        )
        called = record["fetched"] and not record.get("withheld")
        return {"sources": [record], "model_calls": int(called)}

    # ----------------------------------------------------------------- rank / verify / tally
    def rank(self, state: ResearchState) -> dict[str, Any]:
        sources, _ = dedup_sources(state.get("sources", []))
        all_claims = [c for s in sources for c in s["claims"]]
        ranked = [
            {**c, "id": f"c{i}"}
            for i, c in enumerate(rank_claims(all_claims, self.lim.max_verify_claims))
        ]
        update: dict[str, Any] = {"claims": ranked, "claims_extracted": len(all_claims)}
        if not ranked:
            update["status"] = "no_sources" if not sources else "no_claims"
        emit("rank", claims=len(all_claims), verifying=len(ranked))
        return update

    def after_rank(self, state: ResearchState) -> list[Send] | Literal["report"]:
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
            for v in range(self.lim.votes_per_claim)
        ]

    def verify(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        backend_ = self.deps.backend(config)
        searcher, fetcher = self.deps.web(config)
        budget = VoterBudget(
            searches=self.lim.voter_searches,
            results=self.lim.voter_results,
            fetches=self.lim.voter_fetches,
        )
        with self._shared(state["run_token"], config).limiter:
            vote = run_vote(
                state["question"],
                state["claim"],
                state["voter"],
                backend_,
                votes_per_claim=self.lim.votes_per_claim,
                refutations_required=self.lim.refutations_required,
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

    def tally_votes(self, state: ResearchState) -> dict[str, Any]:
        by_claim: dict[str, dict[int, Any]] = {}
        for vote in state.get("votes", []):
            by_claim.setdefault(vote["claim_id"], {})[vote["voter"]] = vote["verdict"]
        tallied = []
        for claim in state.get("claims", []):
            verdicts = list(by_claim.get(claim["id"], {}).values())
            result = tally(
                verdicts,
                votes_per_claim=self.lim.votes_per_claim,
                refutations_required=self.lim.refutations_required,
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

    def after_tally(self, state: ResearchState) -> Literal["synthesize", "report"]:
        return "report" if state.get("status") else "synthesize"

    # ----------------------------------------------------------------- synthesize / report
    def synthesize(self, state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
        tallied = state.get("tallied", [])
        confirmed = [c for c in tallied if c["outcome"] == "survives"]
        refuted = [c for c in tallied if c["outcome"] == "refuted"]
        emit("synthesize", status="started", confirmed=len(confirmed))
        backend_ = self.deps.backend(config)
        with self._shared(state["run_token"], config).limiter:
            result = run_synthesis(
                state["question"],
                confirmed,
                refuted,
                backend_,
                votes_per_claim=self.lim.votes_per_claim,
            )
        if result is None:
            emit("synthesize", status="failed")
            return {
                "status": "synthesis_failed",
                "model_calls": 1,
                "notes": ["synthesis failed: the confirmed claims are listed unmerged"],
            }
        retrieved: dict[str, str] = {}
        for s in state.get("sources", []):
            # a withheld page was fetched but never read: it supports no finding
            if s.get("fetched") and not s.get("withheld"):
                retrieved.setdefault(norm_url(s["url"]), s["url"])
        findings, notes = ground_findings(result, confirmed, retrieved)
        synthesis = result.model_dump()
        synthesis["summaryUnquotedNumbers"] = unquoted_numbers(
            result.summary, [c["quote"] for c in confirmed]
        )
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

    def report(self, state: ResearchState) -> dict[str, Any]:
        status = state.get("status") or "complete"
        searches = state.get("searches", [])
        sources, _ = dedup_sources(state.get("sources", []))
        doc = build_report(
            question=state.get("question", ""),
            status=status,
            scope=state.get("scope"),
            searches=searches,
            sources=sources,
            claims_extracted=state.get("claims_extracted", 0),
            tallied=state.get("tallied", []),
            synthesis=state.get("synthesis"),
            findings=state.get("findings", []),
            notes=state.get("notes", []),
            votes_per_claim=self.lim.votes_per_claim,
            model_calls=state.get("model_calls", 0),
            dupes=sum(s.get("dupes", 0) for s in searches),
            budget_dropped=sum(s.get("budgetDropped", 0) for s in searches),
        )
        if state.get("run_token"):
            release(state["run_token"])
        emit("report", status=status, findings=len(doc["findings"]))
        return {"report": doc, "markdown": to_markdown(doc), "status": status}

"""The deep-research graph (``deep_research`` in langgraph.json): scope -> search -> fetch ->
3-vote verify -> synthesize -> report.

Shape::

    scope --Send per angle--> angle[search --Send per source--> fetch] --> rank
          --Send per (claim, voter)--> verify --> tally --> synthesize --> report

Each angle runs as its own subgraph, so an angle's fetches start as soon as ITS search is done
(search -> fetch is a pipeline, no barrier across angles); ``rank`` runs once all angles are
done, so verification waits for every extraction. Concurrency is capped by ``max_concurrency``
(default 10) in the run config and, across the parallel angle subgraphs, by one run-wide limiter
of the same size around every agent call. With a checkpointer an interrupted run resumes from its
last checkpoint: finished branches are not called again.

Dependencies are resolved lazily at the first node call, so importing this module (and the
checkpointer-less module-level ``graph``) needs no key, no network and no heavy library.
``configurable`` may carry ``workspace`` (a folder) and ``backend`` (``chat``/``codex``/``agy``).
"""

from __future__ import annotations

import operator
import os
import threading
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from refgate.nodes.research.common import emit, release, shared
from refgate.nodes.research.core import (
    ResearchLimits,
    dedup_sources,
    norm_url,
    rank_claims,
    tally,
)
from refgate.nodes.research.extract import run_extract
from refgate.nodes.research.report import build_report, to_markdown
from refgate.nodes.research.scope import run_scope
from refgate.nodes.research.search import run_search
from refgate.nodes.research.synthesize import ground_findings, run_synthesis
from refgate.nodes.research.verify import run_vote

#: The model-factory pass name research uses (``REFGATE_MODEL_RESEARCH`` is not read; the default
#: model applies unless settings carry a ``research`` entry in ``pass_models``).
PASS_NAME = "research"


class ResearchInput(TypedDict):
    question: str


class ResearchState(TypedDict, total=False):
    question: str
    run_token: str
    status: str
    scope: dict[str, Any] | None
    searches: Annotated[list[dict[str, Any]], operator.add]
    sources: Annotated[list[dict[str, Any]], operator.add]
    claims: list[dict[str, Any]]
    claims_extracted: int
    votes: Annotated[list[dict[str, Any]], operator.add]
    tallied: list[dict[str, Any]]
    synthesis: dict[str, Any] | None
    findings: list[dict[str, Any]]
    notes: Annotated[list[str], operator.add]
    model_calls: Annotated[int, operator.add]
    report: dict[str, Any]
    markdown: str


class AngleState(TypedDict, total=False):
    question: str
    run_token: str
    angle: dict[str, Any]
    searches: Annotated[list[dict[str, Any]], operator.add]
    sources: Annotated[list[dict[str, Any]], operator.add]
    model_calls: Annotated[int, operator.add]


class AngleInput(TypedDict):
    question: str
    run_token: str
    angle: dict[str, Any]


class AngleOutput(TypedDict, total=False):
    searches: Annotated[list[dict[str, Any]], operator.add]
    sources: Annotated[list[dict[str, Any]], operator.add]
    model_calls: Annotated[int, operator.add]


class _Deps:
    """Backend and web providers for the run, from the factory arguments or resolved lazily."""

    def __init__(
        self,
        *,
        model: Any,
        provider: Any,
        backend: Any,
        web_search: Any,
        web_fetch: Any,
        settings: Any,
        workspace: Any,
    ) -> None:
        self.model = model
        self.provider = provider
        self.fixed_backend = backend
        self.web_search = web_search
        self.web_fetch = web_fetch
        self.settings = settings
        self.workspace = workspace
        self._lock = threading.Lock()
        self._cache: dict[Any, Any] = {}

    def _workspace(self, config: RunnableConfig) -> Any:
        if self.workspace is not None:
            return self.workspace
        where = (config.get("configurable") or {}).get("workspace") or os.environ.get(
            "REFGATE_WORKSPACE"
        )
        if not where:
            return None
        key = ("ws", str(where))
        with self._lock:
            if key not in self._cache:
                from refgate.workspace import load_workspace

                self._cache[key] = load_workspace(where)
            return self._cache[key]

    def backend(self, config: RunnableConfig) -> Any:
        if self.fixed_backend is not None:
            return self.fixed_backend
        from refgate.nodes.research.backends import ChatModelBackend, make_backend

        if self.model is not None:
            key: Any = ("backend", "model")
            with self._lock:
                if key not in self._cache:
                    self._cache[key] = ChatModelBackend(self.model)
                return self._cache[key]
        name = (config.get("configurable") or {}).get("backend") or "chat"
        ws = self._workspace(config)
        key = ("backend", name, getattr(ws, "root", None))
        with self._lock:
            if key not in self._cache:
                if name == "chat":
                    from refgate.config import load_settings
                    from refgate.models import ModelProvider

                    settings = self.settings or load_settings(
                        workspace_settings=getattr(ws, "settings", None)
                    )
                    provider = self.provider or ModelProvider()
                    self._cache[key] = ChatModelBackend(provider.for_pass(PASS_NAME, settings))
                else:
                    self._cache[key] = make_backend(name)
            return self._cache[key]

    def web(self, config: RunnableConfig) -> tuple[Any, Any]:
        if self.web_search is not None and self.web_fetch is not None:
            return self.web_search, self.web_fetch
        from refgate.tools.web_providers import default_providers

        ws = self._workspace(config)
        key = ("web", getattr(ws, "root", None))
        with self._lock:
            if key not in self._cache:
                self._cache[key] = default_providers(ws)
            search, fetch = self._cache[key]
        return self.web_search or search, self.web_fetch or fetch


def build_research_graph(
    *,
    model: Any = None,
    checkpointer: Any = None,
    provider: Any = None,
    backend: Any = None,
    web_search: Any = None,
    web_fetch: Any = None,
    settings: Any = None,
    workspace: Any = None,
    limits: ResearchLimits | None = None,
) -> Any:
    """Compile the deep-research graph.

    ``model`` (a LangChain chat model) or ``backend`` (a ``ResearchBackend``) answer the prompts;
    without either, the foundation's ``ModelProvider`` (``provider``) builds the model from
    ``settings`` on first use. ``web_search`` / ``web_fetch`` default to the workspace's offline
    snapshot (``workspace`` or ``configurable.workspace``).
    """
    lim = limits or ResearchLimits()
    deps = _Deps(
        model=model,
        provider=provider,
        backend=backend,
        web_search=web_search,
        web_fetch=web_fetch,
        settings=settings,
        workspace=workspace,
    )

    def _shared(token: str, config: RunnableConfig):
        cap = config.get("max_concurrency") or lim.max_concurrency
        return shared(token, max_fetch=lim.max_fetch, max_concurrency=cap)

    # ----------------------------------------------------------------- scope
    def scope(state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
        question = (state.get("question") or "").strip()
        token = state.get("run_token") or uuid.uuid4().hex
        if not question:
            emit("scope", status="empty_question")
            return {"question": question, "run_token": token, "status": "empty_question"}
        emit("scope", status="started", question=question)
        backend_ = deps.backend(config)
        with _shared(token, config).limiter:
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

    def after_scope(state: ResearchState) -> list[Send] | Literal["report"]:
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
    def search(state: AngleState, config: RunnableConfig) -> dict[str, Any]:
        angle = state["angle"]
        sh = _shared(state["run_token"], config)
        searcher, _ = deps.web(config)
        backend_ = deps.backend(config)
        error = None
        with sh.limiter:
            try:
                hits = [
                    h.as_dict()
                    for h in searcher.search(angle["query"], max_results=lim.results_per_angle)
                ]
            except Exception as exc:  # a flaky search provider costs one angle, not the run
                hits, error = [], f"search failed: {type(exc).__name__}: {exc}"
            picked, unknown, called = run_search(state["question"], angle, hits, backend_)
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
            "error": error,
        }
        return {"searches": [record], "model_calls": int(called)}

    def after_search(state: AngleState) -> list[Send] | Literal["__end__"]:
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

    def fetch(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        source = state["source"]
        _, fetcher = deps.web(config)
        backend_ = deps.backend(config)
        with _shared(state["run_token"], config).limiter:
            record = run_extract(
                state["question"],
                source,
                state["angle"]["label"],
                fetcher,
                backend_,
                page_chars=lim.page_chars,
            )
        emit(
            "fetch",
            url=record["url"],
            fetched=record["fetched"],
            claims=len(record["claims"]),
            error=record["error"],
        )
        return {"sources": [record], "model_calls": int(record["fetched"])}

    angle_builder = StateGraph(AngleState, input_schema=AngleInput, output_schema=AngleOutput)
    angle_builder.add_node("search", search)
    angle_builder.add_node("fetch", fetch)
    angle_builder.add_edge(START, "search")
    angle_builder.add_conditional_edges("search", after_search, ["fetch", END])
    angle_builder.add_edge("fetch", END)
    angle_graph = angle_builder.compile(name="research_angle")

    # ----------------------------------------------------------------- rank / verify / tally
    def rank(state: ResearchState) -> dict[str, Any]:
        sources, _ = dedup_sources(state.get("sources", []))
        all_claims = [c for s in sources for c in s["claims"]]
        ranked = [
            {**c, "id": f"c{i}"}
            for i, c in enumerate(rank_claims(all_claims, lim.max_verify_claims))
        ]
        update: dict[str, Any] = {"claims": ranked, "claims_extracted": len(all_claims)}
        if not ranked:
            update["status"] = "no_sources" if not sources else "no_claims"
        emit("rank", claims=len(all_claims), verifying=len(ranked))
        return update

    def after_rank(state: ResearchState) -> list[Send] | Literal["report"]:
        if state.get("status"):
            return "report"
        return [
            Send(
                "verify",
                {
                    "question": state["question"],
                    "run_token": state["run_token"],
                    "claim": c,
                    "voter": v,
                },
            )
            for c in state["claims"]
            for v in range(lim.votes_per_claim)
        ]

    def verify(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        backend_ = deps.backend(config)
        with _shared(state["run_token"], config).limiter:
            vote = run_vote(
                state["question"],
                state["claim"],
                state["voter"],
                backend_,
                votes_per_claim=lim.votes_per_claim,
                refutations_required=lim.refutations_required,
            )
        verdict = vote["verdict"]
        emit(
            "verify",
            claim=vote["claim_id"],
            voter=vote["voter"],
            refuted=None if verdict is None else verdict["refuted"],
        )
        return {"votes": [vote], "model_calls": 1}

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

    def after_tally(state: ResearchState) -> Literal["synthesize", "report"]:
        return "report" if state.get("status") else "synthesize"

    # ----------------------------------------------------------------- synthesize / report
    def synthesize(state: ResearchState, config: RunnableConfig) -> dict[str, Any]:
        tallied = state.get("tallied", [])
        confirmed = [c for c in tallied if c["outcome"] == "survives"]
        refuted = [c for c in tallied if c["outcome"] == "refuted"]
        emit("synthesize", status="started", confirmed=len(confirmed))
        backend_ = deps.backend(config)
        with _shared(state["run_token"], config).limiter:
            result = run_synthesis(
                state["question"],
                confirmed,
                refuted,
                backend_,
                votes_per_claim=lim.votes_per_claim,
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
            if s.get("fetched"):
                retrieved.setdefault(norm_url(s["url"]), s["url"])
        findings, notes = ground_findings(result, confirmed, retrieved)
        emit("synthesize", status="done", findings=len(findings))
        return {
            "synthesis": result.model_dump(),
            "findings": findings,
            "notes": notes,
            "status": "complete",
            "model_calls": 1,
        }

    def report(state: ResearchState) -> dict[str, Any]:
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
            votes_per_claim=lim.votes_per_claim,
            model_calls=state.get("model_calls", 0),
            dupes=sum(s.get("dupes", 0) for s in searches),
            budget_dropped=sum(s.get("budgetDropped", 0) for s in searches),
        )
        if state.get("run_token"):
            release(state["run_token"])
        emit("report", status=status, findings=len(doc["findings"]))
        return {"report": doc, "markdown": to_markdown(doc), "status": status}

    builder = StateGraph(ResearchState, input_schema=ResearchInput)
    builder.add_node("scope", scope)
    builder.add_node("angle", angle_graph)
    builder.add_node("rank", rank)
    builder.add_node("verify", verify)
    builder.add_node("tally", tally_votes)
    builder.add_node("synthesize", synthesize)
    builder.add_node("report", report)
    builder.add_edge(START, "scope")
    builder.add_conditional_edges("scope", after_scope, ["angle", "report"])
    builder.add_edge("angle", "rank")
    builder.add_conditional_edges("rank", after_rank, ["verify", "report"])
    builder.add_edge("verify", "tally")
    builder.add_conditional_edges("tally", after_tally, ["synthesize", "report"])
    builder.add_edge("synthesize", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer, name="deep_research")


def run_config(
    *, thread_id: str | None = None, max_concurrency: int | None = None, **configurable: Any
) -> RunnableConfig:
    """A run config with the concurrency cap (default 10) and an optional thread id."""
    conf = {k: v for k, v in configurable.items() if v is not None}
    if thread_id:
        conf["thread_id"] = thread_id
    return {
        "max_concurrency": max_concurrency or ResearchLimits().max_concurrency,
        "configurable": conf,
        "recursion_limit": 50,
    }


def stream_research(
    compiled: Any,
    question: str | None,
    config: RunnableConfig,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run (``question``) or resume (``None``) and return the final state; progress events go to
    ``on_event`` as they happen."""
    payload = None if question is None else {"question": question}
    final: dict[str, Any] = {}
    for ns, mode, chunk in compiled.stream(
        payload, config, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "custom" and on_event is not None and isinstance(chunk, dict):
            on_event(chunk)
        elif mode == "values" and not ns:
            final = chunk
    return final


#: Checkpointer-less compiled graph for ``langgraph.json`` (``deep_research``).
graph = build_research_graph()

"""Step 2, search (one per angle): query the WebSearch provider, then let the agent pick and rank
the most relevant results. Only URLs the provider returned can be picked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.types import Send

from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.common import emit, research_prompt, run_shared
from refgate.nodes.research.deps import ResearchDeps, run_backend
from refgate.nodes.research.inspect import screen_hits
from refgate.nodes.research.outbound import Sending
from refgate.nodes.research.schemas import Search
from refgate.nodes.research.state import (
    AngleRecord,
    AngleState,
    FetchTask,
    PickedResult,
    SearchRecord,
)
from refgate.nodes.state import ConfiguredStep
from refgate.provenance import armor
from refgate.tools.urls import norm_url
from refgate.tools.web_providers import HitRecord, WebProviderError, WebSearch


def search_prompt(question: str, angle: Mapping[str, object], results_block: str) -> str:
    return research_prompt(
        "search",
        label=angle["label"],
        question=question,
        rationale=angle.get("rationale") or "",
        query=angle["query"],
        results=results_block,
    )


def refinements(question: str, query: str) -> list[str]:
    """Queries an angle tries, in order, when its own query finds nothing on topic: the user's
    question as asked (trusted text, never page text), when it differs from the angle's query."""
    q = " ".join(question.split())
    return [q] if q and q.lower() != " ".join(query.split()).lower() else []


def results_block(hits: Sequence[Mapping[str, object]], query: str) -> str:
    lines = []
    for i, h in enumerate(hits, 1):
        date = f" ({h['date']})" if h.get("date") else ""
        lines.append(f"{i}. {h['url']}{date}\n   Title: {h['title']}\n   Snippet: {h['snippet']}")
    return armor("\n".join(lines), source_label=f"web search results for: {query}")


def run_search(
    question: str, angle: AngleRecord, hits: Sequence[HitRecord], backend: ResearchBackend
) -> tuple[list[PickedResult], list[str], bool]:
    """``(picked, unretrieved_urls, called)``: results to fetch (with the provider's URL, title
    and snippet, and the agent's relevance), URLs the agent named that the provider never
    returned (dropped), and whether the agent was called."""
    if not hits:
        return [], [], False
    prompt = search_prompt(question, angle, results_block(hits, angle["query"]))
    answer = backend.run(prompt, Search, label="search:" + angle["label"])
    if answer is None:
        return [], [], True
    by_url = {norm_url(h["url"]): h for h in hits}
    picked: list[PickedResult] = []
    unknown: list[str] = []
    taken: set[str] = set()
    for r in answer.results:
        key = norm_url(r.url)
        hit = by_url.get(key)
        if hit is None:
            unknown.append(r.url)
            continue
        if key in taken:
            continue
        taken.add(key)
        picked.append(
            {
                "url": hit["url"],
                "title": hit["title"],
                "snippet": hit.get("snippet", ""),
                "date": hit.get("date"),
                "relevance": r.relevance,
            }
        )
    return picked, unknown, True


def _provider_search(
    searcher: WebSearch | None, query: str, limit: int
) -> tuple[list[HitRecord], str | None]:
    """The provider's hits as dicts, or none and the error (a flaky provider costs one angle)."""
    try:
        if searcher is None:
            raise WebProviderError("no search provider")
        return [h.as_dict() for h in searcher.search(query, max_results=limit)], None
    except Exception as exc:  # noqa: BLE001
        return [], f"search failed: {type(exc).__name__}: {exc}"


def make_search(deps: ResearchDeps) -> ConfiguredStep[AngleState, AngleState]:
    lim = deps.limits

    def search(state: AngleState, config: RunnableConfig) -> AngleState:
        angle = state["angle"]
        sh = run_shared(state["run_token"], config, lim)
        out = Sending.for_run(
            deps,
            config,
            state["question"],
            written_after_untrusted=bool(angle.get("writtenAfterUntrusted")),
        )
        searcher = out.searcher
        backend = run_backend(deps, config)
        with sh.limiter:
            hits, error = _provider_search(searcher, angle["query"], lim.results_per_angle)
            hits, withheld_hits = screen_hits(hits)
            picked, unknown, called = run_search(state["question"], angle, hits, backend)
            # Bounded refinement: empty or off-topic results (none picked) -> the question itself.
            refined: list[str] = []
            calls = int(called)
            for query in refinements(state["question"], angle["query"])[: lim.search_refinements]:
                if picked:
                    break
                refined.append(query)
                more, more_error = _provider_search(searcher, query, lim.results_per_angle)
                error = more_error or error
                more, more_withheld = screen_hits(more)
                withheld_hits += more_withheld
                hits = hits + more
                picked, unknown, called = run_search(
                    state["question"], {**angle, "query": query}, more, backend
                )
                calls += int(called)
        novel, dupes, dropped = sh.deduper.filter(angle["label"], picked)
        emit(
            "search", angle=angle["label"], results=len(hits), picked=len(picked), novel=len(novel)
        )
        record: SearchRecord = {
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
            "refusedQueries": list(out.refused),
            "error": error,
        }
        update: AngleState = {"searches": [record], "model_calls": calls}
        return out.added_to(update)

    return search


def after_search(state: AngleState) -> list[Send] | str:
    """One ``fetch`` per novel result of the angle (no barrier across angles)."""
    novel = [s for rec in state.get("searches", []) for s in rec["novel"]]
    if not novel:
        return END
    tasks: list[FetchTask] = [
        {
            "question": state["question"],
            "run_token": state["run_token"],
            "angle": state["angle"],
            "source": s,
        }
        for s in novel
    ]
    return [Send("fetch", task) for task in tasks]

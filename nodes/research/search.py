"""Step 2, search (one per angle): query the WebSearch provider, then let the agent pick and rank
the most relevant results. Only URLs the provider returned can be picked."""

from __future__ import annotations

from typing import Any

from refgate.nodes.research.schemas import Search
from refgate.provenance import armor
from refgate.urls import norm_url


def search_prompt(question: str, angle: dict[str, Any], results_block: str) -> str:
    return (
        "## Web Searcher: " + angle["label"] + "\n\n"
        'Research question: "' + question + '"\n\n'
        "Your angle: **" + angle["label"] + "** — " + (angle.get("rationale") or "") + "\n"
        "Search query: `" + angle["query"] + "`\n\n"
        "## Search results\n" + results_block + "\n\n"
        "## Task\nFrom the search results above, return the top 4-6 most relevant results "
        "(fewer if fewer are relevant).\n"
        "Rank by relevance to the ORIGINAL question, not just the search query. Skip obvious "
        "SEO spam/content farms.\n"
        "Copy each URL exactly as listed; never return a URL that is not in the list.\n"
        "Include a short snippet capturing why each result is relevant.\n\nStructured output only."
    )


def refinements(question: str, query: str) -> list[str]:
    """Queries an angle tries, in order, when its own query finds nothing on topic: the user's
    question as asked (trusted text, never page text), when it differs from the angle's query."""
    q = " ".join(question.split())
    return [q] if q and q.lower() != " ".join(query.split()).lower() else []


def results_block(hits: list[dict[str, Any]], query: str) -> str:
    lines = []
    for i, h in enumerate(hits, 1):
        date = f" ({h['date']})" if h.get("date") else ""
        lines.append(f"{i}. {h['url']}{date}\n   Title: {h['title']}\n   Snippet: {h['snippet']}")
    return armor("\n".join(lines), source_label=f"web search results for: {query}")


def run_search(
    question: str, angle: dict[str, Any], hits: list[dict[str, Any]], backend: Any
) -> tuple[list[dict[str, Any]], list[str], bool]:
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
    picked: list[dict[str, Any]] = []
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

"""WebSearch (WORK pass): search the web through the configured provider; each result is a webRef.

The provider is the workspace's offline snapshot unless the environment opts in to a real one
(see ``refgate.tools.web_providers``); a test or an embedding app may put ``web_search`` (a
``WebSearch`` provider) in ``ToolContext.extra``. Titles and snippets are web content: they are
declared untrusted and never used as ref titles (a ref title is ``web result N (host)``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.tools.urls import host_of
from refgate.tools.web_providers import WebProviderError, default_providers


class WebSearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=400, description="What to search for")
    max_results: int = Field(default=5, ge=1, le=10, description="How many results (1-10)")


def _provider(ctx: ToolContext):
    given = ctx.extra.get("web_search")
    if given is not None:
        return given
    return default_providers(ctx.workspace, settings=ctx.settings)[0]


def _call(args: BaseModel, ctx: ToolContext) -> ToolResult:
    assert isinstance(args, WebSearchArgs)
    try:
        provider = _provider(ctx)
        hits = provider.search(args.query, max_results=args.max_results)
    except WebProviderError as exc:
        return ToolResult.failure(f"web search is not configured: {exc}")
    except Exception as exc:  # a real provider's network error: the model sees why
        return ToolResult.failure(f"web search failed: {type(exc).__name__}: {exc}")
    results = []
    refs = []
    for i, hit in enumerate(hits[: args.max_results], 1):
        ref = ctx.issue(
            "webRef",
            {
                "url": hit.url,
                "title": hit.title,
                "excerpt": hit.snippet,
                "date": hit.date,
                "query": args.query,
                "provider": getattr(provider, "name", type(provider).__name__),
                "retrieved": "search_result",
            },
            title=f"web result {i} ({host_of(hit.url)})",
            source=hit.url,
            source_type="external",
        )
        refs.append(ref)
        results.append(
            {
                "ref": ref.id,
                "url": hit.url,
                "title": hit.title,
                "snippet": hit.snippet,
                "date": hit.date,
            }
        )
    ctx.emit({"event": "tool", "tool": "WebSearch", "results": len(results)})
    return ToolResult(
        ok=True,
        data={
            "query": args.query,
            "provider": getattr(provider, "name", ""),
            "results": results,
            "note": "titles and snippets are web content; cite results by their ref id",
        },
        refs=refs,
        untrusted_fields=list(SPEC.untrusted_fields),  # titles and snippets, as declared
    )


SPEC = ToolSpec(
    name="WebSearch",
    description=(
        "Search the web (the workspace's offline snapshot unless a live provider is configured). "
        "Returns up to max_results results, each a webRef (external evidence) with url, title, "
        "snippet and date. For a researched, vote-verified answer call engine.deep_research."
    ),
    args_schema=WebSearchArgs,
    func=_call,
    read_only=True,
    issues=("webRef",),
    untrusted_fields={
        "results[].title": "page title as reported by the search provider (web content)",
        "results[].snippet": "excerpt of the page chosen by the search provider (web content)",
    },
)

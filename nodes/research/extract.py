"""Step 3, fetch and extract (one per source): fetch the page through the Fetch provider and let
the agent extract 2-5 falsifiable claims, each with a direct quote, plus source quality and
publish date. A claim whose quote is not in the fetched text is dropped."""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.runnables import RunnableConfig

from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.common import emit, research_prompt, run_shared
from refgate.nodes.research.core import quote_in_text, select_passages
from refgate.nodes.research.deps import ResearchDeps, run_backend
from refgate.nodes.research.inspect import page_verdict
from refgate.nodes.research.outbound import Sending
from refgate.nodes.research.schemas import Extract
from refgate.nodes.research.state import AngleState, FetchTask, PickedResult, SourceRecord
from refgate.nodes.state import ConfiguredStep
from refgate.provenance import armor
from refgate.tools.web_providers import Fetch, Page, WebProviderError


def extract_prompt(question: str, source: Mapping[str, object], angle: str, page_block: str) -> str:
    return research_prompt(
        "extract", question=question, url=source["url"], angle=angle, page=page_block
    )


def run_extract(
    question: str,
    source: PickedResult,
    angle: str,
    fetcher: Fetch | None,
    backend: ResearchBackend,
    *,
    page_chars: int,
) -> SourceRecord:
    """One source record: ``{url, title, angle, fetched, error, extracted, sourceQuality,
    publishDate, claims, quotesRejected}`` (plus ``withheld`` when the page was withheld)."""
    record: SourceRecord = {
        "url": source["url"],
        "title": source.get("title", ""),
        "angle": angle,
        "relevance": source.get("relevance"),
        "fetched": False,
        "extracted": False,
        "error": None,
        "sourceQuality": "unreliable",
        "publishDate": source.get("date"),
        "claims": [],
        "quotesRejected": 0,
    }
    page = _fetched(fetcher, source["url"])
    if not page.ok or not page.text.strip():
        record["error"] = page.error or "empty page"
        return record
    record["fetched"] = True
    record["title"] = page.title or record["title"]
    record["publishDate"] = page.date or record["publishDate"]
    verdict = page_verdict(page.title, page.text, str((page.meta or {}).get("hidden_text") or ""))
    if verdict is not None:
        # B5 for research: the page never reaches the extractor; the report lists it as killed.
        record["withheld"] = verdict
        record["error"] = f"withheld: {verdict['reason']}"
        return record
    body = select_passages(page.text, question + " " + source.get("snippet", ""), page_chars)
    header = f"Title: {page.title}\n" + (f"Date: {page.date}\n" if page.date else "")
    block = armor(header + "\n" + body, source_label=source["url"])
    answer = backend.run(
        extract_prompt(question, source, angle, block), Extract, label="fetch:" + source["url"]
    )
    if answer is None:
        record["error"] = "extraction failed (no valid answer from the agent)"
        return record
    record["extracted"] = True
    record["sourceQuality"] = answer.sourceQuality
    record["publishDate"] = page.date or answer.publishDate or record["publishDate"]
    _keep_quoted_claims(record, answer, page, angle)
    return record


def _fetched(fetcher: Fetch | None, url: str) -> Page:
    """The page at ``url``, or a failed page saying why (a provider that raises, or none)."""
    try:
        if fetcher is None:
            raise WebProviderError("no fetch provider")
        return fetcher.fetch(url)
    except Exception as exc:  # a provider that raises instead of returning a failed page
        return Page.failed(url, f"fetch failed: {type(exc).__name__}: {exc}")


def _keep_quoted_claims(record: SourceRecord, answer: Extract, page: Page, angle: str) -> None:
    """Add the extractor's claims whose quote is verbatim in the page; count the others."""
    for claim in answer.claims:
        if not quote_in_text(claim.quote, page.text):
            record["quotesRejected"] += 1
            continue
        record["claims"].append(
            {
                "claim": claim.claim,
                "quote": claim.quote,
                "importance": claim.importance,
                "sourceUrl": page.url,
                "sourceTitle": record["title"],
                "sourceQuality": answer.sourceQuality,
                "publishDate": record["publishDate"],
                "angle": angle,
            }
        )


def make_fetch(deps: ResearchDeps) -> ConfiguredStep[FetchTask, AngleState]:
    def fetch(state: FetchTask, config: RunnableConfig) -> AngleState:
        source = state["source"]
        out = Sending.for_run(deps, config, state["question"])
        fetcher = out.fetcher
        backend = run_backend(deps, config)
        with run_shared(state["run_token"], config, deps.limits).limiter:
            record = run_extract(
                state["question"],
                source,
                state["angle"]["label"],
                fetcher,
                backend,
                page_chars=deps.limits.page_chars,
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
        update: AngleState = {"sources": [record], "model_calls": int(called)}
        return out.added_to(update)

    return fetch

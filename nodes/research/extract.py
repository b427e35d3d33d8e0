"""Step 3, fetch and extract (one per source): fetch the page through the Fetch provider and let
the agent extract 2-5 falsifiable claims, each with a direct quote, plus source quality and
publish date. A claim whose quote is not in the fetched text is dropped."""

from __future__ import annotations

from typing import Any

from refgate.nodes.research.core import quote_in_text, select_passages
from refgate.nodes.research.inspect import page_verdict
from refgate.nodes.research.schemas import Extract
from refgate.provenance import armor
from refgate.tools.web_providers import Page


def extract_prompt(question: str, source: dict[str, Any], angle: str, page_block: str) -> str:
    return (
        "## Source Extractor\n\n"
        'Research question: "' + question + '"\n\n'
        "Extract key claims from this source:\n"
        "**URL:** " + source["url"] + "\n**Found via:** " + angle + " search\n\n"
        "## Page content\n" + page_block + "\n\n"
        "## Task\n1. Read the page content above (the title is inside it).\n"
        "2. Assess source quality: primary research/institution? secondary reporting? "
        "blog/opinion? forum? unreliable?\n"
        "3. Extract 2-5 FALSIFIABLE claims that bear on the research question. Each claim must:\n"
        "   - be a concrete, checkable statement (not vague generalities)\n"
        "   - include a direct quote from the source as support, copied verbatim\n"
        "   - be rated central/supporting/tangential to the research question\n"
        "4. Note publish date if available.\n\n"
        "If the page is irrelevant or empty, return claims: [] and "
        'sourceQuality: "unreliable".\n\nStructured output only.'
    )


def run_extract(
    question: str,
    source: dict[str, Any],
    angle: str,
    fetcher: Any,
    backend: Any,
    *,
    page_chars: int,
) -> dict[str, Any]:
    """One source record: ``{url, title, angle, fetched, error, extracted, sourceQuality,
    publishDate, claims, quotesRejected}`` (plus ``withheld`` when the page was withheld)."""
    record: dict[str, Any] = {
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
    try:
        page = fetcher.fetch(source["url"])
    except Exception as exc:  # a provider that raises instead of returning a failed page
        page = Page.failed(source["url"], f"fetch failed: {type(exc).__name__}: {exc}")
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
    for claim in answer.claims:
        if not quote_in_text(claim.quote, page.text):
            record["quotesRejected"] += 1
            continue
        record["claims"].append(
            {
                **claim.model_dump(),
                "sourceUrl": page.url,
                "sourceTitle": record["title"],
                "sourceQuality": answer.sourceQuality,
                "publishDate": record["publishDate"],
                "angle": angle,
            }
        )
    return record

"""Deep-research concurrency: wall time against the critical path and a sequential run.

A scripted chat model answers every prompt after a fixed 100 ms; the web is an in-memory
provider; the run is 5 angles x 3 sources x 2 claims (30 claims, the top 25 verified by 3 votes:
97 agent calls). Figures:

- critical path: 5 sequential calls (scope, search, fetch, verify, synthesize) = 0.5 s;
- capacity bound at concurrency c: the least wall time c parallel slots allow
  (1 scope + search/fetch waves + ceil(75 / c) vote waves + 1 synthesis, in 100 ms steps);
- sequential: the same run at max_concurrency=1.

Run: python benchmarks/research_concurrency.py [--latency 0.1] [--concurrency 1 10 100]
"""

from __future__ import annotations

import argparse
import math
import re
import time

from langchain_core.messages import AIMessage

from refgate.graph.research import build_research_graph, run_config
from refgate.testing import KeyedChatModel, tool_call
from refgate.tools.web_providers import Page, SearchHit

ANGLES, SOURCES, CLAIMS = 5, 3, 2


class MemoryWeb:
    """3 distinct pages per angle query; each page holds CLAIMS quotable sentences."""

    name = "memory"

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]:
        a = int(query.split()[-1])
        return [
            SearchHit(f"https://example.org/a{a}/s{s}", f"page {a}.{s}", "snippet")
            for s in range(SOURCES)
        ]

    def fetch(self, url: str) -> Page:
        text = " ".join(f"Sentence {k} of {url} states a checkable fact." for k in range(CLAIMS))
        return Page(url=url, title=url, text=text)


def tc(name: str, args: dict) -> AIMessage:
    return AIMessage(content="", tool_calls=[tool_call(name, args)])


def scope(text: str) -> AIMessage:
    angles = [{"label": f"angle {a}", "query": f"query {a}"} for a in range(ANGLES)]
    return tc("Scope", {"question": "q", "summary": "s", "angles": angles})


def search(text: str) -> AIMessage:
    urls = re.findall(r"^\d+\. (\S+)", text, re.M)
    return tc("Search", {"results": [{"url": u, "title": "t", "relevance": "high"} for u in urls]})


def extract(text: str) -> AIMessage:
    url = re.search(r"\*\*URL:\*\* (\S+)", text).group(1)
    claims = [
        {
            "claim": f"claim {k} of {url}",
            "quote": f"Sentence {k} of {url} states a checkable fact.",
            "importance": "central",
        }
        for k in range(CLAIMS)
    ]
    return tc("Extract", {"sourceQuality": "primary", "claims": claims})


def verify(text: str) -> AIMessage:
    """A support resting on the claim's own source and quote (a usable source)."""
    source = re.search(r"\*\*Source:\*\* (\S+)", text).group(1)
    quote = re.search(r'Supporting quote: "(.*?)"\nPublish date', text, re.S).group(1)
    return tc("Verdict", {"refuted": False, "evidence": "supported", "confidence": "high",
                          "counterSource": source, "sourceQuote": quote})  # fmt: skip


def synth(text: str) -> AIMessage:
    return tc("Report", {"summary": "s", "findings": [], "caveats": ""})


def model(latency: float) -> KeyedChatModel:
    return KeyedChatModel(
        rules=[
            ("Decompose this research question", scope),
            ("## Web Searcher", search),
            ("## Source Extractor", extract),
            ("## Adversarial Claim Verifier", verify),
            ("## Synthesis: research report", synth),
        ],
        latency=latency,
    )


def capacity_bound(c: int, latency: float, votes: int) -> float:
    """Least wall time with c slots: scope; searches then fetches as slots free up; votes; synth."""
    sources = ANGLES * SOURCES
    search_fetch = math.ceil((ANGLES + sources) / c) if c < ANGLES + sources else 2
    return latency * (1 + max(2, search_fetch) + math.ceil(votes / c) + 1)


def run_once(concurrency: int, latency: float) -> tuple[float, int, dict]:
    m = model(latency)
    web = MemoryWeb()
    graph = build_research_graph(model=m, web_search=web, web_fetch=web)
    start = time.perf_counter()
    state = graph.invoke({"question": "benchmark"}, run_config(max_concurrency=concurrency))
    return time.perf_counter() - start, len(m.calls), state["report"]["stats"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10, 100])
    args = parser.parse_args()
    lat = args.latency
    run_once(10, 0.0)  # warm imports and caches
    critical = 5 * lat
    rows = []
    for c in args.concurrency:
        wall, calls, stats = run_once(c, lat)
        rows.append((c, wall, calls, stats))
    sequential = next((w for c, w, _, _ in rows if c == 1), None)
    print(
        f"latency per call {lat * 1000:.0f} ms; {ANGLES} angles x {SOURCES} sources x "
        f"{CLAIMS} claims; critical path (5 calls) {critical:.2f} s"
    )
    print(
        "| max_concurrency | agent calls | wall (s) | / critical path | capacity bound (s) "
        "| / capacity bound | sequential / wall |"
    )
    print("|---|---|---|---|---|---|---|")
    for c, wall, calls, stats in rows:
        votes = stats["claimsVerified"] * 3
        bound = capacity_bound(c, lat, votes) if c > 1 else calls * lat
        speed = f"{sequential / wall:.1f}x" if sequential else "n/a"
        print(
            f"| {c} | {calls} | {wall:.2f} | {wall / critical:.2f}x | {bound:.2f} | "
            f"{wall / bound:.2f}x | {speed} |"
        )


if __name__ == "__main__":
    main()

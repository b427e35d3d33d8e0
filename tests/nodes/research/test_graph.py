"""The research graph end to end with a scripted model keyed on the prompt."""

from __future__ import annotations

import re
import sqlite3
import threading

from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from refgate.graph.research import build_research_graph, run_config, stream_research
from refgate.nodes.research.core import ResearchLimits, site_of
from refgate.tools.urls import norm_url
from refgate.tools.web_providers import SnapshotCorpus

QUESTION = "What is known about the Aurora rail tunnel?"


def run(script, corpus, question=QUESTION, *, limits=None, max_concurrency=None):
    model = script.model()
    graph = build_research_graph(model=model, web_search=corpus, web_fetch=corpus, limits=limits)
    events: list[dict] = []
    final = stream_research(
        graph, question, run_config(max_concurrency=max_concurrency), events.append
    )
    return final, events, model


def prompts(model, header):
    return [c["text"] for c in model.calls if header in c["text"]]


def test_happy_path_report_cites_only_retrieved_pages(script, tiny_web):
    final, events, model = run(script(), tiny_web)
    report = final["report"]
    assert report["status"] == "complete"
    assert report["summary"].startswith("The Aurora tunnel")
    fetched = {norm_url(x["url"]) for x in report["sources"] if x["fetched"]}
    assert fetched and fetched <= set(tiny_web._by_url)
    cited = {norm_url(u) for f in report["findings"] for u in f["sources"]}
    cited |= {norm_url(c["source"]) for c in report["confirmed"]}
    assert cited and cited <= fetched
    assert len(report["sources"]) == len({norm_url(x["url"]) for x in report["sources"]})
    stats = report["stats"]
    # the research pipeline's formula equals the calls actually made when nothing degrades
    assert stats["agentCalls"] == stats["modelCalls"] == len(model.calls)
    assert stats["confirmed"] == stats["claimsVerified"] == 2 * stats["sourcesFetched"]
    unanimous = {"support": 3, "refute": 0, "uncertain": 0, "abstain": 0}
    assert all(c["votes"] == unanimous for c in report["confirmed"])
    steps = [e["step"] for e in events]
    for step in ("scope", "search", "fetch", "rank", "verify", "tally", "synthesize", "report"):
        assert step in steps
    assert all(e["event"] == "research_step" for e in events)
    md = final["markdown"]
    assert "## Findings" in md and "Merged finding" in md and "## Stats" in md


def test_web_text_is_fenced_in_every_prompt_that_carries_it(script, tiny_web):
    _, _, model = run(script(), tiny_web)
    extract = prompts(model, "## Source Extractor")[0]
    fence = re.search(r"⟦UNTRUSTED:([0-9a-f]{32})", extract)
    assert fence, "page text must be armored"
    body = extract.split(fence.group(0), 1)[1].split(f"⟦/UNTRUSTED:{fence.group(1)}⟧")[0]
    assert "Aurora" in body
    for header in ("## Web Searcher", "## Adversarial Claim Verifier", "## Synthesis"):
        assert "⟦UNTRUSTED:" in prompts(model, header)[0], header


def test_search_cannot_introduce_unretrieved_urls(script, tiny_web, h):
    bogus = "https://evil.example/never-returned"

    def search(text):
        msg = s.default("search", text)
        results = msg.tool_calls[0]["args"]["results"][:2]
        return h.with_args(
            msg, results=[*results, {"url": bogus, "title": "x", "relevance": "high"}]
        )

    s = script(search=search)
    final, _, model = run(s, tiny_web)
    report = final["report"]
    assert report["stats"]["unretrievedUrlsDropped"] == 3  # one per angle
    assert all(norm_url(x["url"]) != norm_url(bogus) for x in report["sources"])
    assert not any(bogus in t for t in prompts(model, "## Source Extractor"))
    assert bogus not in final["markdown"]


def test_synthesis_citing_unread_urls_is_cleaned(script, tiny_web, h):
    def synth(text):
        msg = s.default("synth", text)
        good = msg.tool_calls[0]["args"]["findings"][0]
        return h.with_args(
            msg,
            findings=[
                {**good, "sources": ["https://made-up.example/x"]},
                {
                    "claim": "Invented",
                    "confidence": "high",
                    "sources": ["https://made-up.example/y"],
                    "evidence": "",
                    "claims": [],
                },
            ],
        )

    s = script(synth=synth)
    report = run(s, tiny_web)[0]["report"]
    assert [f["claim"] for f in report["findings"]] == ["Merged finding"]
    assert report["findings"][0]["sources"]
    assert all("made-up" not in u for f in report["findings"] for u in f["sources"])
    assert any("never retrieved" in n for n in report["notes"])
    assert any("cited no retrieved page" in n for n in report["notes"])


def test_claim_whose_quote_is_not_on_the_page_is_dropped(script, tiny_web, h):
    def extract(text):
        msg = s.default("extract", text)
        first = msg.tool_calls[0]["args"]["claims"][0]
        fake = {
            "claim": "fabricated",
            "quote": "The tunnel is made of cheese and gold.",
            "importance": "central",
        }
        return h.with_args(msg, claims=[first, fake])

    s = script(extract=extract)
    report = run(s, tiny_web)[0]["report"]
    assert report["stats"]["quotesRejected"] == report["stats"]["sourcesFetched"] > 0
    assert report["confirmed"] and all(c["claim"] != "fabricated" for c in report["confirmed"])


def test_fetch_budget_limits_sources_but_high_relevance_passes(script, tiny_web, h):
    def search(text):
        msg = s.default("search", text)
        results = [{**r, "relevance": "medium"} for r in msg.tool_calls[0]["args"]["results"]]
        return h.with_args(msg, results=results)

    s = script(search=search)
    report = run(s, tiny_web, limits=ResearchLimits(max_fetch=2))[0]["report"]
    assert len(report["sources"]) == 2
    assert report["stats"]["budgetDropped"] > 0
    s2 = script()  # all "high": the budget does not stop them
    report2 = run(s2, tiny_web, limits=ResearchLimits(max_fetch=2))[0]["report"]
    assert len(report2["sources"]) > 2


# ---------------------------------------------------------------- degenerate paths


def test_empty_question_reports_without_calling_the_model(script, tiny_web):
    final, _, model = run(script(), tiny_web, question="   ")
    assert final["report"]["status"] == "empty_question"
    assert "No research question" in final["markdown"]
    assert model.calls == []


def test_scope_failure_reports(script, tiny_web):
    s = script(scope=lambda text: AIMessage(content="I cannot help with that."))
    final, _, model = run(s, tiny_web)
    assert final["report"]["status"] == "scope_failed"
    assert "nothing was searched" in final["report"]["summary"]
    assert len(model.calls) == 2  # one re-ask, then the step gives up


def test_no_sources_reports(script, tmp_path, h):
    empty = SnapshotCorpus(
        h.write_snapshot(
            tmp_path / "other",
            {
                "https://example.org/cooking": (
                    "Cooking",
                    "Boil the pasta for nine minutes in salted water.",
                ),
            },
        )
    )
    final, _, _ = run(script(), empty)
    assert final["report"]["status"] == "no_sources"
    assert "no pages" in final["report"]["summary"]


def test_no_claims_reports(script, tiny_web, h):
    s = script(
        extract=lambda text: h.with_args(
            s.default("extract", text), sourceQuality="unreliable", claims=[]
        )
    )
    final, _, _ = run(s, tiny_web)
    report = final["report"]
    assert report["status"] == "no_claims"
    assert "No claims extracted" in report["summary"]
    assert report["sources"] and report["stats"]["claimsExtracted"] == 0
    assert "## Sources read" in final["markdown"]


def test_all_refuted_reports_the_refuted_claims(script, tiny_web, h):
    def verify(text):  # each refutation cites the claim's own source (a quote that overreaches)
        source = re.search(r"\*\*Source:\*\* (\S+)", text).group(1)
        return h.tc("Verdict", {"refuted": True, "evidence": "contradicted", "confidence": "high",
                                "counterSource": source})  # fmt: skip

    final, _, model = run(script(verify=verify), tiny_web)
    report = final["report"]
    assert report["status"] == "none_confirmed"
    assert report["findings"] == [] and report["confirmed"] == []
    assert len(report["refuted"]) == report["stats"]["claimsVerified"] > 0
    assert "## Refuted claims" in final["markdown"]
    assert not prompts(model, "## Synthesis")


def test_a_vote_without_a_usable_source_is_uncertain_and_counts_as_refuted(script, tiny_web, h):
    """Issue 30, item 3: {support, refutation resting on a source, refutation without a source
    the voter read} kills the claim (before: "survives 1-1", the last vote an abstention)."""
    s = script()

    def verify(text):
        own, quote = h.claim_source(text), h.claim_quote(text)
        if "voter 1/3" in text:
            return s.default("verify", text)
        if "voter 2/3" in text:  # the claim's own quote does not support it
            return h.tc("Verdict", {"refuted": True, "evidence": "overreach", "confidence": "high",
                                    "counterSource": own, "sourceQuote": quote})  # fmt: skip
        return h.tc("Verdict", {"refuted": True, "evidence": "I recall otherwise",
                                "confidence": "high", "counterSource": "https://made.up/x"})  # fmt: skip

    s.knobs["verify"] = verify
    final, _, model = run(s, tiny_web)
    report = final["report"]
    assert report["status"] == "none_confirmed" and report["confirmed"] == []
    assert report["refuted"] and all(
        c["votes"] == {"support": 1, "refute": 1, "uncertain": 1, "abstain": 0}
        for c in report["refuted"]
    )
    ballots = report["refuted"][0]["ballots"]
    assert [b["status"] for b in ballots] == ["support", "refute", "uncertain"]
    assert ballots[2]["why"] == "cites a source it did not read" and ballots[2]["source"] is None
    md = final["markdown"]
    assert "voter 3: uncertain (cites a source it did not read)" in md
    assert "made.up" not in md
    # Every voter searched for counter-evidence first, with a query written from the question.
    voters = prompts(model, "Adversarial Claim Verifier")
    assert voters and all("What your search for counter-evidence found" in p for p in voters)


def _first_sentence(text):
    body = re.search(r"Page text: (.*?)\n⟦/UNTRUSTED", text, re.S).group(1)
    return re.split(r"(?<=\.) ", body)[0]


def test_voters_read_page_bodies_and_a_refutation_rests_on_a_quoted_sentence(script, tiny_web, h):
    def verify(text):
        listed = re.findall(r"^\[S\d+\] (\S+)$", text, re.M)
        if not listed:
            return h.tc("Verdict", {"refuted": False, "evidence": "none", "confidence": "low"})
        return h.tc("Verdict", {"refuted": True, "evidence": "the listed page disputes it",
                                "confidence": "high", "counterSource": listed[0],
                                "sourceQuote": _first_sentence(text)})  # fmt: skip

    final, _, model = run(script(verify=verify), tiny_web)
    votes = final["votes"]
    assert any(v["read"] for v in votes)
    assert all(norm_url(u) in tiny_web._by_url for v in votes for u in v["read"])
    for prompt in prompts(model, "Adversarial Claim Verifier"):
        # a page is shown by its body inside a fence; a search snippet alone is never "read"
        assert "Snippet:" not in prompt
    counted = [v for v in votes if v["status"] == "refute"]
    assert all(v["verdict"]["counterSource"] in v["read"] for v in counted)
    # a refutation resting on a page's sentence that does not contradict the claim is rejected
    # (issue 45), recorded on the vote, and the voter votes again without that page
    rejected = [v for v in votes if v.get("rejected")]
    assert counted or rejected
    assert all(v["rejected"]["source"] in v["read"] and v["rejected"]["why"] for v in rejected)
    for v in votes:  # a claim's voters read different sites, none of them the claim's own
        claim = next(c for c in final["claims"] if c["id"] == v["claim_id"])
        assert all(site_of(u) != site_of(claim["sourceUrl"]) for u in v["read"])
    by_claim = {}
    for v in votes:
        for u in v["read"]:
            by_claim.setdefault(v["claim_id"], []).append(site_of(u))
    assert all(len(s) == len(set(s)) for s in by_claim.values())
    assert final["report"]["refuted"]


def test_failed_verifiers_leave_claims_unverified_not_refuted(script, tiny_web, h):
    s = script()

    def verify(text):
        if "voter 1/3" in text:
            return s.default("verify", text)
        return AIMessage(content="not json")  # voters 2 and 3 fail

    s.knobs["verify"] = verify
    report = run(s, tiny_web)[0]["report"]
    assert report["status"] == "none_confirmed"
    assert report["refuted"] == []
    assert report["unverified"] and all(
        c["votes"] == {"support": 1, "refute": 0, "uncertain": 0, "abstain": 2}
        for c in report["unverified"]
    )


def test_synthesis_failure_returns_confirmed_claims_unmerged(script, tiny_web):
    s = script(synth=lambda text: AIMessage(content="oops"))
    final, _, _ = run(s, tiny_web)
    report = final["report"]
    assert report["status"] == "synthesis_failed"
    assert report["findings"] == []
    assert len(report["confirmed"]) == report["stats"]["confirmed"] > 0
    assert "## Confirmed claims (unmerged)" in final["markdown"]
    assert report["confirmed"][0]["quote"] in final["markdown"]


# ---------------------------------------------------------------- concurrency and resume


def test_search_to_fetch_is_pipelined_without_a_barrier(script, tiny_web):
    gate = threading.Event()
    waited: list[bool] = []

    def search(text):
        if "## Web Searcher: safety" in text:
            # the slow angle waits until another angle's fetch has started: with a barrier
            # between searching and fetching, no fetch would start and the wait would time out
            waited.append(gate.wait(10))
        return s.default("search", text)

    def extract(text):
        gate.set()
        return s.default("extract", text)

    s = script(search=search, extract=extract)
    final, events, _ = run(s, tiny_web)
    assert waited == [True], "no fetch started while a search was still running"
    # (the events' order is not checked: the fetch's event is sent when its extraction ends,
    # which may come after the released search's)
    assert ("search", "safety") in [(e["step"], e.get("angle")) for e in events]
    assert final["report"]["status"] == "complete"


def test_concurrency_is_capped_across_angles(script, tiny_web):
    s = script(hold=0.02)
    final, _, _ = run(s, tiny_web, max_concurrency=2)
    assert final["report"]["status"] == "complete"
    assert s.max_in_flight == 2
    s10 = script(hold=0.02)
    run(s10, tiny_web)
    assert 2 < s10.max_in_flight <= 10


def test_interrupted_run_resumes_without_redoing_finished_calls(script, tiny_web, tmp_path):
    failed = {"n": 0}

    def verify(text):
        target = "voter 2/3" in text and "claim 0 of https://example.org/tunnel/history" in text
        if target and failed["n"] == 0:
            failed["n"] += 1
            raise ConnectionError("rate limited; try later")
        return s.default("verify", text)

    s = script(verify=verify)
    model = s.model()
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    graph = build_research_graph(
        model=model, web_search=tiny_web, web_fetch=tiny_web, checkpointer=SqliteSaver(conn)
    )
    config = run_config(thread_id="t1")
    try:
        graph.invoke({"question": QUESTION}, config)
    except ConnectionError:
        pass
    else:
        raise AssertionError("the verify branch should have failed")
    calls_before = len(model.calls)
    state = graph.get_state(config)
    assert set(state.next) == {"verify"}  # the failed vote and the votes not yet run
    final = graph.invoke(None, config)
    conn.close()
    assert final["report"]["status"] == "complete"
    # fences carry a fresh nonce per call: compare prompts without it
    texts = [re.sub(r"UNTRUSTED:[0-9a-f]{32}", "UNTRUSTED", c["text"]) for c in model.calls]
    # every prompt was answered once, except the failed vote (asked twice)
    repeated = {t for t in texts if texts.count(t) > 1}
    assert len(repeated) == 1 and "voter 2/3" in next(iter(repeated))
    assert len(model.calls) == calls_before + len(state.next) + 1  # pending votes + synthesis
    assert final["report"]["stats"]["agentCalls"] == len(model.calls) - 1


def test_an_angle_whose_query_finds_nothing_refines_it_once_with_the_question(script, tiny_web, h):
    angles = [{"label": f"nothing {i}", "query": f"qqzx wvvy nonexistent {i}"} for i in range(3)]

    def scope(text):
        return h.tc("Scope", {"question": QUESTION, "summary": "no match", "angles": angles})

    final, _, model = run(script(scope=scope), tiny_web)
    records = final["searches"]
    assert len(records) == 3
    # One bounded retry per angle, with the user's own words (never page text).
    assert all(r["refined"] == [QUESTION] and r["hits"] > 0 for r in records)
    assert any(r["novel"] for r in records) and final["report"]["sources"]

"""The deterministic core: the research pipeline's test list, adapted to the three-outcome tally."""

from __future__ import annotations

from collections import Counter

from refgate.nodes.research.core import (
    Deduper,
    build_stats,
    build_synth_blocks,
    dedup_sources,
    quote_in_text,
    rank_claims,
    select_passages,
    site_of,
    tally,
)
from refgate.nodes.research.schemas import Verdict
from refgate.tools.urls import norm_url


def test_norm_url_strips_www_scheme_and_trailing_slash():
    assert norm_url("http://www.Example.com/Path/") == "example.com/path"
    assert norm_url("https://example.com/path?q=1#frag") == "example.com/path?q=1"


def test_norm_url_keeps_the_query_parameters_that_name_a_page():
    assert norm_url("https://x.org/item?id=1") != norm_url("https://x.org/item?id=2")
    assert norm_url("https://x.org/a?utm_source=t&id=3&fbclid=9") == norm_url("http://x.org/a?id=3")
    assert norm_url("https://x.org/a?b=2&a=1") == norm_url("https://x.org/a/?a=1&b=2")
    assert norm_url("https://x.org:443/a#top") == "x.org/a"


def test_norm_url_bare_host_and_garbage():
    assert norm_url("https://example.com") == "example.com"
    assert norm_url("not a url") == "not a url"
    assert norm_url("") == ""


def test_deduper_filters_dupes_across_angles():
    d = Deduper(15)
    assert (
        len(d.filter_novel("a1", [{"url": "http://a.com/x", "title": "t", "relevance": "high"}]))
        == 1
    )
    assert (
        d.filter_novel("a2", [{"url": "http://www.a.com/x/", "title": "t2", "relevance": "high"}])
        == []
    )
    assert len(d.dupes) == 1 and d.dupes[0]["dupOf"]["angle"] == "a1"


def test_deduper_budget_drops_medium_and_low_when_spent():
    d = Deduper(1)
    d.filter_novel("a1", [{"url": "http://a.com/1", "title": "t", "relevance": "high"}])
    more = [
        {"url": "http://b.com/2", "title": "t", "relevance": "medium"},
        {"url": "http://c.com/3", "title": "t", "relevance": "low"},
    ]
    assert d.filter_novel("a2", more) == []
    assert len(d.budget_dropped) == 2


def test_deduper_high_passes_even_when_budget_spent():
    d = Deduper(1)
    d.filter_novel("a1", [{"url": "http://a.com/1", "title": "t", "relevance": "high"}])
    assert (
        len(d.filter_novel("a2", [{"url": "http://d.com/4", "title": "t", "relevance": "high"}]))
        == 1
    )
    assert d.fetch_slots == -1


def test_deduper_takes_best_relevance_first():
    d = Deduper(1)
    novel = d.filter_novel(
        "a",
        [
            {"url": "http://low.com", "title": "t", "relevance": "low"},
            {"url": "http://med.com", "title": "t", "relevance": "medium"},
        ],
    )
    assert [r["url"] for r in novel] == ["http://med.com"]


def test_dedup_sources_keeps_first():
    kept, dropped = dedup_sources([{"url": "http://a.com/x"}, {"url": "https://www.a.com/x/"}])
    assert kept == [{"url": "http://a.com/x"}] and len(dropped) == 1


def _claim(imp, qual, name, url="https://a.example/p", quote=""):
    return {
        "claim": name,
        "importance": imp,
        "sourceQuality": qual,
        "sourceUrl": url,
        "quote": quote or name,
    }


def test_rank_claims_orders_by_importance_then_quality_as_tie_breaks():
    claims = [
        _claim("tangential", "primary", "t-prim"),
        _claim("central", "blog", "c-blog"),
        _claim("central", "primary", "c-prim"),
    ]
    verified, cut = rank_claims(claims, 25)
    assert [c["claim"] for c in verified] == ["c-prim", "c-blog", "t-prim"] and cut == []


def test_rank_claims_truncates_and_returns_the_rest_with_a_reason():
    claims = [
        _claim("central", "primary", f"c{i}", url=f"https://s{i}.example/p") for i in range(30)
    ]
    verified, cut = rank_claims(claims, 25)
    assert len(verified) == 25 and len(cut) == 5
    assert all("past the 25" in c["cutReason"] for c in cut)


def test_rank_claims_no_page_or_site_fills_the_budget_and_honest_claims_are_not_crowded_out():
    """Issue 30, item 1: six self-praising pages flood "central, primary" claims; the honest
    "supporting, secondary" claims of six other sites all reach verification."""
    flood = [
        _claim("central", "primary", f"flood {p}-{k}", url=f"https://spam{p}.example/page")
        for p in range(6)
        for k in range(7)
    ]
    honest = [
        _claim("supporting", "secondary", f"honest {p}-{k}", url=f"https://news{p}.org/fomc")
        for p in range(6)
        for k in range(2)
    ]
    verified, cut = rank_claims(flood + honest, 25)
    names = [c["claim"] for c in verified]
    assert all(c["claim"] in names for c in honest)
    per_page = Counter(c["sourceUrl"] for c in verified)
    assert max(per_page.values()) <= 4
    assert len(verified) + len(cut) == len(flood) + len(honest)  # none dropped silently
    assert {c["cutReason"] for c in cut} <= {
        "page cap (4 claims per page)",
        "past the 25 claims verified",
    }


def test_rank_claims_site_cap_spans_the_pages_of_one_site():
    claims = [
        _claim("central", "primary", f"c{p}-{k}", url=f"https://one.example/p{p}")
        for p in range(5)
        for k in range(3)
    ]
    verified, cut = rank_claims(claims, 25)
    assert len(verified) == 8 and all("site cap" in c["cutReason"] for c in cut)


def test_corroborated_claims_come_first_whatever_the_ratings():
    fact = "The Committee decided to lower the target range for the federal funds rate"
    claims = [
        _claim("central", "primary", "loud", url="https://a.example/x", quote="A loud claim here"),
        _claim("tangential", "blog", "fact 1", url="https://b.example/x", quote=fact + " today."),
        _claim("tangential", "forum", "fact 2", url="https://c.org/y", quote=fact + " to zero."),
    ]
    verified, _ = rank_claims(claims, 25)
    assert verified[0]["claim"] == "fact 1" and verified[0]["corroboratedBy"] == ["c.org"]
    assert site_of("https://news.bbc.co.uk/a") == "bbc.co.uk"


F, T = {"refuted": False}, {"refuted": True}


def test_tally_survives_unanimous():
    t = tally([F, F, F])
    assert t["outcome"] == "survives" and t["survives"] and t["refutedVotes"] == 0
    assert t["vote"] == "3-0"


def test_tally_two_refutations_kill():
    t = tally([T, T, F])
    assert t["outcome"] == "refuted" and t["refutedVotes"] == 2 and t["vote"] == "1-2"


def test_tally_all_voters_failed_is_unverified_not_refuted():
    t = tally([None, None, None], votes_per_claim=3, refutations_required=2)
    assert t["outcome"] == "unverified" and t["abstained"] == 3 and not t["survives"]


def test_tally_one_valid_vote_is_unverified():
    assert tally([F, None, None])["outcome"] == "unverified"
    assert tally([T, None, None])["outcome"] == "unverified"


def test_tally_two_valid_one_refutation_survives():
    t = tally([F, T, None])
    assert t["outcome"] == "survives" and t["abstained"] == 1


def test_tally_two_refutations_with_a_failed_voter_is_refuted():
    assert tally([T, T, None])["outcome"] == "refuted"


def test_tally_accepts_models_and_treats_malformed_verdicts_as_failed():
    v = Verdict(refuted=False, evidence="e", confidence="high")
    assert tally([v, v, {"refuted": "yes"}])["outcome"] == "survives"
    assert tally([{}, {"evidence": "x"}, F])["outcome"] == "unverified"


def test_tally_honours_custom_thresholds():
    assert (
        tally([T, F, F, F, F], votes_per_claim=5, refutations_required=3)["outcome"] == "survives"
    )
    assert tally([T, T, T, F, F], votes_per_claim=5, refutations_required=3)["outcome"] == "refuted"


def _tallied(claim, url, verdicts):
    return {
        "claim": claim,
        "quote": "q",
        "sourceUrl": url,
        "sourceQuality": "primary",
        **tally(verdicts),
    }


def test_build_synth_blocks_include_vote_source_and_killed():
    ok = {"refuted": False, "confidence": "high", "evidence": "e"}
    block, killed = build_synth_blocks(
        [_tallied("X causes Y", "http://a", [ok, ok, ok])],
        [_tallied("Z", "http://b", [T, T, ok])],
    )
    assert "### [0] X causes Y" in block and "3-0" in block and "http://a" in block
    assert "Refuted claims" in killed and '"Z"' in killed and "1-2" in killed


def test_build_synth_blocks_without_killed():
    ok = {"refuted": False, "confidence": "high", "evidence": "e"}
    assert build_synth_blocks([_tallied("X", "http://a", [ok, ok])], [])[1] == ""


def test_build_stats_agent_calls_formula():
    s = build_stats(
        angles=5,
        sources=12,
        claims=20,
        voted=18,
        confirmed=10,
        killed=8,
        after_synth=6,
        dupes=3,
        budget_dropped=2,
        votes_per_claim=3,
    )
    assert s["agentCalls"] == 1 + 5 + 12 + 18 * 3 + 1
    assert s["confirmed"] == 10 and s["afterSynthesis"] == 6 and s["urlDupes"] == 3


def test_quote_in_text_tolerates_case_whitespace_curly_quotes_and_ellipses():
    text = "The Committee decided to  lower the target\nrange to 0 to 1/4 percent. It said “more”."
    assert quote_in_text("the committee decided to lower the target range", text)
    assert quote_in_text('"It said "more"."', text)
    assert quote_in_text("The Committee decided ... range to 0 to 1/4 percent", text)
    assert not quote_in_text("The Committee decided to raise the target", text)
    assert not quote_in_text("", text) and not quote_in_text("short", text)


def test_select_passages_keeps_relevant_sentences_within_budget():
    filler = " ".join(f"Sentence {i} is about weather." for i in range(400))
    text = filler + " The funds rate target was cut to zero in December. " + filler
    out = select_passages(text, "funds rate target", 600)
    assert len(out) <= 600 and "funds rate target was cut" in out
    assert select_passages("short text", "x", 600) == "short text"


def test_snapshot_pages_differing_by_id_are_two_pages(tmp_path):
    import json

    from refgate.tools.web_providers import SnapshotCorpus

    (tmp_path / "1.txt").write_text("Statement one.", encoding="utf-8")
    (tmp_path / "2.txt").write_text("Statement two.", encoding="utf-8")
    pages = [
        {"url": "https://fed.test/s?id=1", "file": "1.txt"},
        {"url": "https://fed.test/s?id=2", "file": "2.txt"},
    ]
    (tmp_path / "index.json").write_text(json.dumps({"pages": pages}), encoding="utf-8")
    corpus = SnapshotCorpus(tmp_path)
    assert corpus.fetch("https://fed.test/s?id=2").text == "Statement two."
    assert corpus.fetch("http://www.fed.test/s?id=1&utm_source=mail").text == "Statement one."
    assert corpus.fetch("https://fed.test/s").ok is False


def test_tally_uncertain_counts_as_refuted_two_of_three_kill():
    """Issue 30, item 3: {support, refutation with a source, refutation without one} is killed
    (the design: default to refuted when uncertain; two of three refutations kill it)."""
    no_source = {"refuted": True, "uncertain": True}
    t = tally([F, T, no_source])
    assert t["outcome"] == "refuted" and t["uncertainVotes"] == 1 and t["vote"] == "1-2"
    unsure_support = {"refuted": False, "uncertain": True}
    assert tally([F, F, unsure_support])["outcome"] == "survives"
    assert tally([F, unsure_support, no_source])["outcome"] == "refuted"

"""Conclusions checked by meaning (issue 45, effect 3): a recommendation, rating, risk verdict or
absence claim, English or Korean, must cite verified evidence or it is flagged, whether or not
anything untrusted was read; ordinary analytic sentences are not flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from refgate.gate import check_answer
from refgate.gate.conclusions import KIND_WORDS, RULES, conclusion_kind
from refgate.gate.containment import review
from refgate.refs import Ref

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"

#: The eight phrasings the issue found listed among the conclusions with no flag.
UNFLAGGED_BEFORE = [
    ("The stock is a strong buy.", "rating"),
    ("This bond is a safe investment.", "risk_verdict"),
    ("Avoid the company's bonds.", "recommendation"),
    ("Increase your position immediately.", "recommendation"),
    ("The company has no contingent liabilities.", "absence"),
    ("투자의견은 BUY입니다", "rating"),
    ("이 채권은 안전합니다", "risk_verdict"),
    ("우발채무가 없습니다", "absence"),
]


@pytest.mark.parametrize(("sentence", "kind"), UNFLAGGED_BEFORE)
def test_an_unbacked_conclusion_is_flagged_without_any_untrusted_read(sentence, kind):
    val = Ref.new("valueRef", {"values": {"revenue": 12.5}, "units": {"revenue": "percent"}})
    answer = f"Revenue grew 12.5 percent [{val.id}].\n\n{sentence}"
    refs = {val.id: val}
    report, conclusions = review(check_answer(answer, refs), answer, refs, untrusted_read=False)
    flags = [i for i in report.issues if i.code == "unsupported_conclusion"]
    assert [f.claim for f in flags] == [sentence] and flags[0].severity == "warn"
    assert conclusions[0].startswith("[unsupported ") and sentence in conclusions[0]
    assert conclusion_kind(sentence) == kind
    assert report.passed  # a flag, not a block: the answer goes out with it marked


def test_a_conclusion_citing_verified_evidence_is_not_flagged():
    doc = Ref.new("docRef", {"excerpt": "There are no contingent liabilities."}, source="filing")
    web = Ref.new("webRef", {"excerpt": "a strong buy"}, source_type="external")
    steered = Ref.new("valueRef", {"values": {"x": 1.0}}, influenced_by=["web_1"])
    refs = {r.id: r for r in (doc, web, steered)}
    answer = (
        f"The company has no contingent liabilities [{doc.id}].\n\n"
        f"The stock is a strong buy [{web.id}].\n\n"
        f"This bond is a safe investment [{steered.id}]."
    )
    report, _ = review(check_answer(answer, refs), answer, refs)
    flagged = {i.claim.split(" [")[0] for i in report.issues if i.code == "unsupported_conclusion"}
    # a filing backs its own absence claim; a web page (secondary) or an influenced value does not
    assert flagged == {"The stock is a strong buy", "This bond is a safe investment"}


def test_ordinary_analytic_sentences_are_not_conclusions():
    for sentence in (
        "Participants noted that the downside risks to growth had increased.",
        "Revenue increased 5% due to higher sales of memory chips.",
        "The Committee decided to keep the target range for the federal funds rate at 0 to 1/4 percent.",
        "당사는 환율변동위험을 주기적으로 모니터링하고 있습니다.",
        "해당 기준서의 개정으로 인하여 재무제표에 미치는 유의적인 영향은 없습니다.",
    ):
        assert conclusion_kind(sentence) is None, sentence


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data (the DART pointers)")
def test_held_out_flagging_meets_the_bar():
    from conclusion_flagging import load_set, measure

    for lang in ("en", "ko"):
        held = [i for i in load_set(lang, SHARED) if i.split == "held-out"]
        m = measure(held)
        assert m["conclusions"] >= 200 and m["ordinary"] >= 200
        assert m["recall"] >= 0.95 and m["false_rate"] <= 0.02, (lang, m)


def test_every_kind_a_rule_finds_has_its_words():
    """A finding names each kind ``conclusion_kind`` returns (a kind without words would fail
    the GATE on the first such sentence)."""
    assert {kind for kind, _ in RULES} == set(KIND_WORDS)

"""Question coverage (issue 28, observation 4): an answer that states nothing about the asked
quantity or period answers another question. ``refgate eval`` scores it wrong whatever numbers it
holds; the GATE lists it in its verdict (a warning, blocking with question_coverage = "block")."""

from __future__ import annotations

from pathlib import Path

import pytest

from refgate.cli.evaluation.questions import load_questions
from refgate.cli.evaluation.scoring import score_answer
from refgate.gate import check_answer
from refgate.refs import Ref

EVAL = Path(__file__).resolve().parents[2] / "examples" / "us-macro" / "eval.jsonl"
V, T, D = "val_00000000a1", "tbl_00000000b2", "doc_00000000c3"
KINDS = {V: {"kind": "valueRef"}, T: {"kind": "tableRef"}, D: {"kind": "docRef"}}
#: The same correctly cited unemployment figure, given to every question.
OFF_TOPIC = f"The US unemployment rate was 9.6% in 2009Q3 [{V}]."
#: What a model answering each question correctly writes (citations as in a run).
CORRECT = {
    "unemp-2009q3": f"The US unemployment rate was 9.6% in 2009Q3 [{V}].",
    "gdp-2009q3": f"US real GDP was $12,990.3 billion (chained 2005 dollars) in 2009Q3 [{V}].",
    "unemp-change-2008q3-2009q3": f"The US unemployment rate rose 3.6 percentage points from "
    f"2008Q3 to 2009Q3 [{V}].",
    "gdp-growth-2008q4": f"US real GDP changed -1.37% quarter on quarter in 2008Q4 [{V}].",
    "tbill-2008q4": f"The 3-month Treasury bill rate was 0.12% in 2008Q4 [{V}].",
    "infl-2008q4": f"The annualised quarterly inflation rate was -8.79% in 2008Q4 [{V}].",
    "pop-2009q3": f"The US population was 308.0 million at the end of 2009Q3 [{V}].",
    "unemp-mean-2009": f"The average US unemployment rate over 2009 was 8.97% [{V}].",
    "unemp-peak-quarter": f"The US unemployment rate peaked at 10.7% in 1982Q4 [{V}].",
    "cpi-2000-01": f"The CPI-U index level was 168.8 in January 2000 [{V}].",
    "cpi-infl-2022-06": f"US year-on-year CPI inflation was 9.1% in June 2022 [{V}].",
    "cpi-mom-2022-06": f"Month-on-month CPI inflation was 1.37% in June 2022 [{V}].",
    "cpi-infl-peak-since-1990": f"Year-on-year CPI inflation was highest in June 2022, at 9.1% [{V}].",
    "treasury-peak": f"The 10-year Treasury yield peaked at 15.32% in September 1981 [{V}].",
    "treasury-2020-01": f"The US 10-year Treasury yield was 1.76% in January 2020 [{V}].",
    "emp-unemp-2020": f"The US annual unemployment rate was 8.1% in 2020 [{V}].",
    "labor-force-change-2019-2020": f"The US civilian labour force changed by -2,797 thousand "
    f"persons from 2019 to 2020 [{V}].",
    "sp500-top5-market-cap": "By market capitalisation, the five largest S&P 500 constituents "
    f"are NVDA, AAPL, GOOGL, GOOG and MSFT [{T}].",
    "sp500-highest-pe": f"MOH has the highest price to earnings ratio, 1,251.8 [{V}].",
    "sp500-largest-sector": f"Health Care Equipment has the most constituents: 18 [{V}].",
    "fomc-zero-lower-bound": "The FOMC set the federal funds rate target range to 0 to 1/4 "
    f"percent on December 16, 2008 [{D}].",
    "refuse-unemp-2015q2": "The macro dataset does not cover 2015Q2: it cannot answer this.",
    "refuse-germany-gdp": "The workspace has no data on Germany: I cannot answer this.",
    "refuse-msft-employees": "The workspace has no data on Microsoft's employees: I cannot "
    "answer this.",
}


def questions():
    return {q.id: q for q in load_questions(EVAL)}


def test_every_sample_question_has_a_correct_answer_here() -> None:
    assert set(CORRECT) == set(questions())


@pytest.mark.parametrize("qid", sorted(CORRECT))
def test_correct_answers_are_scored_correct(qid: str) -> None:
    score = score_answer(questions()[qid], CORRECT[qid], KINDS)
    assert score.correct, score.why


@pytest.mark.parametrize("qid", sorted(CORRECT))
def test_the_off_topic_answer_is_scored_wrong(qid: str) -> None:
    score = score_answer(questions()[qid], OFF_TOPIC, KINDS)
    assert score.correct is (qid == "unemp-2009q3"), score.why


REF = Ref(
    id=V,
    kind="valueRef",
    payload={"values": {"unemp": 9.6}, "units": {"unemp": "%"}, "period": "2009Q3"},
)


def test_the_gate_lists_what_the_question_asks_that_no_verified_claim_states() -> None:
    question = "What was US real GDP in 2008Q3?"
    report = check_answer(OFF_TOPIC, [REF], question=question)
    assert report.passed  # a warning by default
    found = [i.detail for i in report.warnings if i.code == "question_not_covered"]
    assert any("2008Q3" in d for d in found) and any("gdp" in d for d in found), found
    blocked = check_answer(OFF_TOPIC, [REF], question=question, coverage="block")
    assert not blocked.passed
    assert check_answer(
        OFF_TOPIC, [REF], question="What was the unemployment rate in 2009Q3?", coverage="block"
    ).passed


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        # The gold number, said of another quantity or another period.
        ("unemp-mean-2009", f"Real GDP grew 8.97% in 2009 [{V}]."),
        ("tbill-2008q4", f"The unemployment rate fell 0.12 points in 2008Q4 [{V}]."),
        ("emp-unemp-2020", f"The US unemployment rate was 8.1% in 2019 [{V}]."),
        ("pop-2009q3", f"Employment was 308.0 million in 2009Q3 [{V}]."),
    ],
)
def test_the_gold_number_about_something_else_is_wrong(qid: str, answer: str) -> None:
    score = score_answer(questions()[qid], answer, KINDS)
    assert not score.correct
    assert "states nothing about" in score.why

"""Scoring one answer: numbers at the precision written, scale words, regexes, refusals."""

import pytest

from refgate.cli.evaluation.questions import EvalError, EvalQuestion, parse_questions
from refgate.cli.evaluation.scoring import is_refusal, score_answer


def q(**kw):
    return EvalQuestion(id="q1", question="How much?", **kw)


@pytest.mark.parametrize(
    ("gold", "answer", "ok"),
    [
        (9.6, "The rate was 9.6% [val_0123456789].", True),
        (9.63, "The rate was 9.6%.", True),  # written to one decimal: 9.63 rounds to it
        (9.6, "The rate was 9.64%.", False),  # written to two decimals: 9.64 is not 9.60
        (9.6, "The rate was 10%.", True),  # an integer stands for 9.5 up to 10.5
        (9.4, "The rate was 10%.", False),
        (12990.341, "Real GDP was 12,990.3 billion USD.", True),
        ("12.99 trillion", "Real GDP was $12,990.3 billion.", True),  # the gold's precision
        ("12.99 trillion", "Real GDP was $12,890.3 billion.", False),
        (-1.37, "GDP fell 1.37% in the quarter.", True),
        (3.6, "It rose by 3.5 points.", False),
    ],
)
def test_numbers_match_at_the_precision_the_answer_writes(gold, answer, ok):
    assert score_answer(q(numbers=[gold]), answer).correct is ok


def test_a_relative_tolerance_widens_the_match():
    assert not score_answer(q(numbers=[100.0]), "It was 100.8.").correct
    assert score_answer(q(numbers=[100.0], tolerance=0.01), "It was 100.8.").correct


def test_every_gold_number_and_pattern_must_appear():
    question = q(numbers=[9.6, 6.0], text=[r"2009\s*Q3"])
    s = score_answer(question, "In 2009Q3 the rate was 9.6%.")
    assert not s.correct and s.numbers_missing == ["6.0"] and s.numbers_found == ["9.6"]
    assert score_answer(question, "In 2009 Q3 it was 9.6%, up from 6.0%.").correct
    assert score_answer(question, "In 2009Q4 it was 9.6%, up from 6.0%.").text_missing


def test_the_not_verified_section_is_not_part_of_the_answer():
    answer = (
        "The rate was high.\n\n### Not verified\n\nThese claims could not be checked "
        "against the cited evidence:\n\n- The rate was 9.6%."
    )
    assert not score_answer(q(numbers=[9.6]), answer).correct


def test_required_kinds_must_be_cited_not_merely_issued():
    refs = {"val_0123456789": {"kind": "valueRef"}, "doc_0123456789": {"kind": "docRef"}}
    question = q(numbers=[9.6], refs_required=["valueRef"])
    assert score_answer(question, "It was 9.6% [val_0123456789].", refs).correct
    s = score_answer(question, "It was 9.6% [doc_0123456789].", refs)
    assert not s.correct and s.kinds_missing == ["valueRef"]


def test_refusals():
    refuse = q(expect="refuse")
    assert score_answer(refuse, "The dataset does not cover 2015; it ends in 2009Q3.").correct
    assert score_answer(refuse, "I cannot determine this from the available data.").correct
    assert score_answer(refuse, "데이터가 없습니다.").correct
    assert not score_answer(refuse, "It was 5.3% [val_0123456789].").correct
    assert is_refusal("No data for Germany is available in this workspace.")
    assert not is_refusal("Unemployment was 9.6% in 2009Q3, up from 6.0%.")


def test_a_question_file_error_names_the_line_and_field():
    with pytest.raises(EvalError, match=r"q.jsonl:2: field expect"):
        parse_questions(
            ['{"id": "a", "question": "x"}', '{"id": "b", "question": "y", "expect": "maybe"}'],
            "q.jsonl",
        )
    with pytest.raises(EvalError, match=r":1: not a JSON object"):
        parse_questions(["{nope"], "q.jsonl")
    with pytest.raises(EvalError, match="repeats line 1"):
        parse_questions(['{"id": "a", "question": "x"}', '{"id": "a", "question": "y"}'])
    with pytest.raises(EvalError, match="field question"):
        parse_questions(['{"id": "a", "question": "   "}'])
    with pytest.raises(EvalError, match="bad regular expression"):
        parse_questions(['{"id": "a", "question": "x", "text": ["("]}'])
    with pytest.raises(EvalError, match="field id"):
        parse_questions(['{"id": "../etc", "question": "x"}'])
    with pytest.raises(EvalError, match="no questions"):
        parse_questions(["", "# only a comment"])


@pytest.mark.parametrize("gold", ["NaN", "Infinity", "-Infinity", '"nan"', '"inf"'])
def test_non_finite_gold_numbers_are_refused(gold):
    """``NaN`` gold was accepted and could never match (issue 31, item 7)."""
    line = f'{{"id": "q1", "question": "x?", "numbers": [1.5, {gold}]}}'
    with pytest.raises(EvalError, match="gold.jsonl:1: field numbers.*not a finite number"):
        parse_questions([line], "gold.jsonl")


def test_a_catastrophic_gold_pattern_is_refused_when_the_file_is_read():
    line = '{"id": "q1", "question": "x?", "text": ["(a+)+$"]}'
    with pytest.raises(EvalError, match="catastrophic backtracking"):
        parse_questions([line], "gold.jsonl")


def test_a_pattern_slow_on_one_answer_is_bounded_there():
    """A pattern the file probes do not catch still cannot hang scoring: the search has a time
    bound, past which the text counts as missing."""
    q = EvalQuestion(id="q1", question="x?", text=["(x+x+)+y"])
    score = score_answer(q, "x" * 5_000)
    assert not score.correct and "(x+x+)+y" in score.why

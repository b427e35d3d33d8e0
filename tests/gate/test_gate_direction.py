"""The direction rule of binding: a claim that states a fall ("fell 5%") is not backed by a
positive value at a change place (a "% Change" column, an "Increase (decrease)" column, a
``revenue_growth`` value), which says the quantity rose; a claim that states a rise is not backed
by a negative one (the sign rule). Levels reached ("fell to 95") and places whose labels state a
direction of their own ("Decrease in revenue") are not changes of unknown direction.
"""

from __future__ import annotations

from refgate.gate import check_answer
from refgate.refs import Ref

T, V = "tbl_00000000d1", "val_00000000d2"


def blocked(answer: str, refs: list[Ref], vocabulary: dict[str, str] | None = None) -> list[str]:
    return [i.code for i in check_answer(answer, refs, vocabulary=vocabulary).blocking]


def table(rows: list[list[object]], columns: list[str] | None = None) -> Ref:
    return Ref(
        id=T,
        kind="tableRef",
        payload={"columns": columns or ["item", "2019", "2018", "% Change"], "rows": rows},
    )


ROSE = table([["Revenue", 105, 100, 5.0], ["Operating income", 40, 38, 5.3]])
FELL = table([["Revenue", 95, 100, -5.0]])


def test_a_fall_is_not_backed_by_a_positive_change() -> None:
    for answer in (
        f"Revenue fell 5% [{T}].",
        f"Revenue decreased by 5% in 2019 [{T}].",
        f"Revenue was 5% lower [{T}].",
        f"Revenue fell 5% to 105 in 2019 [{T}].",
        f"Revenue fell by 5, or 5%, in 2019 [{T}].",
    ):
        assert set(blocked(answer, [ROSE])) == {"value_of_other_sign"}, answer
    report = check_answer(f"Revenue fell 5% [{T}].", [ROSE])
    assert "5 is Revenue, % Change" in report.blocking[0].detail
    assert "a rise" in report.blocking[0].detail


def test_a_fall_is_backed_by_a_negative_change() -> None:
    for answer in (
        f"Revenue fell 5% [{T}].",
        f"Revenue was 5% lower in 2019 [{T}].",
        f"Revenue fell 5% to 95 in 2019 [{T}].",
        f"Revenue was -5% [{T}].",
    ):
        assert blocked(answer, [FELL]) == [], answer


def test_a_rise_is_not_backed_by_a_negative_change() -> None:
    # The sign rule already blocks it: kept blocked.
    for answer in (f"Revenue grew 5% [{T}].", f"Revenue rose 5% to 95 in 2019 [{T}]."):
        assert blocked(answer, [FELL]) == ["value_of_other_sign"], answer
    assert blocked(f"Revenue grew 5% [{T}].", [ROSE]) == []


def test_a_level_reached_or_a_claim_with_no_direction_is_not_a_change() -> None:
    for answer in (
        f"Revenue fell to 95 in 2019 [{T}].",
        f"Revenue was down from 100 in 2018 [{T}].",
        f"Revenue was 95 in 2019 [{T}].",
    ):
        assert blocked(answer, [FELL]) == [], answer
    # "fell to 105": a level, even at a table whose change rose.
    assert blocked(f"Revenue fell to 105 in 2019 [{T}].", [ROSE]) == []
    # A clause that also states a rise says no fall of its own.
    assert blocked(f"Despite lower prices, revenue rose 5% [{T}].", [ROSE]) == []


def test_a_label_that_states_its_direction_backs_a_fall() -> None:
    decrease = table([["Decrease in revenue (%)", 5.0]], ["item", "2019"])
    decline = table([["Revenue", 5.0]], ["item", "Decline (%)"])
    favourable = table([["Revenue", 5.0]], ["item", "Variance favourable (unfavourable) %"])
    for ref in (decrease, decline, favourable):
        assert blocked(f"Revenue fell 5% [{T}].", [ref]) == [], ref.payload


def test_increase_decrease_columns_and_growth_rows_are_changes() -> None:
    signed = table([["Revenue", 105, 100, 5]], ["item", "2019", "2018", "Increase (Decrease)"])
    assert blocked(f"Revenue decreased by 5 [{T}].", [signed]) == ["value_of_other_sign"]
    assert blocked(f"Revenue increased by 5 [{T}].", [signed]) == []
    growth = table([["Total growth", 5.0, -2.0]], ["item", "2019", "2018"])
    assert blocked(f"Total growth fell 5% in 2019 [{T}].", [growth]) == ["value_of_other_sign"]
    assert blocked(f"Total growth fell 2% in 2018 [{T}].", [growth]) == []


def test_a_cost_row_shown_negative_keeps_its_own_convention() -> None:
    # Costs shown negative: a positive change may be a fall of the cost, so no direction.
    negative = table([["Cost of sales", -95, -100, 5.0]])
    assert blocked(f"Cost of sales fell 5% [{T}].", [negative]) == []
    positive = table([["Cost of sales", 105, 100, 5.0]])
    assert blocked(f"Cost of sales fell 5% [{T}].", [positive]) == ["value_of_other_sign"]


def test_named_growth_values_are_changes() -> None:
    growth = Ref(
        id=V,
        kind="valueRef",
        payload={"values": {"revenue_growth": 5.0}, "units": {"revenue_growth": "%"}},
    )
    assert blocked(f"Revenue growth fell 5% [{V}].", [growth]) == ["value_of_other_sign"]
    assert blocked(f"Revenue growth rose 5% [{V}].", [growth]) == []
    assert blocked(f"Revenue growth fell to 5% [{V}].", [growth]) == []
    level = Ref(id=V, kind="valueRef", payload={"values": {"revenue": 5.0}})
    assert blocked(f"Revenue fell 5 [{V}].", [level]) == []
    # A value whose name says nothing of a change, described as one by the workspace.
    coded = Ref(id=V, kind="valueRef", payload={"values": {"a191rl1": 2.5}})
    gdp = {"a191rl1": "Real GDP, percent change from preceding period"}
    assert blocked(f"Real GDP fell 2.5 [{V}].", [coded], gdp) == ["value_of_other_sign"]
    assert blocked(f"Real GDP fell 2.5 [{V}].", [coded]) != []  # unnamed: another quantity
    # A cost's change as a named value: its sign convention is unknown, so no direction.
    cost = Ref(id=V, kind="valueRef", payload={"values": {"cost_growth": 5.0}})
    assert blocked(f"Cost growth fell 5 [{V}].", [cost]) == []


def test_fall_words_of_another_predicate_or_a_compound_state_no_fall() -> None:
    for answer in (
        f"Revenue, before the write-down, changed by 5% [{T}].",
        f"Revenue growth, broken down by segment, was 5% [{T}].",
        f"After prices were cut, revenue was 5% above 2018 [{T}].",
    ):
        assert blocked(answer, [ROSE]) == [], answer
    assert blocked(f"Revenue fell sharply, by 5% [{T}].", [ROSE]) == ["value_of_other_sign"]
    assert blocked(f"After prices were cut, revenue was 5% lower [{T}].", [ROSE]) == [
        "value_of_other_sign"
    ]


D = "doc_00000000d3"


def doc(text: str) -> Ref:
    return Ref(id=D, kind="docRef", payload={"text": text})


def test_a_sentence_that_states_a_rise_backs_no_fall() -> None:
    rose = doc("Sales rose 12% in 2019. Costs were flat.")
    for answer in (f"Sales fell 12% in 2019 [{D}].", f"Sales were 12% lower in 2019 [{D}]."):
        assert blocked(answer, [rose]) == ["value_of_other_sign"], answer
    report = check_answer(f"Sales fell 12% in 2019 [{D}].", [rose])
    detail = report.blocking[0].detail
    assert "12 is Sales rose 12% in 2019." in detail and "a rise" in detail, detail
    for answer in (
        f"Sales rose 12% in 2019 [{D}].",
        f"Sales grew 12% [{D}].",
        f"Sales: 12% [{D}].",
    ):
        assert blocked(answer, [rose]) == [], answer


def test_a_sentence_that_states_a_fall_backs_no_rise() -> None:
    fell = doc("Revenue decreased by $2.1 million, or 5%, compared to 2018.")
    for answer in (f"Revenue increased 5% [{D}].", f"Revenue grew by $2.1 million [{D}]."):
        assert blocked(answer, [fell]) == ["value_of_other_sign"], answer
    assert "a fall" in check_answer(f"Revenue increased 5% [{D}].", [fell]).blocking[0].detail
    for answer in (f"Revenue decreased 5% [{D}].", f"Revenue fell by $2.1 million [{D}]."):
        assert blocked(answer, [fell]) == [], answer


def test_a_sentence_without_a_direction_or_with_a_level_never_blocks() -> None:
    # "fell to 12%" states a level reached, not the size of a fall: either claim binds it.
    for text in (
        "Sales were 12% of revenue in 2019.",
        "Sales fell to 12% in 2019.",
        "Sales rose to 12% in 2019.",
        "Sales rose 12% while costs fell 12%.",
    ):
        for answer in (
            f"Sales fell 12% [{D}].",
            f"Sales rose 12% [{D}].",
            f"Sales were 12% [{D}].",
        ):
            assert blocked(answer, [doc(text)]) == [], (text, answer)


def test_a_fall_stated_with_a_noun_is_a_fall() -> None:
    for answer in (
        f"Revenue saw a decline of 5% [{T}].",
        f"Revenue posted a decrease of about 5% in 2019 [{T}].",
        f"Revenue had a 5% reduction [{T}].",
        f"The decline in revenue was 5% [{T}].",
        f"The drop in revenue (net of returns) was 5% in 2019 [{T}].",
    ):
        assert blocked(answer, [ROSE]) == ["value_of_other_sign"], answer
        assert blocked(answer, [FELL]) == [], answer
    # a noun of a rise beside it, a level reached, another sentence's noun: no fall stated
    for answer in (
        f"Revenue saw an increase of 5% [{T}].",
        f"Revenue posted growth of 5% [{T}].",
        f"The decline in revenue ended. Revenue was 5% above 2018 [{T}].",
        f"Revenue declined to 105 in 2019 [{T}].",
    ):
        assert blocked(answer, [ROSE]) == [], answer


def test_a_sentence_that_states_a_change_with_a_noun_has_that_direction() -> None:
    rose = doc("Sales saw an increase of $2.1 million in 2019. Costs were flat.")
    fell = doc("The decrease in sales was $2.1 million, a 5% reduction.")
    assert blocked(f"Sales fell $2.1 million [{D}].", [rose]) == ["value_of_other_sign"]
    assert blocked(f"Sales rose $2.1 million [{D}].", [rose]) == []
    for answer in (f"Sales grew $2.1 million [{D}].", f"Sales increased 5% [{D}]."):
        assert blocked(answer, [fell]) == ["value_of_other_sign"], answer
    for answer in (f"Sales fell $2.1 million [{D}].", f"Sales were 5% lower [{D}]."):
        assert blocked(answer, [fell]) == [], answer

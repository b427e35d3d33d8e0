"""Binding (issue 28): each number of a claim is bound to one location of the cited payload (a
table cell with its row label and column header, a named value, a sentence of a document), and
the claim's metric words, period and unit kind are checked against that location jointly.

Observations 1-3 of the issue, each reproduced as it was reported, then the rule's edges.
"""

from __future__ import annotations

from refgate.gate import check_answer
from refgate.refs import Ref

T, V, D = "tbl_00000000a1", "val_00000000b2", "doc_00000000c3"

TABLE = Ref(
    id=T,
    kind="tableRef",
    payload={
        "columns": ["item", "2019", "2018"],
        "rows": [
            ["Revenue", 4000, 3500],
            ["Cost of sales", 5000, 2900],
            ["Employees", 120, 110],
        ],
        "units": {},
        "meta": {"unit": "USD thousand"},
    },
)
UNEMPLOYMENT = Ref(
    id=V,
    kind="valueRef",
    payload={
        "values": {"unemployment_rate": 9.6},
        "units": {"unemployment_rate": "%"},
        "period": "2009Q3",
    },
)
COMMITTEE = Ref(
    id=D,
    kind="docRef",
    payload={"text": "The committee has 5 members and met 12 times in 2008."},
    source_type="external",
)


def blocked(answer: str, refs: list[Ref]) -> list[str]:
    return [i.code for i in check_answer(answer, refs).issues if i.severity == "block"]


def detail(answer: str, refs: list[Ref]) -> str:
    return " | ".join(i.detail for i in check_answer(answer, refs).blocking)


# Observation 1: a table cell of another row or another column -------------------------------


def test_another_rows_value_is_blocked_and_named() -> None:
    answer = f"Revenue was $5,000 thousand in 2019 [{T}]."
    assert blocked(answer, [TABLE]) == ["value_of_other_quantity"]
    assert "5,000 is Cost of sales, 2019" in detail(answer, [TABLE])


def test_same_rows_value_for_another_year_is_blocked() -> None:
    answer = f"Revenue was $3,500 thousand in 2019 [{T}]."
    assert blocked(answer, [TABLE]) == ["value_of_other_period"]
    assert "3,500 is Revenue, 2018" in detail(answer, [TABLE])


def test_head_count_of_another_year_is_blocked() -> None:
    assert blocked(f"The company had 120 employees in 2018 [{T}].", [TABLE]) == [
        "value_of_other_period"
    ]


def test_right_cells_pass_in_every_wording() -> None:
    for answer in (
        f"Revenue was $4,000 thousand in 2019 [{T}].",
        f"Revenue was $4.0 million in 2019 [{T}].",
        f"Revenue was $3,500 thousand in 2018 [{T}].",
        f"Cost of sales was $5,000 thousand in 2019 [{T}].",
        f"The company had 120 employees in 2019 [{T}].",
        f"In 2019 revenue was $4,000 thousand and cost of sales $5,000 thousand [{T}].",
    ):
        assert check_answer(answer, [TABLE]).passed, (answer, detail(answer, [TABLE]))


def test_metric_less_claim_takes_the_words_of_the_sentence_before() -> None:
    good = f"Revenue grew in 2019 [{T}]. It reached $4,000 thousand in 2019 [{T}]."
    bad = f"Revenue grew in 2019 [{T}]. It reached $5,000 thousand in 2019 [{T}]."
    assert check_answer(good, [TABLE]).passed, detail(good, [TABLE])
    assert "value_of_other_quantity" in blocked(bad, [TABLE])


# Observation 2: a named value of another quantity ------------------------------------------


def test_value_of_another_variable_is_blocked() -> None:
    for answer in (
        f"Real GDP grew 9.6% in 2009Q3 [{V}].",
        f"Inflation was 9.6% in 2009Q3 [{V}].",
    ):
        assert blocked(answer, [UNEMPLOYMENT]) == ["value_of_other_quantity"], answer
    assert "unemployment_rate" in detail(f"Inflation was 9.6% in 2009Q3 [{V}].", [UNEMPLOYMENT])


def test_named_value_passes_and_its_period_is_its_own() -> None:
    assert check_answer(f"The unemployment rate was 9.6% in 2009Q3 [{V}].", [UNEMPLOYMENT]).passed
    assert set(blocked(f"The unemployment rate was 9.6% in 2009Q2 [{V}].", [UNEMPLOYMENT])) == {
        "value_of_other_period",
        "unsupported_date_claim",
    }


def test_workspace_descriptions_are_synonyms() -> None:
    ref = Ref(
        id=V, kind="valueRef", payload={"values": {"lrun64tt": 9.6}, "units": {"lrun64tt": "%"}}
    )
    answer = f"Unemployment was 9.6% [{V}]."
    assert blocked(answer, [ref]) == ["value_of_other_quantity"]
    vocab = {"lrun64tt": "Civilian unemployment rate, seasonally adjusted"}
    assert check_answer(answer, [ref], vocabulary=vocab).passed


# Observation 3: a count in a document backs no percentage -----------------------------------


def test_head_count_in_a_document_backs_no_percentage() -> None:
    answer = f"The unemployment rate was 5% in 2008 [{D}]."
    codes = blocked(answer, [COMMITTEE])
    assert "unit_kind_mismatch" in codes or "value_of_other_quantity" in codes, codes
    assert check_answer(f"The committee had 5 members in 2008 [{D}].", [COMMITTEE]).passed


def test_document_sentence_is_the_location() -> None:
    doc = Ref(
        id=D,
        kind="docRef",
        payload={"text": "Sales rose 12% in 2019. Headcount fell 8% in 2019."},
        source_type="external",
    )
    assert check_answer(f"Sales rose 12% in 2019 [{D}].", [doc]).passed
    assert blocked(f"Sales rose 8% in 2019 [{D}].", [doc]) == ["value_of_other_quantity"]


# Ambiguity and unit kinds ---------------------------------------------------------------------


def test_value_at_several_locations_passes_when_one_matches_the_whole_quantity() -> None:
    ref = Ref(
        id=T,
        kind="tableRef",
        payload={
            "columns": ["item", "2019", "2018"],
            "rows": [["Revenue", 4000, 3900], ["Cost of sales", 3900, 4000]],
            "meta": {"unit": "USD thousand"},
        },
    )
    assert check_answer(f"Revenue was $4,000 thousand in 2019 [{T}].", [ref]).passed
    assert check_answer(f"Cost of sales was $4,000 thousand in 2018 [{T}].", [ref]).passed
    # 3,900 is Revenue in 2018 and Cost of sales in 2019: neither is Revenue in 2019.
    assert blocked(f"Revenue was $3,900 thousand in 2019 [{T}].", [ref]) == [
        "value_of_other_period"
    ]


def test_percent_claim_of_a_currency_cell_is_a_unit_kind_mismatch() -> None:
    assert blocked(f"Revenue was 4,000% in 2019 [{T}].", [TABLE]) == ["unit_kind_mismatch"]


# The sign: a number without a sign states a positive value unless its clause says otherwise ----

RESULTS = Ref(
    id=T,
    kind="tableRef",
    payload={
        "columns": ["item", "2019", "2018"],
        "rows": [
            ["Operating income", -5, 7],
            ["Net loss", -12, -3],
            ["Cost of sales", -5000, -2900],
            ["Revenue change (%)", -5.0, 3.0],
        ],
    },
)
GROWTH = Ref(
    id=V,
    kind="valueRef",
    payload={"values": {"gdp_growth": -2.5}, "units": {"gdp_growth": "%"}, "period": "2009Q2"},
)


def test_unsigned_number_backed_by_a_negative_level_is_blocked() -> None:
    for answer, refs in [
        (f"Operating income was 5 in 2019 [{T}].", [RESULTS]),
        (f"The revenue change was 5% in 2019 [{T}].", [RESULTS]),
        (f"Revenue rose 5% in 2019 [{T}].", [RESULTS]),
        (f"Revenue change fell to 5% in 2019 [{T}].", [RESULTS]),
        (f"GDP growth was 2.5% in 2009Q2 [{V}].", [GROWTH]),
    ]:
        assert blocked(answer, refs) == ["value_of_other_sign"], answer
    assert "-5 is Operating income, 2019" in detail(
        f"Operating income was 5 in 2019 [{T}].", [RESULTS]
    )


def test_a_sign_or_words_of_a_loss_or_a_fall_back_a_negative_value() -> None:
    for answer, refs in [
        (f"Operating income was -5 in 2019 [{T}].", [RESULTS]),
        (f"Operating income was (5) in 2019 [{T}].", [RESULTS]),
        (f"Operating income was a loss of 5 in 2019 [{T}].", [RESULTS]),
        (f"Operating income decreased by 5 in 2019 [{T}].", [RESULTS]),
        (f"Net loss was 12 in 2019 [{T}].", [RESULTS]),
        (f"Cost of sales was 5,000 in 2019 [{T}].", [RESULTS]),
        (f"Revenue fell 5% in 2019 [{T}].", [RESULTS]),
        (f"Revenue change was 5% lower in 2019 [{T}].", [RESULTS]),
        (f"Revenue fell 5%, or 5.0%, in 2019 [{T}].", [RESULTS]),
        (f"GDP growth was -2.5% in 2009Q2 [{V}].", [GROWTH]),
        (f"GDP contracted 2.5% in 2009Q2 [{V}].", [GROWTH]),
    ]:
        assert blocked(answer, refs) == [], answer


def test_a_signed_number_must_have_the_values_sign() -> None:
    assert blocked(f"Operating income was 7 in 2018 [{T}].", [RESULTS]) == []
    assert blocked(f"Operating income was -7 in 2018 [{T}].", [RESULTS]) != []


def test_a_spanning_header_written_once_covers_its_period_columns() -> None:
    # A flattened two-row header: each group's label sits on its first column only.
    table = Ref(
        id=T,
        kind="tableRef",
        payload={
            "columns": ["item", "Appropriation (NT$ thousand) 2018", "2019",
                        "Cash dividend per share (NT$) 2018", "2019"],
            "rows": [["Cash dividends", "6,916,105", "9,765,155", "$0.58", "$0.75"]],
        },
    )  # fmt: skip
    assert blocked(f"The cash dividend per share was $0.75 in 2019 [{T}].", [table]) == []
    assert blocked(f"The cash dividend per share was $0.58 in 2019 [{T}].", [table]) == [
        "value_of_other_period"
    ]


def test_a_percent_row_or_column_holds_percentages_in_a_currency_table() -> None:
    # The table's currency and scale are for its amounts; a row or column labelled "%" or
    # "percent" holds percentages.
    table = Ref(
        id=T,
        kind="tableRef",
        payload={
            "columns": ["item", "2019", "Change (%)"],
            "rows": [
                ["Revenue", 4000, 5.1],
                ["Gross margin (%)", 35.2, 1.4],
                ["Operating margin, percent", 12.5, 0.3],
            ],
            "meta": {"unit": "USD", "scale": "million"},
        },
    )
    for ok in (
        f"Gross margin was 35.2% in 2019 [{T}].",
        f"Operating margin was 12.5% in 2019 [{T}].",
        f"Revenue was $4,000 million in 2019 [{T}].",
        f"Revenue grew 5.1% [{T}].",
    ):
        assert blocked(ok, [table]) == [], ok
    for wrong in (
        f"Gross margin was $35.2 million in 2019 [{T}].",
        f"Operating margin was $12.5 million in 2019 [{T}].",
        f"Revenue was 4,000% in 2019 [{T}].",
    ):
        assert blocked(wrong, [table]) == ["unit_kind_mismatch"], wrong


def test_except_percentages_in_a_header_leaves_its_amounts_amounts() -> None:
    table = Ref(
        id=T,
        kind="tableRef",
        payload={
            "columns": ["item", "2019 Amount (In thousands, except percentages)"],
            "rows": [["Interest income", "$13,281"], ["Interest income margin %", "4.2"]],
        },
    )
    assert blocked(f"Interest income was $13,281 in 2019 [{T}].", [table]) == []
    assert blocked(f"Interest income margin was 4.2% in 2019 [{T}].", [table]) == []
    assert blocked(f"Interest income was 13,281% in 2019 [{T}].", [table]) == ["unit_kind_mismatch"]

"""The GATE on tables as annual reports print them (issue 47) and on real DART statements
(issue 43). Each table below is a real one, cut to a few rows: TAT-QA dev (CC BY 4.0) tables as
a loader issues them (first row as the columns, an empty header cell named "column N"), and
rows of the statements dataset built from the real fnlttSinglAcntAll answers in
``../shared/data/dart-real`` (figures quoted, as SOURCES.md allows)."""

from __future__ import annotations

import pytest

from refgate.gate import check_answer
from refgate.refs import Ref


def loader_table(rows: list[list[str]], rid: str = "tbl_00000000a1") -> Ref:
    """A table as ``retrieval.loaders.base.table_from_rows`` issues it."""
    columns = [c or f"column {j + 1}" for j, c in enumerate(rows[0])]
    return Ref(id=rid, kind="tableRef", payload={"columns": columns, "rows": rows[1:]})


def passes(claim: str, *refs: Ref) -> bool:
    return check_answer(claim, list(refs)).passed


# TAT-QA 53474060: a caption ("Fiscal"), the years, a unit row, then a section.
CAPTION_FIRST = [
    ["", "", "Fiscal", ""],
    ["", "2019", "2018", "2017"],
    ["", "", "(in millions)", ""],
    ["Transportation Solutions:", "", "", ""],
    ["Automotive", "$ 5,686", "$ 6,092", "$  5,228"],
    ["Commercial transportation", "1,221", "1,280", "997"],
]


def test_a_caption_row_above_the_years_is_no_column_header() -> None:
    ref = loader_table(CAPTION_FIRST)
    t = ref.id
    assert passes(f"Automotive sales were $5,686 million in 2019 [{t}].", ref)
    assert passes(f"Commercial transportation was 1,280 in 2018 [{t}].", ref)
    assert not passes(f"Automotive sales were $6,092 million in 2019 [{t}].", ref)  # 2018's
    assert not passes(f"Commercial transportation was 1,221 in 2017 [{t}].", ref)  # 2019's
    # the unit row under the years is the table's scale: $5.7 billion is $5,686 million
    assert passes(f"Automotive sales were about $5.7 billion in 2019 [{t}].", ref)


def test_the_same_table_laid_out_in_a_documents_text_binds_alike() -> None:
    """A PDF's ruled table in a docRef's excerpt, in markdown rows (``loaders.ruled``)."""
    lines = ["| " + " | ".join(c or f"column {j + 1}" for j, c in enumerate(CAPTION_FIRST[0]))
             + " |", "| --- | --- | --- | --- |"]  # fmt: skip
    lines += ["| " + " | ".join(r) + " |" for r in CAPTION_FIRST[1:]]
    text = "Net sales by segment were as follows.\n" + "\n".join(lines) + "\nSee note 3."
    doc = Ref(id="doc_00000000b1", kind="docRef", payload={"excerpt": text, "source": "ar.pdf"})
    d = doc.id
    assert passes(f"Automotive was $5,686 million in 2019 [{d}].", doc)
    assert not passes(f"Automotive was $6,092 million in 2019 [{d}].", doc)  # 2018's
    assert not passes(f"Automotive was $1,221 million in 2019 [{d}].", doc)  # another row's


# TAT-QA b9871425: each year written once over its two measures; labels that carry numbers.
DEBT = [
    ["", "December 31, 2019", "", "December 31, 2018", ""],
    ["(In millions)", "Carrying Amount", "Fair Value", "Carrying Amount", "Fair Value"],
    ["Term Loan A Facility due July 2022", "$ 474.6", "$ 474.6", "$ —", "$ —"],
    ["6.50% Senior Notes due December 2020", "—", "—", "424.0", "440.1"],
    ["4.875% Senior Notes due December 2022", "421.9", "450.1", "421.1", "421.2"],
    ["5.25% Senior Notes due April 2023", "422.0", "454.1", "421.2", "424.5"],
]


def test_a_numbered_label_names_its_row() -> None:
    ref = loader_table(DEBT)
    t = ref.id
    right = (
        f"The 4.875% Senior Notes due December 2022 had a carrying amount of 421.9 in 2019 [{t}]."
    )
    assert passes(right, ref)
    # 422.0 is the 5.25% notes' value: the words are the same, the label's numbers are not
    assert not passes(f"The 4.875% Senior Notes due December 2022 were 422.0 in 2019 [{t}].", ref)
    assert not passes(f"The 5.25% Senior Notes due April 2023 were 421.9 in 2019 [{t}].", ref)


def test_a_period_written_once_heads_each_of_its_measures() -> None:
    ref = loader_table(DEBT)
    t = ref.id
    assert passes(f"The 6.50% Senior Notes due December 2020 had a fair value of 440.1 "
                  f"in 2018 [{t}].", ref)  # fmt: skip
    assert not passes(f"The 5.25% Senior Notes due April 2023 had a fair value of 454.1 "
                      f"in 2018 [{t}].", ref)  # fmt: skip


# TAT-QA: "2019 | | 2018 | | Change |" over "Amount | % of total revenue | ..."
REPEATED = [
    ["", "Fiscal years ended July 31,", "", "", "", "", ""],
    ["", "2019", "", "2018", "", "Change", ""],
    ["", "Amount", "% of total revenue", "Amount", "% of total revenue", "($)", "(%)"],
    ["", "", "", "(In thousands, except percentages)", "", "", ""],
    ["Cost of revenue:", "", "", "", "", "", ""],
    ["License and subscription", "$ 64,798", "9%", "$ 35,452", "5%", "29,346", "83"],
    ["Services", "243,053", "34", "246,548", "38", "(3,495)", "(1)"],
]


def test_an_amount_and_its_share_bind_to_their_own_year() -> None:
    ref = loader_table(REPEATED)
    t = ref.id
    assert passes(f"Services cost of revenue was $243,053 thousand in 2019 [{t}].", ref)
    assert passes(f"Services were 34% of total revenue in 2019 [{t}].", ref)
    assert not passes(f"Services were 38% of total revenue in 2019 [{t}].", ref)  # 2018's share
    assert not passes(f"Services cost of revenue was $246,548 thousand in 2019 [{t}].", ref)


# TAT-QA f6dd98fe: a roll-forward that prints outflows in parentheses.
ROLL_FORWARD = [
    ["", "", "RSUs & PRSUs Outstanding"],
    ["", "Number of Shares", "Weighted Average Grant Date Fair Value"],
    ["", "(in thousands)", ""],
    ["Nonvested at January 1, 2017", "98", "$23.52"],
    ["Granted", "132", "19.74"],
    ["Vested", "(43)", "20.44"],
    ["Forfeited", "(19)", "—"],
]


def test_a_label_that_states_a_decrease_takes_the_magnitude_of_its_negative_cell() -> None:
    ref = loader_table(ROLL_FORWARD)
    t = ref.id
    assert passes(f"19 thousand shares were forfeited [{t}].", ref)
    assert passes(f"Forfeited shares were 19 thousand [{t}].", ref)
    assert not passes(f"Granted shares were 19 thousand [{t}].", ref)  # the sign is its name's


def test_a_stated_rise_is_no_negative_change() -> None:
    table = Ref(
        id="tbl_00000000c1",
        kind="tableRef",
        payload={
            "columns": ["", "2019", "2018", "% Change"],
            "rows": [
                ["Cost of sales", "500", "583", "(14.3)%"],
                ["Revenue", "900", "1,050", "(14.3)%"],
            ],
        },
    )
    t = table.id
    assert not passes(f"Cost of sales rose 14.3% [{t}].", table)
    assert passes(f"Cost of sales fell 14.3% [{t}].", table)
    assert not passes(f"Revenue rose 14.3% [{t}].", table)


def test_coverage_says_no_verified_claim_covers_what_an_unverified_claim_states() -> None:
    ref = Ref(
        id="val_00000000d1", kind="valueRef", payload={"values": {"unemp": 9.6}, "units": "%"}
    )
    report = check_answer(f"The unemployment rate was 9.9% in 2009Q3 [{ref.id}].", [ref],
                          question="What was the unemployment rate in 2009Q3?")  # fmt: skip
    details = [i.detail for i in report.issues if i.code == "question_not_covered"]
    assert "no verified claim covers 2009Q3" in details, details
    assert not any("states nothing" in d for d in details), details


# --- real DART statements (issue 43) --------------------------------------------------------

STATEMENTS = ["corp_name", "basis", "account_nm", "period_label", "amount"]


def statements_ref(rows: list[list[object]], rid: str = "tbl_00000000e1") -> Ref:
    """Rows of the statements dataset as RunPython emits a query of it."""
    payload = {"columns": STATEMENTS, "rows": rows, "units": {"amount": "KRW"},
               "meta": {"read": ["statements"]}}  # fmt: skip
    return Ref(id=rid, kind="tableRef", payload=payload)


# 현대제철 (004020): the revenue line is 수익(매출액) in the FY2023 report, 매출액 a year before;
# its 3분기 report has the quarter and the nine months.
HYUNDAI_STEEL = [
    ["현대제철", "연결", "수익(매출액)", "FY2023", 25914760456167],
    ["현대제철", "연결", "매출액", "FY2022", 27340601237802],
    ["현대제철", "별도", "수익(매출액)", "FY2023", 21609416275152],
    ["현대제철", "연결", "수익(매출액)", "2023 Q3", 6283196286286],
    ["현대제철", "연결", "수익(매출액)", "2023 9M", 19810563517262],
]


@pytest.mark.parametrize(
    ("claim", "right"),
    [
        ("현대제철의 2023년 연결 기준 매출액은 25조 9,148억원입니다", True),
        ("현대제철's consolidated revenue in FY2023 was KRW 25.9 trillion", True),
        ("현대제철의 2023년 3분기 누적 연결 매출액은 19조 8,106억원입니다", True),
        ("현대제철의 2023년 3분기 연결 매출액은 6조 2,832억원입니다", True),
        ("현대제철's consolidated revenue for 9M 2023 was KRW 19.8 trillion", True),
        ("현대제철의 2023년 3분기 누적 연결 매출액은 6조 2,832억원입니다", False),  # Q3 for 9M
        ("현대제철의 2023년 3분기 연결 매출액은 19조 8,106억원입니다", False),  # 9M for Q3
        ("현대제철의 2023년 연결 기준 매출액은 21조 6,094억원입니다", False),  # 별도 for 연결
        ("현대제철의 2023년 연결 기준 매출액은 259,148조원입니다", False),  # 억 written as 조
    ],
)
def test_real_statements_claims(claim: str, right: bool) -> None:
    ref = statements_ref(HYUNDAI_STEEL)
    assert passes(f"{claim} [{ref.id}].", ref) is right


def test_an_account_named_otherwise_in_another_year_is_still_named() -> None:
    """SK (034730) writes its net income 당기연결순이익 in FY2024 and 연결당기순이익(손실) in FY2023."""
    ref = statements_ref([
        ["SK", "연결", "당기연결순이익", "FY2024", 528810000000],
        ["SK", "연결", "연결당기순이익(손실)", "FY2023", -406387000000],
    ])  # fmt: skip
    assert passes(f"SK의 2024년 연결 기준 당기순이익은 5,288억원입니다 [{ref.id}].", ref)
    assert passes(f"SK의 2023년 연결 기준 당기순손실은 4,064억원입니다 [{ref.id}].", ref)
    assert not passes(f"SK의 2024년 연결 기준 당기순이익은 4,064억원입니다 [{ref.id}].", ref)


def test_a_korean_change_name_is_a_change_place() -> None:
    ref = Ref(id="val_00000000f1", kind="valueRef",
              payload={"values": {"매출액 증감률": -5.2}, "units": {"매출액 증감률": "%"},
                       "period": "FY2023"})  # fmt: skip
    assert passes(f"Revenue fell 5.2% year on year in 2023 [{ref.id}].", ref)
    assert not passes(f"Revenue rose 5.2% year on year in 2023 [{ref.id}].", ref)
    assert not passes(f"2023년 매출액은 전년 대비 5.2% 증가했습니다 [{ref.id}].", ref)

"""Unit tests of the GATE: one or more per issue code, number and date format, scale and rounding."""

from __future__ import annotations

import json

import pytest

from refgate.gate import GateReport, check_answer, unmet_section
from refgate.refs import Ref

V = "val_0123456789"
T = "tbl_0123456789"
D = "dat_0123456789"
W = "web_0123456789"


def val(values, units=None, scale=None, rid=V, **extra) -> Ref:
    payload = {"values": values, "units": units or {}, **extra}
    if scale is not None:
        payload["scale"] = scale
    return Ref(id=rid, kind="valueRef", payload=payload)


def codes(report: GateReport) -> list[str]:
    return [i.code for i in report.issues if i.severity == "block"]


def passes(answer: str, *refs: Ref, **kw) -> bool:
    return check_answer(answer, list(refs), **kw).passed


# --- numbers: formats and normalisation -------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "value", "unit", "scale"),
    [
        ("1,234.5", 1234.5, "USD", None),
        ("$1,234.5", 1234.5, "USD", None),
        ("-3.2%", -3.2, "%", None),
        ("(12.3)", -12.3, "USD", None),
        ("−12.3", -12.3, "USD", None),
        ("$4.5 billion", 4512, "USD", "million"),
        ("4.5bn", 4.5e9, "USD", None),
        ("2,235.4 million", 2235.4, "USD", "million"),
        ("2,235.4 million", 2.2354, "USD", "billion"),
        ("45 bp", 0.45, "%", None),
        ("45 bps", 0.0045, "ratio", None),
        ("2.3x", 2.3, "x", None),
        ("2.3 times", 2.3, "times", None),
        ("1.2조원", 1_234_000_000_000, "KRW", None),
        ("1.2조원", 12_340, "KRW", "억"),
        ("3억 2천만 원", 320_000_000, "KRW", None),
        ("3억 2천만 원", 320, "KRW", "백만원"),
        ("5천억원", 512_300_000_000, "원", None),
        ("12.5%", 0.125, "ratio", None),
        ("12.5 percent", 12.5, "percent", None),
        ("12k", 12_000, "", None),
    ],
)
def test_number_formats_supported(claim: str, value: float, unit: str, scale: str | None) -> None:
    ref = val({"x": value}, {"x": unit}, scale)
    report = check_answer(f"The figure was {claim} [{V}].", [ref])
    assert report.passed, report.to_dict()["issues"]
    assert report.claims[0].mentions[0].supported


@pytest.mark.parametrize(
    ("claim", "value", "unit", "scale"),
    [
        ("4.5 million", 4512, "USD", "million"),  # wrong scale word
        ("$4.5 trillion", 4512, "USD", "million"),
        ("1.2억원", 1_234_000_000_000, "KRW", None),
        ("3억 3천만 원", 320_000_000, "KRW", None),
        ("5%", 5, "USD", None),  # percent claim against a currency value
        ("5%", 5, "ratio", None),  # 5% is 0.05 as a ratio
        ("-12.3", 12.3, "USD", None),  # explicit sign must match
        ("(12.3)", 12.3, "USD", None),
        ("+4.1%", -4.1, "%", None),
        ("2.3x", 2.3, "USD", None),
        ("€4.5", 4.5, "USD", None),  # currency contradiction
    ],
)
def test_number_mismatches_block(claim: str, value: float, unit: str, scale: str | None) -> None:
    ref = val({"x": value}, {"x": unit}, scale)
    report = check_answer(f"The figure was {claim} [{V}].", [ref])
    # The same digits in another unit kind (5 USD for 5%, a ratio 5 for 5%, 2.3 USD for 2.3x)
    # are named as such (binding, issue 28); any other mismatch finds no value at all.
    other_kind = claim in ("5%", "2.3x")
    expected = "unit_kind_mismatch" if other_kind else "unsupported_numeric_claim"
    assert codes(report) == [expected], report.to_dict()["issues"]


def test_unsigned_claim_matches_negative_value() -> None:
    ref = val({"loss": -12.3}, {"loss": "USD"}, "million")
    assert passes(f"The net loss was $12.3 million [{V}].", ref)


@pytest.mark.parametrize(
    ("claim", "ok"),
    [
        ("12.3", True),
        ("12.35", True),
        ("12", True),
        ("12.4", False),
        ("12.34", False),
        ("12.347", True),
        ("12.3470", True),
        ("12.30", False),
        ("13", False),
    ],
)
def test_rounding_to_shown_precision(claim: str, ok: bool) -> None:
    ref = val({"x": 12.347}, {"x": "USD"})
    assert passes(f"It came to {claim} [{V}].", ref) is ok


def test_rounding_with_scale_words() -> None:
    ref = val({"x": 4_549_999}, {"x": "USD"})
    assert passes(f"About $4.5 million [{V}].", ref)
    assert passes(f"About $4.55 million [{V}].", ref)
    assert not passes(f"About $4.6 million [{V}].", ref)
    assert not passes(f"About $4.54 million [{V}].", ref)


def test_bare_number_matches_value_as_displayed_in_ref_scale() -> None:
    ref = val({"x": 1496.5}, {"x": "USD"}, "million")
    assert passes(f"Total sales were 1,496.5 [{V}].", ref)
    assert passes(f"Total sales were 1,496,500,000 [{V}].", ref)
    assert not passes(f"Total sales were 1,496.5 thousand [{V}].", ref)


def test_no_arithmetic_derived_numbers_block() -> None:
    ref = val({"y2019": 44.1, "y2018": 56.7}, {"y2019": "USD", "y2018": "USD"}, "million")
    assert passes(f"Other sales fell from 56.7 to 44.1 million [{V}].", ref)
    report = check_answer(f"Other sales fell by 12.6 million, or 22.2% [{V}].", [ref])
    assert codes(report) == ["unsupported_numeric_claim", "unsupported_numeric_claim"]
    emitted = val(
        {"change": -12.6, "pct": -22.22}, {"change": "USD", "pct": "%"}, {"change": "million"}
    )
    assert passes(f"Other sales fell by 12.6 million, or 22.2% [{V}].", emitted)


def test_string_values_and_nearest_hint() -> None:
    ref = val({"x": "$1,452.4"}, {"x": "USD"}, "million")
    assert passes(f"Fixed price sales were $1,452.4 million [{V}].", ref)
    report = check_answer(f"Fixed price sales were $1,552.4 million [{V}].", [ref])
    assert "closest cited value" in report.issues[0].detail
    assert "1,452.4" in report.issues[0].detail


# --- what is and is not a claim ---------------------------------------------------------------


def test_non_claims_are_ignored() -> None:
    answer = (
        "# 1. Overview\n\n"
        "1. See the filing at https://example.com/10-K/2019/report123.pdf\n"
        "2. Run `df.head(50)` to preview.[^1]\n\n"
        "```python\nx = 12345 * 2.5\n```\n\n"
        "COVID-19 hit Q&A sessions; see Form 10-K and v1.2.\n\n"
        f"The ref {V} was read.\n\n"
        "[^1]: Footnote without numbers.\n"
    )
    report = check_answer(answer, [val({"x": 1})])
    assert report.passed, report.to_dict()["issues"]
    assert report.claims == []


def test_years_inside_dates_are_not_numbers() -> None:
    ref = val({"x": 5.0}, {"x": "%"}, None, asOf="2008-12-16")
    report = check_answer(f"As of December 16, 2008 the rate was 5% [{V}].", [ref])
    assert report.passed, report.to_dict()["issues"]
    kinds = sorted(m.kind for m in report.claims[0].mentions)
    assert kinds == ["date", "number"]


# --- citations ------------------------------------------------------------------------------


def test_uncited_claim() -> None:
    report = check_answer("Revenue was $4.5 billion.", [val({"x": 4.5e9})])
    assert codes(report) == ["uncited_claim"]
    assert report.issues[0].claim == "Revenue was $4.5 billion."


@pytest.mark.parametrize("cite", [f"[{V}][{T}]", f"[{V}, {T}]", f"[{T}] [{V}]"])
def test_multiple_citation_forms(cite: str) -> None:
    tbl = Ref(id=T, kind="tableRef", payload={"columns": ["a"], "rows": [[1]]})
    assert passes(f"Revenue was $4.5 billion {cite}.", val({"x": 4.5e9}), tbl)


def test_citation_after_full_stop_belongs_to_sentence() -> None:
    ref = val({"x": 4.5e9})
    report = check_answer(f"Revenue was $4.5 billion. [{V}] Costs were flat.", [ref])
    assert report.passed, report.to_dict()["issues"]


@pytest.mark.parametrize("token", ["val_0123456", "val_ffffffffff", "tbl_0123456789"])
def test_fake_ref_token(token: str) -> None:
    report = check_answer(f"Revenue was $4.5 billion [{token}].", [val({"x": 4.5e9})])
    assert "fake_ref_token" in codes(report)
    assert "uncited_claim" in codes(report)
    fake = next(i for i in report.issues if i.code == "fake_ref_token")
    assert fake.ref_ids == [token]
    if token == "val_0123456":
        assert "truncated" in fake.detail


def test_citing_the_wrong_ref_blocks() -> None:
    a = val({"x": 4.5e9}, rid="val_aaaaaaaaaa")
    b = val({"x": 7.1e9}, rid="val_bbbbbbbbbb")
    assert passes("Revenue was $4.5 billion [val_aaaaaaaaaa].", a, b)
    report = check_answer("Revenue was $4.5 billion [val_bbbbbbbbbb].", [a, b])
    assert codes(report) == ["unsupported_numeric_claim"]


def test_execution_ref_supports_no_number() -> None:
    exe = Ref(id="exe_0123456789", kind="executionRef", payload={"stdout": "4.5", "value": 4.5})
    report = check_answer("Revenue was $4.5 billion [exe_0123456789].", [exe])
    # ... and with no emitted result in the ledger, a data claim blocks the answer as a whole.
    assert codes(report) == ["unsupported_numeric_claim", "emit_result_missing"]


# --- dates --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "ref_date", "ok"),
    [
        ("2008-12-16", "2008-12-16", True),
        ("December 16, 2008", "2008-12-16", True),
        ("16 December 2008", "2008-12-16", True),
        ("Dec. 16, 2008", "2008-12-16", True),
        ("December 2008", "2008-12-16", True),
        ("Q4 2008", "2008-12-16", True),
        ("2008Q4", "2008-12-16", True),
        ("the fourth quarter of 2008", "2008-12-16", True),
        ("2008", "2008-12-16", True),
        ("Q3 2008", "2008-12-16", False),
        ("December 17, 2008", "2008-12-16", False),
        ("2008-12-16", "2008", False),  # finer than the ref: not supported
        ("FY2023", "FY2023", True),
        ("fiscal 2023", "2023", True),
        ("FY2023", "FY2022", False),
        ("2024년 3분기", "2024Q3", True),
        ("2024년 3분기", "2024-08-31", True),
        ("2024년 2분기", "2024Q3", False),
        ("2024년 3월 16일", "2024-03-16", True),
        ("2024년 상반기", "2024-03-16", True),
        ("H2 2024", "2024-03-16", False),
    ],
)
def test_date_claims(claim: str, ref_date: str, ok: bool) -> None:
    ref = Ref(id=D, kind="dateRef", payload={"date": ref_date, "label": "as of"})
    report = check_answer(f"Data as of {claim} [{D}].", [ref])
    assert report.passed is ok, report.to_dict()["issues"]
    if not ok:
        assert codes(report) == ["unsupported_date_claim"]


def test_as_of_without_date_needs_a_dated_ref() -> None:
    dated = val({"x": 5.0}, {"x": "%"}, None, asOf="2024-06-30")
    undated = val({"x": 5.0}, {"x": "%"})
    assert passes(f"As of the latest data the rate is 5% [{V}].", dated)
    assert codes(check_answer(f"As of the latest data the rate is 5% [{V}].", [undated])) == [
        "unsupported_date_claim"
    ]


def test_table_period_columns_support_dates() -> None:
    tbl = Ref(
        id=T,
        kind="tableRef",
        payload={
            "columns": ["", "2019", "2018"],
            "rows": [["Sales", "$1,496.5", "$1,202.9"]],
            "meta": {"scale": "million"},
        },
    )
    assert passes(f"Sales were $1,496.5 million in 2019 [{T}].", tbl)
    # 2017 is no period of the table, and the value is 2019's (binding, issue 28).
    assert set(codes(check_answer(f"Sales were $1,496.5 million in 2017 [{T}].", [tbl]))) == {
        "unsupported_date_claim",
        "value_of_other_period",
    }


# --- tables in the answer, rankings ---------------------------------------------------------------


def ranking_table() -> Ref:
    return Ref(
        id=T,
        kind="tableRef",
        payload={
            "columns": ["company", "period", "revenue", "rank"],
            "rows": [["Samsung", "2023", 300.2, 1], ["LG", "2023", 80.0, 2]],
            "units": {"revenue": "USD"},
            "meta": {"scale": "billion"},
        },
    )


EVIDENCE = (
    "| Rank | Company | Period | Revenue (USD bn) | Metric |\n"
    "|---|---|---|---|---|\n"
    f"| 1 | Samsung | 2023 | 300.2 | revenue | [{T}]\n"
    f"| 2 | LG | 2023 | 80.0 | revenue | [{T}]\n"
)


def test_ranking_with_table_passes() -> None:
    answer = f"Among the companies in the dataset, Samsung had the largest revenue in 2023 [{T}].\n\n{EVIDENCE}"
    report = check_answer(answer, [ranking_table()])
    assert report.passed, report.to_dict()["issues"]
    rows = [c for c in report.claims if c.unit == "row"]
    assert len(rows) == 2  # header and separator are not claims


def test_ranking_without_evidence_table_blocks() -> None:
    report = check_answer(
        f"Among the companies in the dataset, ranked by revenue, Samsung had the largest [{T}].",
        [ranking_table()],
    )
    assert codes(report) == ["missing_ranking_table_ref"]
    assert "evidence table" in report.issues[0].detail


def test_ranking_citing_value_ref_blocks() -> None:
    answer = f"Samsung ranked first, 1위 [{V}].\n\n{EVIDENCE}"
    report = check_answer(answer, [ranking_table(), val({"x": 1})])
    assert "missing_ranking_table_ref" in codes(report)


def test_ranking_items_must_be_in_the_table() -> None:
    answer = f"Among the makers in the dataset, Apple is the top 1 maker [{T}].\n\n{EVIDENCE}"
    report = check_answer(answer, [ranking_table()])
    assert codes(report) == ["missing_ranking_table_ref"]
    assert "ranked items" in report.issues[0].detail


def test_table_rows_checked_row_by_row() -> None:
    bad = EVIDENCE.replace("80.0", "81.0")
    report = check_answer(
        f"Revenue ranking of the dataset's companies [{T}]:\n\n{bad}", [ranking_table()]
    )
    assert codes(report) == ["unsupported_numeric_claim"]
    assert report.issues[0].claim.startswith("| 2 | LG")


def test_table_rows_inherit_caption_citation_and_header_units() -> None:
    ref = val({"a": 12.5, "b": 4.1}, {"a": "%", "b": "USD"}, {"b": "billion"})
    answer = f"Key figures [{V}]:\n\n| Metric | Value |\n|---|---|\n| Margin (%) | 12.5 |\n"
    assert passes(answer, ref)
    answer2 = f"Key figures [{V}]:\n\n| Metric | USD bn |\n|---|---|\n| Revenue | 4.1 |\n"
    assert passes(answer2, ref)
    wrong = f"Key figures [{V}]:\n\n| Metric | USD m |\n|---|---|\n| Revenue | 4.1 |\n"
    assert not passes(wrong, ref)


# --- global checks ----------------------------------------------------------------------------------


def test_required_evidence() -> None:
    ref = val({"x": 1.0})
    assert passes("No numbers here.", ref, required_evidence=["valueRef"])
    report = check_answer("No numbers here.", [ref], required_evidence=["valueRef", "skillRef"])
    assert codes(report) == ["missing_required_evidence"]
    assert "skillRef" in report.issues[0].detail
    report = check_answer("No numbers here.", [ref], required_evidence=["sixActCausal"])
    assert codes(report) == ["unknown_required_evidence"]


def test_emit_result_missing() -> None:
    skill = Ref(id="skl_0123456789", kind="skillRef", payload={"id": "x"})
    assert codes(check_answer("Plain text.", [skill], require_emitted=True)) == [
        "emit_result_missing"
    ]
    assert passes("Plain text.", skill, require_emitted=False)
    dat = Ref(id=D, kind="dateRef", payload={"date": "2024-01-01"})
    assert passes("Plain text.", dat, require_emitted=True)


def test_external_only_numeric_blocks_by_default_and_is_relaxable() -> None:
    web = Ref(
        id=W,
        kind="webRef",
        payload={"url": "https://x.example", "excerpt": "Sales rose 12.5% to $4.5 billion."},
        source_type="external",
    )
    answer = f"Sales rose 12.5% to $4.5 billion [{W}]."
    blocked = check_answer(answer, [web])
    assert not blocked.passed
    assert codes(blocked) == ["external_only_numeric"] * 2
    for relaxed in (
        check_answer(answer, [web], secondary_numbers="warn"),
        check_answer(answer, [web], required_evidence=["secondaryAllowed"]),
    ):
        assert relaxed.passed
        assert [i.code for i in relaxed.warnings] == ["external_only_numeric"] * 2
    # a skill requiring primarySource keeps it blocking whatever the setting
    strict = check_answer(
        answer, [web], required_evidence=["primarySource"], secondary_numbers="warn"
    )
    assert codes(strict) == ["external_only_numeric"] * 2
    both = check_answer(f"Sales rose 12.5% [{W}][{V}].", [web, val({"g": 12.5}, {"g": "%"})])
    assert both.passed and not both.warnings
    with pytest.raises(ValueError, match="secondary_numbers"):
        check_answer(answer, [web], secondary_numbers="maybe")


def test_a_workspace_document_is_primary_evidence_for_its_numbers() -> None:
    doc = Ref(
        id=D.replace("dat", "doc"),
        kind="docRef",
        payload={"doc_id": "10k", "excerpt": "Revenue was $4.5 billion in 2023."},
        source_type="external",
    )
    report = check_answer(f"Revenue was $4.5 billion [{doc.id}].", [doc])
    assert report.passed and not report.warnings
    web_file = doc.model_copy(update={"authority": "secondary"})
    assert codes(check_answer(f"Revenue was $4.5 billion [{doc.id}].", [web_file])) == [
        "external_only_numeric"
    ]


def test_invalid_refs_and_dict_refs() -> None:
    good = val({"x": 4.5e9}).model_dump()
    report = check_answer(f"Revenue was $4.5 billion [{V}].", [good, {"id": "bad"}])
    assert codes(report) == ["invalid_ref"]
    assert passes(f"Revenue was $4.5 billion [{V}].", good)
    assert check_answer(f"Revenue was $4.5 billion [{V}].", {V: good}).passed


def test_empty_answer_and_bad_input() -> None:
    assert codes(check_answer("  \n", [])) == ["empty_answer"]
    with pytest.raises(TypeError):
        check_answer(None, [])  # type: ignore[arg-type]


def test_report_to_dict_is_json_and_unmet_section() -> None:
    answer = f"Revenue was $4.7 billion [{V}]. Costs were $1.2 billion."
    report = check_answer(answer, [val({"x": 4.5e9})])
    data = json.loads(json.dumps(report.to_dict()))
    assert data["passed"] is False
    assert {i["code"] for i in data["issues"]} == {"unsupported_numeric_claim", "uncited_claim"}
    assert all(i["severity"] == "block" for i in data["issues"])
    section = unmet_section(report)
    assert section.startswith("### Not verified")
    assert "$4.7 billion" in section and "Costs were $1.2 billion." in section
    # The section itself is not re-checked when the answer is gated again.
    again = check_answer(f"Revenue was $4.5 billion [{V}].\n\n" + section, [val({"x": 4.5e9})])
    assert again.passed, again.to_dict()["issues"]
    assert (
        unmet_section(check_answer(f"Revenue was $4.5 billion [{V}].", [val({"x": 4.5e9})])) == ""
    )


def test_deterministic() -> None:
    answer = f"Revenue was $4.7 billion [{V}] in Q4 2008. Samsung is the largest."
    refs = [val({"x": 4.5e9})]
    assert check_answer(answer, refs).to_dict() == check_answer(answer, refs).to_dict()


def test_bare_year_number_falls_back_to_a_cited_number() -> None:
    count = val({"staff": 1900}, {"staff": "people"})
    assert passes(f"Headcount was 1900 [{V}].", count)
    assert codes(check_answer(f"Headcount was 1901 [{V}].", [count])) == ["unsupported_date_claim"]


# --- fast paths of the scan and the index (pre-checks, caches, lazy strings) -----------------


def test_digitless_claims_still_carry_dates_rankings_and_as_of() -> None:
    dated = val({"x": 1.0}, period="2008Q1")
    assert passes(f"Sales rose in the first quarter [{V}].", dated)
    report = check_answer(f"Sales rose in the first quarter [{V}].", [val({"x": 1.0})])
    assert codes(report) == ["unsupported_date_claim"]
    assert [m.text for m in report.claims[0].mentions] == ["first quarter"]
    report = check_answer("Samsung is the largest seller.", [])
    assert codes(report)[:1] == ["uncited_claim"]
    assert check_answer(f"As of today sales are up [{V}].", [val({"x": 1.0})]).passed is False


def test_ordinal_and_korean_rank_words_are_found() -> None:
    for claim in (
        "Acme is the 2nd largest maker",
        "Acme holds 3rd place",
        "삼성은 1위",
        "삼성은 2 등",
    ):
        report = check_answer(f"{claim} [{V}].", [val({"x": 1.0})])
        assert "missing_ranking_table_ref" in codes(report), claim


def test_match_names_the_ref_field_and_cell() -> None:
    report = check_answer(f"Revenue was $4.5 billion [{V}].", [val({"rev": 4512}, scale="million")])
    assert report.claims[0].mentions[0].matches[0].how == "values.rev=4512 (absolute)"
    table = Ref(
        id=T,
        kind="tableRef",
        payload={"columns": ["item", "2019"], "rows": [["Sales", "$ 1,452.4"], ["Cost", 12.5]]},
    )
    report = check_answer(f"Sales were $1,452.4 and cost 12.5 [{T}].", [table])
    hows = [m.matches[0].how for m in report.claims[0].mentions]
    assert hows == ["row 0 [2019]=$ 1,452.4 (absolute)", "row 1 [2019]=12.5 (absolute)"]


def test_unit_parsing_is_cached_but_per_value() -> None:
    refs = [
        val({"a": 5.0, "b": 0.05}, {"a": "%", "b": "ratio"}),
        val({"a": 5.0}, {"a": "USD"}, scale="million", rid="val_1123456789"),
    ]
    assert passes(f"Margin was 5% [{V}].", *refs)
    assert passes("Revenue was $5 million [val_1123456789].", *refs)
    assert not passes("Margin was 5% [val_1123456789].", *refs)
    # Units given as unhashable values fall back to uncached parsing.
    odd = val({"a": 5.0}, {"a": ["USD"]})
    assert passes(f"Revenue was 5 [{V}].", odd)


@pytest.mark.parametrize("shown", ["(1900) thousand", "(2010) million", "(1999)bn"])
def test_a_year_like_amount_in_parentheses_is_a_negative_amount(shown: str) -> None:
    # Found by the English amount property test: "(1900) thousand" was read as the year 1900.
    magnitude = float(shown.split(")")[0][1:])
    scale = {"thousand": 1e3, "million": 1e6, "bn": 1e9}[shown.split(")")[1].strip()]
    ref = Ref(
        id="val_paren",
        kind="valueRef",
        payload={"values": {"net_income": -magnitude * scale}, "units": {"net_income": "USD"}},
    )
    report = check_answer(f"Net income came to {shown} in the period [val_paren].", [ref])
    assert report.passed, report.to_dict()["issues"]
    other = check_answer("Net income came to (1901) thousand [val_paren].", [ref])
    assert not other.passed

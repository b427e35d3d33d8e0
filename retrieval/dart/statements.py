"""OpenDART's XBRL-based full statements (``fnlttSinglAcntAll.json``, 단일회사 전체 재무제표) as
dataset rows: one row per account, statement, basis and period.

An answer's columns are the current term (당기, ``thstrm_*``), the previous term (전기,
``frmtrm_*``) and the one before (전전기, ``bfefrmtrm_*``); what each covers depends on the
report (``reprt_code``):

- 사업보고서 (11011): 당기 = fiscal year ``bsns_year`` (FY), 전기 = FY-1, 전전기 = FY-2;
- 반기보고서 (11012), 1분기 (11013), 3분기 (11014): ``thstrm_amount`` is the quarter (Q2, Q1, Q3)
  for income statements and the balance at the period's end for the balance sheet,
  ``thstrm_add_amount`` the year to date (H1, Q1, 9M), ``frmtrm_q_amount`` /
  ``frmtrm_add_amount`` the same periods a year earlier, and the balance sheet's ``frmtrm_amount``
  the previous year's end (FY-1).

Amounts are in 원 (KRW) as OpenDART gives them ("-" or "" means none; a leading "-" or "(...)"
is negative). ``fs_div`` CFS is 연결 (consolidated), OFS 별도 (separate).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: reprt_code -> (report name, period of thstrm_amount, period of thstrm_add_amount)
REPORTS: dict[str, tuple[str, str, str]] = {
    "11011": ("사업보고서", "FY", "FY"),
    "11012": ("반기보고서", "Q2", "H1"),
    "11013": ("1분기보고서", "Q1", "Q1"),
    "11014": ("3분기보고서", "Q3", "9M"),
}
BASIS = {"CFS": "연결", "OFS": "별도"}
#: Statements whose amounts are balances at a date (the others cover a period).
BALANCE_SHEETS = frozenset({"BS"})

COLUMNS = [
    "corp_code",
    "corp_name",
    "stock_code",
    "rcept_no",
    "report_nm",
    "reprt_code",
    "bsns_year",
    "fs_div",
    "basis",
    "sj_div",
    "sj_nm",
    "account_id",
    "account_nm",
    "term",
    "fiscal_year",
    "period",
    "period_label",
    "amount",
    "currency",
    "ord",
]

_NUMBER = re.compile(r"^\(?-?[\d,]+(\.\d+)?\)?$")


def parse_amount(value: object) -> int | None:
    """An OpenDART amount string as an integer of 원 (None for "", "-" or text)."""
    text = str(value or "").strip().replace(" ", "")
    if not text or text in ("-", "--") or not _NUMBER.match(text):
        return None
    negative = text.startswith("-") or (text.startswith("(") and text.endswith(")"))
    digits = text.strip("()").lstrip("-").replace(",", "")
    amount = int(float(digits)) if "." in digits else int(digits)
    return -amount if negative else amount


def period_label(fiscal_year: int, period: str) -> str:
    """``FY2023``, ``2024 Q3``, ``2024 H1``, ``2024 9M``."""
    return f"FY{fiscal_year}" if period == "FY" else f"{fiscal_year} {period}"


def _periods(reprt_code: str, sj_div: str, year: int) -> list[tuple[str, str, int, str]]:
    """``(field, term, fiscal_year, period)`` for each amount field of a row."""
    _, quarter, to_date = REPORTS[reprt_code]
    if reprt_code == "11011":
        return [
            ("thstrm_amount", "당기", year, "FY"),
            ("frmtrm_amount", "전기", year - 1, "FY"),
            ("bfefrmtrm_amount", "전전기", year - 2, "FY"),
        ]
    if sj_div in BALANCE_SHEETS:
        return [("thstrm_amount", "당기", year, quarter), ("frmtrm_amount", "전기", year - 1, "FY")]
    fields = [
        ("thstrm_amount", "당기", year, quarter),
        ("frmtrm_q_amount", "전기", year - 1, quarter),
    ]
    if to_date != quarter:
        fields += [
            ("thstrm_add_amount", "당기누적", year, to_date),
            ("frmtrm_add_amount", "전기누적", year - 1, to_date),
        ]
    return fields


def statement_rows(
    answer: Mapping[str, object], filing: Mapping[str, object], fs_div: str
) -> list[dict[str, object]]:
    """Dataset rows of one ``fnlttSinglAcntAll.json`` answer for ``filing`` (its list.json row
    plus ``reprt_code`` and ``bsns_year``) and ``fs_div``."""
    rows: list[dict[str, object]] = []
    listed = answer.get("list") or []
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, Mapping):
            continue
        reprt_code = str(item.get("reprt_code") or filing["reprt_code"])
        if reprt_code not in REPORTS:
            continue
        year = int(str(item.get("bsns_year") or filing["bsns_year"]))
        sj_div = str(item.get("sj_div", ""))
        for fld, term, fiscal_year, period in _periods(reprt_code, sj_div, year):
            amount = parse_amount(item.get(fld))
            if amount is None:
                continue
            rows.append(
                {
                    "corp_code": filing["corp_code"],
                    "corp_name": filing["corp_name"],
                    "stock_code": filing.get("stock_code", ""),
                    "rcept_no": str(item.get("rcept_no") or filing["rcept_no"]),
                    "report_nm": filing["report_nm"],
                    "reprt_code": reprt_code,
                    "bsns_year": year,
                    "fs_div": fs_div,
                    "basis": BASIS.get(fs_div, fs_div),
                    "sj_div": sj_div,
                    "sj_nm": str(item.get("sj_nm", "")),
                    "account_id": str(item.get("account_id", "")),
                    "account_nm": " ".join(str(item.get("account_nm", "")).split()),
                    "term": term,
                    "fiscal_year": fiscal_year,
                    "period": period,
                    "period_label": period_label(fiscal_year, period),
                    "amount": amount,
                    "currency": str(item.get("currency") or "KRW"),
                    "ord": int(item["ord"]) if str(item.get("ord", "")).isdigit() else 0,
                }
            )
    return rows


def sort_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in a stable order (company, filing, basis, statement, account order, period)."""
    return sorted(
        rows,
        key=lambda r: (
            r["corp_code"],
            r["rcept_no"],
            r["fs_div"],
            r["sj_div"],
            r["ord"],
            r["account_nm"],
            r["term"],
        ),
    )

"""Report periods of Korean periodic filings, and the period a question asks about.

A DART periodic report covers a business year (``bsns_year``) up to a quarter's end: 분기보고서
(2023.03) is the first quarter, 반기보고서 (2023.06) the second, 분기보고서 (2023.09) the third,
사업보고서 (2023.12) the year (quarter 4). ``report_period`` reads that from the report's name,
with an amendment's prefix (``[기재정정]``, ``[첨부정정]``) kept apart.

``question_period`` reads the period a Korean question is pinned to: "2023년 말" (the year's
end: the annual report), "2022년 3분기", "2021년 상반기" / "반기", "2024년 9월 말", "FY2023",
"23년", "3Q23", and relative years ("작년", "지난해", "올해", "재작년") against a reference date. A year
without a quarter pins the business year alone. A search uses it as a pre-filter on the chunks'
``bsns_year`` and ``quarter`` (``DocumentIndex.search``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

#: Report kind by its name: 사업보고서 (annual), 반기보고서 (half-year), 분기보고서 (quarterly).
REPORT_KINDS = ("사업", "반기", "분기")
_REPORT = re.compile(
    r"^\s*(?:\[(?P<amend>[^\]]+)\]\s*)?(?P<kind>사업|반기|분기)보고서\s*"
    r"\(\s*(?P<year>\d{4})\s*\.\s*(?P<month>\d{1,2})\s*\)"
)


@dataclass(frozen=True)
class ReportPeriod:
    """The period a periodic report covers."""

    bsns_year: int
    quarter: int  # 1-4; 4 = the annual report
    kind: str  # 사업 | 반기 | 분기
    period_end: str  # ISO date of the period's last month's end
    amendment: str | None = None  # "기재정정", "첨부정정", ... or None for an original

    def as_metadata(self) -> dict[str, str | int | None]:
        return {
            "bsns_year": self.bsns_year,
            "quarter": self.quarter,
            "report_kind": self.kind,
            "period_end": self.period_end,
            "amendment": self.amendment,
        }


_MONTH_END = {3: "03-31", 6: "06-30", 9: "09-30", 12: "12-31"}


def report_period(report_nm: str) -> ReportPeriod | None:
    """The period of ``사업보고서 (2023.12)``, ``[기재정정]분기보고서 (2019.03)``, ...; None for a
    name that is not a periodic report's."""
    m = _REPORT.match(report_nm or "")
    if not m:
        return None
    year, month = int(m.group("year")), int(m.group("month"))
    if not 1 <= month <= 12:
        return None
    quarter = (month + 2) // 3
    end = _MONTH_END.get(month) or f"{month:02d}-28"
    return ReportPeriod(
        bsns_year=year,
        quarter=quarter,
        kind=m.group("kind"),
        period_end=f"{year:04d}-{end}",
        amendment=(m.group("amend") or "").strip() or None,
    )


@dataclass(frozen=True)
class QuestionPeriod:
    """The period a question is pinned to: a business year, and a quarter when it names one."""

    year: int
    quarter: int | None = None

    def filters(self) -> dict[str, int]:
        """The metadata pre-filter that keeps this period's chunks."""
        out = {"bsns_year": self.year}
        if self.quarter is not None:
            out["quarter"] = self.quarter
        return out


_RELATIVE = {"재작년": -2, "지지난해": -2, "작년": -1, "지난해": -1, "전년도": -1, "올해": 0}
_REL_WORD = "|".join(sorted(_RELATIVE, key=len, reverse=True))
_YEAR = rf"(?:(?P<y4>(?:19|20)\d{{2}})\s*년?|(?P<y2>\d{{2}})\s*년|FY\s*(?P<fy>(?:19|20)?\d{{2}})|(?P<rel>{_REL_WORD}))"
_AFTER = (
    r"\s*(?:도\s*)?(?:(?P<q>[1-4])\s*(?:분기|Q)"
    r"|(?P<half>상반기|반기|1H|H1)"
    r"|(?P<second>하반기|2H|H2)"
    r"|(?P<month>1[0-2]|[1-9])\s*월(?:\s*(?:말|\d{1,2}\s*일))?"
    r"|(?P<end>말|연말|기말|사업보고서|사업연도|결산|연간|한\s*해))?"
)
_PERIOD = re.compile(r"(?<![\d.])" + _YEAR + _AFTER)
_QFIRST = re.compile(r"(?<![\w])(?P<q>[1-4])Q\s*'?(?P<y>\d{2}|\d{4})(?!\d)")


def question_period(question: str, today: date | None = None) -> QuestionPeriod | None:
    """The report period ``question`` is pinned to (its first mention), or None.

    Relative years count from ``today`` (default: the current date). A month names the quarter
    it ends ("9월 말" -> 3); the year's end, a 사업연도 or 하반기 the annual report (quarter 4).
    """
    text = question or ""
    m = _QFIRST.search(text)
    if m:
        y = int(m.group("y"))
        return QuestionPeriod(y + 2000 if y < 100 else y, int(m.group("q")))
    for m in _PERIOD.finditer(text):
        year = _year_of(m, today)
        after = any(m.group(g) for g in ("q", "half", "second", "month", "end"))
        if year is None or (m.group("y2") and not after):  # "10년간" is no year
            continue
        if m.group("q"):
            return QuestionPeriod(year, int(m.group("q")))
        if m.group("half"):
            return QuestionPeriod(year, 2)
        if m.group("second") or m.group("end"):
            return QuestionPeriod(year, 4)
        if m.group("month"):
            month = int(m.group("month"))
            return (
                QuestionPeriod(year, (month + 2) // 3) if month % 3 == 0 else QuestionPeriod(year)
            )
        return QuestionPeriod(year, 4) if m.group("fy") else QuestionPeriod(year)
    return None


def _year_of(m: re.Match[str], today: date | None) -> int | None:
    if m.group("y4"):
        return int(m.group("y4"))
    if m.group("y2"):
        return 2000 + int(m.group("y2"))
    if m.group("fy"):
        y = int(m.group("fy"))
        return y + 2000 if y < 100 else y
    rel = m.group("rel")
    if rel:
        return (today or date.today()).year + _RELATIVE[rel]
    return None

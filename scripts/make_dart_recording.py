"""Build a REAL OpenDART recording from ``../shared/data/dart-real`` for the local fake of OpenDART
(``benchmarks/shared/fake_opendart.py``), so that ``refgate dart sync`` meets real filings:

- ``corpCode.zip``: OpenDART's company list as received (112,916 companies), served as is;
- ``filings.json``: list.json rows rebuilt from what the statements and sections carry: the
  receipt number, the receipt date (the sections' ``rcept_date``, else the receipt number's first
  eight digits, which are the receipt date) and the report name (the sections' ``report_type``,
  amendments included, else ``사업보고서 (YYYY.12)`` and the like from ``reprt_code``);
- ``statements/<rcept_no>-<CFS|OFS>.json``: fnlttSinglAcntAll answers; the raw answers of
  ``statements-raw`` where they exist, otherwise the statements rows with the fields the API
  sends (absent values left out, as the API does);
- ``documents/<rcept_no>.xml``: 엔씨소프트's section text wrapped in DART's element set
  (``SECTION-1`` for I., II., ... and 【...】, ``SECTION-2`` for their numbered children, ``P``
  for lines, ``TABLE``/``TR``/``TD`` for the markdown tables of the scraped text), and
  삼성전자's 2022 half-year report as its real XML bytes (EUC-KR under a utf-8 header).

Filings without any document in the data (SK하이닉스, 현대자동차, ...) are listed with their
statements; the fake answers status 014 (no file) for their documents, as OpenDART does for a
filing whose document it cannot serve.

The filing text stays in shared/: the recording is built into a folder outside the repository
(tests build it into a temporary folder).

    python scripts/make_dart_recording.py OUT [--companies 036570,000660,005380,005930]
        [--start 2023-01-01] [--end 2024-12-31] [--data ../shared/data/dart-real]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

import pandas as pd

DATA = Path("../shared/data/dart-real")
#: 엔씨소프트 (sections and statements), SK하이닉스, 현대자동차 (statements), 삼성전자 (the
#: 2022 half-year document and a statements excerpt).
COMPANIES = ("036570", "000660", "005380", "005930")
SAMSUNG_DOCUMENT = "20220816001711"
DETAIL = {"11011": "A001", "11012": "A002", "11013": "A003", "11014": "A003"}
REPORT_NAME = {
    "11011": ("사업보고서", 12),
    "11012": ("반기보고서", 6),
    "11013": ("분기보고서", 3),
    "11014": ("분기보고서", 9),
}
#: fnlttSinglAcntAll's fields, in the API's order.
API_FIELDS = (
    "rcept_no",
    "reprt_code",
    "bsns_year",
    "corp_code",
    "sj_div",
    "sj_nm",
    "account_id",
    "account_nm",
    "account_detail",
    "thstrm_nm",
    "thstrm_amount",
    "frmtrm_nm",
    "frmtrm_amount",
    "frmtrm_q_nm",
    "frmtrm_q_amount",
    "frmtrm_add_amount",
    "bfefrmtrm_nm",
    "bfefrmtrm_amount",
    "thstrm_add_amount",
    "ord",
    "currency",
)
_TOP = re.compile(r"^(?:[IVX]+\.\s|【)")
_TABLE_RULE = re.compile(r"^\|(\s*-{3,}\s*\|)+$")


def _present(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _api_row(row: dict[str, object]) -> dict[str, str]:
    return {k: str(row[k]) for k in API_FIELDS if k in row and _present(row[k])}


def _raw_answers(data: Path) -> dict[tuple[str, str], dict[str, object]]:
    """(rcept_no, fs_div) -> a fnlttSinglAcntAll answer as received (``statements-raw``)."""
    found: dict[tuple[str, str], dict[str, object]] = {}
    for path in sorted((data / "statements-raw").glob("*/*.json")):
        answer = json.loads(path.read_text("utf-8"))
        rows = answer.get("list") or []
        if answer.get("status") != "000" or not rows:
            continue
        fs_div = str(answer.get("request", {}).get("fs_div") or path.stem.split("_")[-1])
        body = {"status": "000", "message": answer.get("message", "정상"), "list": rows}
        found[(str(rows[0]["rcept_no"]), fs_div)] = body
    return found


def _table(rows: list[list[str]]) -> str:
    body = "".join("<TR>" + "".join(f"<TD>{escape(c)}</TD>" for c in r) + "</TR>" for r in rows)
    return f"<TABLE><TBODY>{body}</TBODY></TABLE>"


def _xml_lines(text: str) -> Iterable[str]:
    """DART elements for scraped markdown-like text: tables as TABLE, other lines as P. A row
    followed by a ``| --- |`` rule heads a new table (the scraped text runs tables together)."""
    rows: list[list[str]] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:
            if _TABLE_RULE.match(stripped):
                if len(rows) > 1:
                    yield _table(rows[:-1])
                    rows = rows[-1:]
            else:
                rows.append([c.strip() for c in stripped[1:-1].split("|")])
            continue
        if rows:
            yield _table(rows)
            rows = []
        if stripped:
            yield f"<P>{escape(stripped)}</P>"
    if rows:
        yield _table(rows)


def _without_title(content: str, title: str) -> str:
    first, _, rest = content.partition("\n")
    return rest if first.strip() == title.strip() else content


def section_document(filing: pd.DataFrame, report_nm: str, corp_name: str) -> bytes:
    """One filing's scraped sections as a DART XML document (UTF-8)."""
    parts: list[str] = []
    top_open = False
    for _, s in filing.sort_values("section_order").iterrows():
        title, content = str(s.section_title), str(s.section_content or "")
        if _TOP.match(title):
            if top_open:
                parts.append("</SECTION-1>")
            parts.append(f'<SECTION-1><TITLE ATOC="Y">{escape(title)}</TITLE>')
            top_open = True
            children = filing[filing.section_order > s.section_order]
            has_children = not children.empty and not _TOP.match(
                str(children.sort_values("section_order").iloc[0].section_title)
            )
            if not has_children:  # a parent's text is its children's: written once, by them
                parts += _xml_lines(_without_title(content, title))
        else:
            parts.append(f'<SECTION-2><TITLE ATOC="Y">{escape(title)}</TITLE>')
            parts += _xml_lines(content)
            parts.append("</SECTION-2>")
    if top_open:
        parts.append("</SECTION-1>")
    name = report_nm.split("(")[0].replace("[기재정정]", "").replace("[첨부정정]", "").strip()
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<DOCUMENT xmlns:xsi="http://www.w3.org/2001/'
        'XMLSchema-instance" xsi:noNamespaceSchemaLocation="dart3.xsd">\n'
        f"<DOCUMENT-NAME>{escape(name)}</DOCUMENT-NAME>\n"
        f"<COMPANY-NAME>{escape(corp_name)}</COMPANY-NAME>\n<BODY>\n"
        + "\n".join(parts)
        + "\n</BODY>\n</DOCUMENT>\n"
    ).encode("utf-8")


def build(
    out: Path,
    *,
    data: Path = DATA,
    companies: Iterable[str] = COMPANIES,
    start: str = "00000000",
    end: str = "99999999",
) -> dict[str, int]:
    """Write the recording into ``out``; the counts of what it holds."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "documents").mkdir(exist_ok=True)
    (out / "statements").mkdir(exist_ok=True)
    shutil.copyfile(data / "corpcode" / "corpCode.zip", out / "corpCode.zip")
    raw = _raw_answers(data)
    filings: dict[str, dict[str, object]] = {}
    counts = {"filings": 0, "statements": 0, "documents": 0}

    def in_window(rcept_dt: str) -> bool:
        return start <= rcept_dt <= end

    for code in companies:
        stmts = pd.read_parquet(data / "statements" / f"{code}.parquet")
        sections_path = data / "sections" / f"{code}.parquet"
        sections = pd.read_parquet(sections_path) if sections_path.is_file() else None
        named: dict[str, tuple[str, str]] = {}
        if sections is not None and code == "036570":  # only 엔씨소프트's sections are whole
            for rcept_no, filing in sections.groupby("rcept_no"):
                first = filing.iloc[0]
                named[str(rcept_no)] = (str(first.rcept_date), str(first.report_type))
        corp_code, corp_name = str(stmts.iloc[0].corp_code), str(stmts.iloc[0].corp_name)
        for (rcept_no, reprt_code, year), rows in stmts.groupby(
            ["rcept_no", "reprt_code", "bsns_year"]
        ):
            rcept_no, reprt_code = str(rcept_no), str(reprt_code)
            kind, month = REPORT_NAME[reprt_code]
            rcept_dt, report_nm = named.get(
                rcept_no, (rcept_no[:8], f"{kind} ({year}.{month:02d})")
            )
            if not in_window(rcept_dt):
                continue
            filings[rcept_no] = _list_row(
                rcept_no, rcept_dt, report_nm, corp_code, corp_name, code, reprt_code, int(year)
            )
            for fs_div, part in rows.groupby("fs_div"):
                answer = raw.get((rcept_no, str(fs_div))) or {
                    "status": "000",
                    "message": "정상",
                    "list": [_api_row(r) for r in part.sort_values("ord").to_dict("records")],
                }
                path = out / "statements" / f"{rcept_no}-{fs_div}.json"
                path.write_text(json.dumps(answer, ensure_ascii=False), "utf-8")
                counts["statements"] += 1
        if code == "036570" and sections is not None:
            for rcept_no, filing in sections.groupby("rcept_no"):
                rcept_dt, report_nm = named[str(rcept_no)]
                if not in_window(rcept_dt):
                    continue
                if str(rcept_no) not in filings:  # an amendment without statements
                    m = re.search(r"\((\d{4})\.(\d{2})\)", report_nm)
                    year, month = (int(m.group(1)), int(m.group(2))) if m else (0, 12)
                    reprt_code = {12: "11011", 6: "11012", 3: "11013", 9: "11014"}[month]
                    filings[str(rcept_no)] = _list_row(
                        str(rcept_no), rcept_dt, report_nm, corp_code, corp_name, code,
                        reprt_code, year,
                    )  # fmt: skip
                xml = section_document(filing, report_nm, corp_name)
                (out / "documents" / f"{rcept_no}.xml").write_bytes(xml)
                counts["documents"] += 1
        if code == "005930" and SAMSUNG_DOCUMENT in filings:
            shutil.copyfile(
                data / "documents" / f"{SAMSUNG_DOCUMENT}.xml",
                out / "documents" / f"{SAMSUNG_DOCUMENT}.xml",
            )
            counts["documents"] += 1
    rows = sorted(filings.values(), key=lambda f: (str(f["rcept_dt"]), str(f["rcept_no"])))
    (out / "filings.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")
    counts["filings"] = len(rows)
    return counts


def _list_row(
    rcept_no: str,
    rcept_dt: str,
    report_nm: str,
    corp_code: str,
    corp_name: str,
    stock_code: str,
    reprt_code: str,
    year: int,
) -> dict[str, object]:
    return {
        "corp_cls": "Y",
        "corp_name": corp_name,
        "corp_code": corp_code,
        "stock_code": stock_code,
        "report_nm": report_nm,
        "rcept_no": rcept_no,
        "flr_nm": corp_name,
        "rcept_dt": rcept_dt,
        "rm": "정" if report_nm.startswith("[") else "",
        "detail_type": DETAIL[reprt_code],
        "bsns_year": year,
        "reprt_code": reprt_code,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--companies", default=",".join(COMPANIES))
    ap.add_argument("--start", default="1900-01-01", help="first receipt date (YYYY-MM-DD)")
    ap.add_argument("--end", default="2999-12-31", help="last receipt date (YYYY-MM-DD)")
    args = ap.parse_args()
    counts = build(
        args.out,
        data=args.data,
        companies=args.companies.split(","),
        start=args.start.replace("-", ""),
        end=args.end.replace("-", ""),
    )
    print(
        f"{counts['filings']} filings, {counts['statements']} statement answers, "
        f"{counts['documents']} documents in {args.out}"
    )


if __name__ == "__main__":
    main()

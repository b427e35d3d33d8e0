"""``sync``: bring a workspace's DART cache, documents and statements dataset up to its
``[dart]`` block, fetching only what is new.

1. Companies: an 8-digit code is a corp_code; a 6-digit stock code is looked up in OpenDART's
   company list (``corpCode.xml``, fetched once and cached). A code it does not know stops the
   sync before anything is fetched (``UnknownCompany``, exit 2).
2. For each company and report type, ``list.json`` (every page) lists the filings received
   between ``start`` and ``end``; filings already in the manifest are skipped.
3. Each new filing: its document ZIP, its sections written as ``<rcept_no>.dart``, and for a
   periodic report its statements (연결 CFS and 별도 OFS; none filed is not an error). The
   filing enters the manifest only when all of it is on disk, and the manifest is written after
   each filing, so a sync stopped by the daily limit, an HTTP error or the network resumes where
   it stopped.
4. The statements dataset is rebuilt from the raw answers of every stored filing, also when the
   sync stopped early (so the workspace always matches its manifest).

``rebuild`` re-derives documents and dataset from the raw cache alone (offline, no key).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from refgate.retrieval.dart.api import DartClient, DartError
from refgate.retrieval.dart.config import DartConfig
from refgate.retrieval.dart.document import DocumentError, parse_document
from refgate.retrieval.dart.files import Layout, write_atomic, write_csv, write_json
from refgate.retrieval.dart.statements import COLUMNS, REPORTS, sort_rows, statement_rows

Say = Callable[[str], None]
_PERIOD = re.compile(r"\((\d{4})\.(\d{2})\)")


class UnknownCompany(DartError):
    """A configured company OpenDART does not know."""

    exit_code = 2


@dataclass
class SyncResult:
    """What a sync did."""

    companies: dict[str, str] = field(default_factory=dict)
    listed: int = 0
    fetched: list[str] = field(default_factory=list)
    skipped: int = 0
    statement_rows: int = 0
    requests: int = 0
    problems: list[str] = field(default_factory=list)


def layout_of(config: DartConfig) -> Layout:
    return Layout(config.cache, config.documents, config.dataset)


def report_period(report_nm: str, detail_type: str) -> tuple[str | None, int | None]:
    """``(reprt_code, bsns_year)`` of a periodic report from its name ("사업보고서 (2023.12)");
    ``(None, None)`` for other filings."""
    m = _PERIOD.search(report_nm)
    if not m or detail_type not in ("A001", "A002", "A003"):
        return None, None
    year, month = int(m.group(1)), int(m.group(2))
    if detail_type == "A001":
        return "11011", year
    if detail_type == "A002":
        return "11012", year
    return {3: "11013", 9: "11014"}.get(month), year


def company_table(corp_zip: bytes) -> dict[str, dict[str, str]]:
    """stock code and corp_code -> ``{corp_code, corp_name, stock_code}`` from corpCode.xml."""
    with zipfile.ZipFile(io.BytesIO(corp_zip)) as zf:
        name = next((n for n in zf.namelist() if n.lower().endswith(".xml")), None)
        if name is None:
            raise DartError("OpenDART corpCode.xml: the ZIP holds no XML file")
        xml = zf.read(name)
    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, huge_tree=True)
    root = etree.fromstring(xml, parser=parser)
    table: dict[str, dict[str, str]] = {}
    for item in root.iter("list") if root is not None else []:
        corp_code = (item.findtext("corp_code") or "").strip()
        entry = {
            "corp_code": corp_code,
            "corp_name": (item.findtext("corp_name") or "").strip(),
            "stock_code": (item.findtext("stock_code") or "").strip(),
        }
        if corp_code:
            table[corp_code] = entry
        if entry["stock_code"]:
            table[entry["stock_code"]] = entry
    return table


def _companies(config: DartConfig, client: DartClient | None, layout: Layout) -> dict[str, Any]:
    if layout.corp_codes.is_file():
        corp_zip = layout.corp_codes.read_bytes()
    else:
        if client is None:
            raise DartError("no cached company list (dart cache raw/corpCode.zip); sync online")
        corp_zip = client.corp_codes()
        write_atomic(layout.corp_codes, corp_zip)
    table = company_table(corp_zip)
    found = {}
    unknown = []
    for code in config.companies:
        entry = table.get(code)
        if entry is None:
            unknown.append(code)
        else:
            found[entry["corp_code"]] = entry
    if unknown:
        raise UnknownCompany(
            f"OpenDART does not know the company code(s) {', '.join(unknown)} (not in its company "
            "list, corpCode.xml); check [dart] companies: a stock code has 6 digits, a corp_code 8"
        )
    return found


def _sections_record(filing: dict[str, Any], doc_zip: bytes) -> dict[str, Any]:
    """The stored filing: its list row and the sections of its main document."""
    with zipfile.ZipFile(io.BytesIO(doc_zip)) as zf:
        names = sorted(n for n in zf.namelist() if n.lower().endswith(".xml"))
        if not names:
            raise DocumentError("the document ZIP holds no XML file")
        # the main document is <rcept_no>.xml; attachments carry a suffix (<rcept_no>_00760.xml)
        main = next(
            (n for n in names if n.rsplit("/", 1)[-1] == f"{filing['rcept_no']}.xml"), names[0]
        )
        sections = parse_document(zf.read(main), fallback_title=filing.get("report_nm", ""))
    return {
        "format": "refgate.dart.filing/1",
        "filing": {k: filing.get(k) for k in FILING_KEYS},
        "sections": [
            {"id": s.section_id, "title": s.title, "text": s.text, "tables": s.tables}
            for s in sections
        ],
    }


FILING_KEYS = (
    "rcept_no",
    "corp_code",
    "corp_name",
    "stock_code",
    "corp_cls",
    "report_nm",
    "rcept_dt",
    "flr_nm",
    "rm",
    "detail_type",
    "reprt_code",
    "bsns_year",
)


def _dataset_rows(layout: Layout, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rcept_no, filing in sorted(manifest["filings"].items()):
        for fs_div in filing.get("statements", []):
            path = layout.statements(rcept_no, fs_div)
            answer = json.loads(path.read_text(encoding="utf-8"))
            rows += statement_rows(answer, filing, fs_div)
    return sort_rows(rows)


def _write_dataset(layout: Layout, manifest: dict[str, Any]) -> int:
    rows = _dataset_rows(layout, manifest)
    if rows or layout.dataset.exists():
        write_csv(layout.dataset, COLUMNS, rows)
    return len(rows)


def _fetch_filing(
    client: DartClient, config: DartConfig, layout: Layout, filing: dict[str, Any]
) -> dict[str, Any]:
    rcept_no = filing["rcept_no"]
    doc_zip = client.document(rcept_no)
    write_atomic(layout.document_zip(rcept_no), doc_zip)
    record = _sections_record(filing, doc_zip)
    stored = []
    if config.statements and filing.get("reprt_code") in REPORTS:
        for fs_div in ("CFS", "OFS"):
            answer = client.statements(
                filing["corp_code"], int(filing["bsns_year"]), filing["reprt_code"], fs_div
            )
            if answer is None:
                continue
            write_json(layout.statements(rcept_no, fs_div), answer)
            stored.append(fs_div)
    write_json(layout.filing(filing["corp_code"], rcept_no), record)
    return {**filing, "statements": stored, "sections": len(record["sections"])}


def sync(config: DartConfig, client: DartClient, say: Say | None = None) -> SyncResult:
    """Fetch what is new for ``config`` through ``client``; ``DartError`` (after saving what
    was fetched) when the service, the network, the key or a company code fails."""
    say = say or (lambda message: None)
    layout = layout_of(config)
    manifest = layout.read_manifest()
    result = SyncResult()
    companies = _companies(config, client, layout)
    manifest["companies"].update(companies)
    result.companies = {c: e["corp_name"] for c, e in companies.items()}
    bgn, end = config.start.strftime("%Y%m%d"), config.end.strftime("%Y%m%d")
    try:
        new: list[dict[str, Any]] = []
        for corp_code, entry in companies.items():
            for detail in config.detail_types:
                page = 1
                while True:
                    answer = client.filings(corp_code, bgn, end, detail, page)
                    for row in answer.get("list") or []:
                        row = {k: str(v) for k, v in row.items()}
                        if row.get("corp_code") != corp_code or not row.get("rcept_no"):
                            continue
                        result.listed += 1
                        if row["rcept_no"] in manifest["filings"]:
                            result.skipped += 1
                            continue
                        reprt_code, year = report_period(row.get("report_nm", ""), detail)
                        row.update(
                            stock_code=row.get("stock_code") or entry["stock_code"],
                            detail_type=detail,
                            reprt_code=reprt_code,
                            bsns_year=year,
                        )
                        new.append(row)
                    if page >= int(answer.get("total_page") or 0):
                        break
                    page += 1
        new.sort(key=lambda r: (r.get("rcept_dt", ""), r["rcept_no"]))
        say(f"{result.listed} filings listed, {len(new)} new")
        for n, filing in enumerate(new, start=1):
            try:
                stored = _fetch_filing(client, config, layout, filing)
            except (DocumentError, zipfile.BadZipFile) as exc:
                result.problems.append(f"{filing['rcept_no']}: {exc}")
                say(f"skipped {filing['rcept_no']} ({filing.get('report_nm')}): {exc}")
                continue
            manifest["filings"][filing["rcept_no"]] = stored
            layout.write_manifest(manifest)
            result.fetched.append(filing["rcept_no"])
            say(
                f"[{n}/{len(new)}] {filing['corp_name']} {filing['report_nm']} {filing['rcept_no']}"
            )
    finally:
        layout.write_manifest(manifest)
        result.statement_rows = _write_dataset(layout, manifest)
        result.requests = client.requests
    return result


def rebuild(config: DartConfig) -> SyncResult:
    """Derive the documents and the dataset again from the raw cache alone (offline)."""
    layout = layout_of(config)
    manifest = layout.read_manifest()
    result = SyncResult(companies={c: e["corp_name"] for c, e in manifest["companies"].items()})
    for rcept_no, filing in sorted(manifest["filings"].items()):
        path = layout.document_zip(rcept_no)
        if not path.is_file():
            result.problems.append(f"{rcept_no}: raw document missing from the cache")
            continue
        record = _sections_record(filing, path.read_bytes())
        write_json(layout.filing(filing["corp_code"], rcept_no), record)
        result.fetched.append(rcept_no)
    result.statement_rows = _write_dataset(layout, manifest)
    return result

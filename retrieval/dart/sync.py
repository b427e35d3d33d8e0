"""``sync``: bring a workspace's DART cache, documents and statements dataset up to its
``[dart]`` block, fetching only what is new.

1. Companies: a corp_code, a stock code or an exact company name is looked up in OpenDART's
   company list (``corpCode.xml``, fetched once and cached; ``companies.CompanyIndex``). A
   company it does not know, or a name several companies share, stops the sync before anything
   is fetched (``UnknownCompany``, exit 2, naming the candidates).
2. For each company and report type, ``list.json`` (every page) lists the filings received
   between ``start`` and ``end``; filings already in the manifest are skipped.
3. Each new filing: its document ZIP, its sections written as ``<rcept_no>.dart``, and for a
   periodic report its statements (연결 CFS and 별도 OFS; none filed is not an error). The
   filing enters the manifest only when all of it is on disk, and the manifest is written after
   each filing, so a sync stopped by the daily limit, an HTTP error or the network resumes where
   it stopped.
4. The statements dataset is rebuilt from the raw answers of every stored filing, also when the
   sync stopped early (so the workspace always matches its manifest).

A server's answers are not trusted: a list row whose receipt number or corp_code is not
OpenDART's digits is skipped, every path is confined to the workspace (``files``), answers and
ZIP members are read under ``[dart.limits]`` caps, and a filing whose answers are too large,
malformed, too deeply nested or too slow is skipped with its reason while the others go on.
What stops a sync is what concerns every request: the key, the daily limit, the network, an
HTTP error, and the whole sync's deadline.

``rebuild`` re-derives documents and dataset from the raw cache alone (offline, no key).
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from refgate.paths import PathEscape
from refgate.retrieval.dart.api import (
    DartAnswerError,
    DartClient,
    DartError,
    DartHTTPError,
    DartNetworkError,
    DartNoFile,
)
from refgate.retrieval.dart.archive import TooLarge, open_zip, read_member
from refgate.retrieval.dart.companies import CompanyIndex, CompanyListError
from refgate.retrieval.dart.config import DartConfig, DartLimits
from refgate.retrieval.dart.document import DocumentError, parse_document
from refgate.retrieval.dart.files import (
    BadIdentifier,
    Layout,
    check_corp_code,
    check_rcept_no,
    write_atomic,
    write_csv,
    write_json,
)
from refgate.retrieval.dart.statements import COLUMNS, REPORTS, sort_rows, statement_rows

Say = Callable[[str], None]
_PERIOD = re.compile(r"\((\d{4})\.(\d{2})\)")
#: list.json pages read per company and report type at most (100 rows a page).
MAX_PAGES = 50
#: HTTP or network failures in a row that stop the sync (the service is down); fewer are one
#: filing's, which is skipped so that a filing that always fails cannot block the others.
MAX_FAILURES_IN_A_ROW = 3
#: What one hostile filing can fail with; it is skipped with the reason, the others go on.
FILING_FAILURES = (
    DocumentError,
    zipfile.BadZipFile,
    TooLarge,
    DartAnswerError,
    BadIdentifier,
    PathEscape,
    ValueError,
    TypeError,
    KeyError,
)


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


def _companies(config: DartConfig, client: DartClient | None, layout: Layout) -> dict[str, Any]:
    cached = layout.corp_codes
    if cached.is_file() and cached.stat().st_size <= config.limits.max_zip_bytes:
        corp_zip = cached.read_bytes()
    else:
        if client is None:
            raise DartError("no cached company list (dart cache raw/corpCode.zip); sync online")
        corp_zip = client.corp_codes()
        write_atomic(layout.corp_codes, corp_zip)
    try:
        index = CompanyIndex.from_zip(corp_zip, max_xml_bytes=config.limits.max_xml_bytes)
    except (CompanyListError, TooLarge, zipfile.BadZipFile) as exc:
        layout.corp_codes.unlink(missing_ok=True)  # fetched again by the next sync
        raise DartError(f"OpenDART corpCode.xml: {exc}") from exc
    found = {}
    unknown = []
    for query in config.companies:
        company = index.resolve(query)
        unsure = company is None or not company.stock_code
        others = index.candidates(query, 10) if unsure and not query.isdigit() else []
        if company is not None and any(c.stock_code for c in others):
            company = None  # "삼성" names an unlisted 삼성 and many listed 삼성...: ask which
        if company is None:
            shown = ", ".join(f"{c.corp_name} ({c.stock_code or c.corp_code})" for c in others)
            unknown.append(f"{query} (candidates: {shown})" if shown else query)
        else:
            found[company.corp_code] = company.as_dict()
    if unknown:
        raise UnknownCompany(
            f"OpenDART does not know the company code(s) or name(s) {'; '.join(unknown)} (not "
            "in its company list, corpCode.xml, or shared by several); check [dart] companies: "
            "a stock code has 6 digits, a corp_code 8, a name must be exact"
        )
    return found


def _sections_record(
    filing: dict[str, Any], doc_zip: bytes, limits: DartLimits | None = None
) -> dict[str, Any]:
    """The stored filing: its list row and the sections of its main document."""
    limits = limits or DartLimits()
    with open_zip(doc_zip, "the document") as zf:
        names = sorted(n for n in zf.namelist() if n.lower().endswith(".xml"))
        if not names:
            raise DocumentError("the document ZIP holds no XML file")
        # the main document is <rcept_no>.xml; attachments carry a suffix (<rcept_no>_00760.xml)
        main = next(
            (n for n in names if n.rsplit("/", 1)[-1] == f"{filing['rcept_no']}.xml"), names[0]
        )
        xml = read_member(zf, main, limits.max_xml_bytes)
    sections = parse_document(
        xml, fallback_title=filing.get("report_nm", ""), max_depth=limits.max_depth
    )
    if not sections:
        raise DocumentError("the document has no text")
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


def _dataset_rows(
    layout: Layout, manifest: dict[str, Any], problems: list[str] | None = None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for rcept_no, filing in sorted(manifest["filings"].items()):
        for fs_div in filing.get("statements", []):
            try:
                path = layout.statements(rcept_no, fs_div)
                answer = json.loads(path.read_text(encoding="utf-8"))
                found = statement_rows(answer, filing, fs_div)
                # an amendment and its original get the same answer (the latest statements):
                # its rows, which name their own filing, enter the dataset once
                source = (str(found[0]["rcept_no"]) if found else rcept_no, fs_div)
                if source in seen:
                    continue
                seen.add(source)
                rows += found
            except (OSError, RecursionError, *FILING_FAILURES) as exc:
                if problems is not None:
                    problems.append(f"{rcept_no}: statements {fs_div} not read ({exc})")
    return sort_rows(rows)


def _write_dataset(
    layout: Layout, manifest: dict[str, Any], problems: list[str] | None = None
) -> int:
    rows = _dataset_rows(layout, manifest, problems)
    if rows or layout.dataset.exists():
        write_csv(layout.dataset, COLUMNS, rows)
    return len(rows)


def _fetch_filing(
    client: DartClient, config: DartConfig, layout: Layout, filing: dict[str, Any]
) -> dict[str, Any]:
    rcept_no = filing["rcept_no"]
    target = layout.filing(filing["corp_code"], rcept_no)  # checked before anything is fetched
    try:
        doc_zip: bytes | None = client.document(rcept_no)
    except DartNoFile:  # OpenDART serves no document for it: keep its statements
        doc_zip = None
    record = _sections_record(filing, doc_zip, config.limits) if doc_zip is not None else None
    answers = {}
    if config.statements and filing.get("reprt_code") in REPORTS:
        for fs_div in ("CFS", "OFS"):
            answer = client.statements(
                filing["corp_code"], int(filing["bsns_year"]), filing["reprt_code"], fs_div
            )
            if answer is None:
                continue
            statement_rows(answer, filing, fs_div)  # an answer the dataset cannot read fails here
            answers[fs_div] = answer
    if record is None and not answers:
        raise DocumentError("OpenDART serves neither its document (status 014) nor statements")
    # written only once every answer of the filing is in and readable
    if doc_zip is not None:
        write_atomic(layout.document_zip(rcept_no), doc_zip)
    for fs_div, answer in answers.items():
        write_json(layout.statements(rcept_no, fs_div), answer)
    if record is not None:
        write_json(target, record)
    sections = len(record["sections"]) if record is not None else 0
    return {**filing, "statements": list(answers), "sections": sections, "document": bool(record)}


def _listed(
    client: DartClient,
    corp_code: str,
    entry: dict[str, str],
    bgn: str,
    end: str,
    detail: str,
    result: SyncResult,
) -> list[dict[str, Any]]:
    """The valid list.json rows of one company and report type, every page (at most
    ``MAX_PAGES``); an answer that cannot be used ends the listing with a problem."""
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        try:
            answer = client.filings(corp_code, bgn, end, detail, page)
            listed = answer.get("list") or []
            total = int(str(answer.get("total_page") or 0))
            if not isinstance(listed, list):
                raise DartAnswerError("OpenDART list.json: its list is not a list")
        except (DartAnswerError, ValueError) as exc:
            result.problems.append(f"{entry['corp_name']} {detail} page {page}: {exc}")
            return rows
        for item in listed:
            if not isinstance(item, dict):
                continue
            row = {str(k): str(v) for k, v in item.items() if isinstance(v, str | int)}
            try:
                check_rcept_no(row.get("rcept_no", ""))
                check_corp_code(row.get("corp_code", ""))
            except BadIdentifier as exc:
                result.problems.append(f"{entry['corp_name']} {detail}: list row skipped ({exc})")
                continue
            if row["corp_code"] != corp_code:
                continue
            rows.append(row)
        if page >= min(total, MAX_PAGES) or not listed:
            return rows
        page += 1


def sync(config: DartConfig, client: DartClient, say: Say | None = None) -> SyncResult:
    """Fetch what is new for ``config`` through ``client``; ``DartError`` (after saving what
    was fetched) when the service, the network, the key, a company code or the deadline fails.
    A filing whose own answers are unusable is skipped with its reason (``problems``)."""
    say = say or (lambda message: None)
    layout = layout_of(config)
    manifest = layout.read_manifest()
    result = SyncResult()
    client.limits = config.limits
    client.start_sync()
    companies = _companies(config, client, layout)
    manifest["companies"].update(companies)
    result.companies = {c: e["corp_name"] for c, e in companies.items()}
    bgn, end = config.start.strftime("%Y%m%d"), config.end.strftime("%Y%m%d")
    try:
        new: dict[str, dict[str, Any]] = {}
        for corp_code, entry in companies.items():
            for detail in config.detail_types:
                for row in _listed(client, corp_code, entry, bgn, end, detail, result):
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
                    new.setdefault(row["rcept_no"], row)
        todo = sorted(new.values(), key=lambda r: (r.get("rcept_dt", ""), r["rcept_no"]))
        say(f"{result.listed} filings listed, {len(todo)} new")
        _fetch_all(client, config, layout, manifest, todo, result, say)
    finally:
        layout.write_manifest(manifest)
        result.statement_rows = _write_dataset(layout, manifest, result.problems)
        result.requests = client.requests
    return result


def _fetch_all(
    client: DartClient,
    config: DartConfig,
    layout: Layout,
    manifest: dict[str, Any],
    todo: list[dict[str, Any]],
    result: SyncResult,
    say: Say,
) -> None:
    """Fetch each new filing of ``todo`` into the manifest (written after each); a filing whose
    answers are unusable is skipped with its reason, ``MAX_FAILURES_IN_A_ROW`` network or
    service failures in a row end the sync."""
    in_a_row = 0
    for n, filing in enumerate(todo, start=1):
        try:
            stored = _fetch_filing(client, config, layout, filing)
            in_a_row = 0
        except (DartHTTPError, DartNetworkError) as exc:
            in_a_row += 1
            if in_a_row >= MAX_FAILURES_IN_A_ROW:
                raise
            stored, problem = None, str(exc)
        except RecursionError as exc:  # a nesting no bound above caught: skip, never crash
            stored, problem = None, f"nested too deeply to read ({exc})"
        except FILING_FAILURES as exc:
            stored, problem = None, str(exc)
        if stored is None:
            result.problems.append(f"{filing['rcept_no']}: {problem}")
            say(f"skipped {filing['rcept_no']} ({str(filing.get('report_nm'))[:80]}): {problem}")
            continue
        manifest["filings"][filing["rcept_no"]] = stored
        layout.write_manifest(manifest)
        result.fetched.append(filing["rcept_no"])
        say(
            f"[{n}/{len(todo)}] {filing.get('corp_name', '')} {filing.get('report_nm', '')} "
            f"{filing['rcept_no']}"
        )


def rebuild(config: DartConfig) -> SyncResult:
    """Derive the documents and the dataset again from the raw cache alone (offline)."""
    layout = layout_of(config)
    manifest = layout.read_manifest()
    result = SyncResult(companies={c: e["corp_name"] for c, e in manifest["companies"].items()})
    for rcept_no, filing in sorted(manifest["filings"].items()):
        if filing.get("document") is False:  # statements only: OpenDART had no document
            continue
        path = layout.document_zip(rcept_no)
        if not path.is_file():
            result.problems.append(f"{rcept_no}: raw document missing from the cache")
            continue
        try:
            record = _sections_record(filing, path.read_bytes(), config.limits)
            write_json(layout.filing(filing["corp_code"], rcept_no), record)
        except FILING_FAILURES as exc:
            result.problems.append(f"{rcept_no}: {exc}")
            continue
        result.fetched.append(rcept_no)
    result.statement_rows = _write_dataset(layout, manifest, result.problems)
    return result

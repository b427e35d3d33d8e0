"""Turning search hits into docRefs.

Document text is untrusted: every docRef has ``source_type="external"``. Its payload holds
``doc_id``, ``chunk_id``, the character offsets (``start``, ``end``) of the chunk in its document
(its page, for a PDF page), the ``excerpt`` (the chunk text, or its first ``max_chars``), plus
``source`` (the file, relative to the workspace), ``page`` (1-based, PDFs), ``sheet`` (XLSX),
``date``, ``entity``, ``section``, ``origin`` and ``content_hash``, and ``ocr: true`` with
``ocr_confidence`` (0-1) when the page's text was read by OCR. Its title is the citation a
reader follows: ``report.pdf p. 37`` (file name and page; never document text). A chunk hit
several times (in one result list, or across searches of one run) is cited once: the same chunk
content maps to the same ref (``DOC_REF_IDENTITY``).

A table the document's page holds (ruled PDF tables found by pdfplumber, DOCX tables, XLSX sheets) is
issued as a ``tableRef`` with ``columns``/``rows`` and ``meta`` ``source``/``page``/``table``, so
the GATE checks a number against the cell it came from.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, cast

from refgate.catalog.capabilities import RefSpec
from refgate.refs import Ref, RefLedger
from refgate.retrieval.index import Hit
from refgate.retrieval.loaders.base import TableRecord


def chunk_key(hit: Hit) -> tuple[str, str, str]:
    """What makes two hits the same citation: document, chunk and chunk content."""
    return (hit.doc_id, hit.chunk_id, str(hit.metadata.get("content_hash", "")))


def dedupe_hits(hits: Iterable[Hit]) -> list[Hit]:
    """Hits with repeated chunks dropped (the first, best-ranked occurrence is kept)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Hit] = []
    for hit in hits:
        key = chunk_key(hit)
        if key not in seen:
            seen.add(key)
            out.append(hit)
    return out


#: A DART filing's metadata a docRef and a tableRef carry (``refgate dart sync``'s documents).
FILING_FIELDS = (
    "rcept_no",
    "corp_code",
    "corp_name",
    "stock_code",
    "rcept_dt",
    "report_nm",
    "section_id",
    "section_title",
)
_REPORT_PERIOD = re.compile(r"\s*\(\d{4}\.\d{2}\)\s*$")


#: How a DART filing is cited (the ``filing_citation`` setting): ``analyst`` as Korean analysts
#: write it, ``dart`` with the design's ``[docRef:<rcept_no>]`` and ``[tableRef:<section_id>]``.
CitationStyle = Literal["analyst", "dart"]


def filing_citation(meta: Mapping[str, object], style: CitationStyle = "analyst") -> str | None:
    """How a Korean analyst cites a DART filing's section: ``삼성전자 사업보고서 (2024.03.12 접수,
    접수번호 20240312000736), II. 사업의 내용``; with ``style="dart"`` the receipt number and the
    section id lead as the design writes them: ``[docRef:20240312000736] [tableRef:s03] 삼성전자
    사업보고서 (2024.03.12 접수), II. 사업의 내용``. None for a hit that is not from a filing."""
    rcept_no = str(meta.get("rcept_no") or "")
    if not rcept_no:
        return None
    d = str(meta.get("rcept_dt") or "")
    received = f"{d[:4]}.{d[4:6]}.{d[6:8]} 접수" if len(d) == 8 else ""
    report = _REPORT_PERIOD.sub("", str(meta.get("report_nm") or "")).strip()
    head = " ".join(x for x in (str(meta.get("corp_name") or ""), report) if x)
    section = str(meta.get("section_title") or "")
    if style == "dart":
        section_id = str(meta.get("section_id") or "")
        ids = f"[docRef:{rcept_no}]" + (f" [tableRef:{section_id}]" if section_id else "")
        text = f"{ids} {head}" + (f" ({received})" if received else "")
    else:
        text = f"{head} ({received + ', ' if received else ''}접수번호 {rcept_no})"
    return f"{text}, {section}" if section else text


#: Payload keys that identify a docRef's evidence: a later search finding the same chunk reuses it.
DOC_REF_IDENTITY = ("doc_id", "chunk_id", "content_hash")
#: Payload keys that identify a document table's tableRef.
TABLE_REF_IDENTITY = ("source", "page", "sheet", "section_id", "table", "content_hash")


def doc_ref_payload(hit: Hit, *, max_chars: int | None = None) -> dict[str, Any]:
    """The docRef payload for one hit."""
    meta = hit.metadata
    excerpt = hit.text if max_chars is None else hit.text[:max_chars]
    payload: dict[str, Any] = {
        "doc_id": hit.doc_id,
        "chunk_id": hit.chunk_id,
        "start": int(meta.get("start", 0)),
        "end": int(meta.get("end", 0)),
        "excerpt": excerpt,
        "date": meta.get("date"),
        "entity": meta.get("entity"),
        "section": meta.get("section") or None,
        "source": meta.get("source"),
        "page": meta.get("page"),
        "sheet": meta.get("sheet"),
        "origin": meta.get("origin"),
        "content_hash": meta.get("content_hash"),
        "ocr": True if meta.get("ocr") else None,
        "ocr_confidence": meta.get("ocr_confidence") if meta.get("ocr") else None,
    }
    for key in FILING_FIELDS:
        if meta.get(key):
            payload[key] = meta[key]
    if excerpt != hit.text:
        payload["excerpt_truncated"] = True
    return {k: v for k, v in payload.items() if v is not None or k in DOC_REF_IDENTITY}


def citation_label(source: object, page: object = None, sheet: object = None) -> str:
    """How a reader finds the evidence: ``report.pdf p. 37``, ``book.xlsx sheet Revenue``."""
    name = str(source or "").rsplit("/", 1)[-1]
    if page not in (None, ""):
        return f"{name} p. {page}"
    if sheet not in (None, ""):
        return f"{name} sheet {sheet}"
    return name


def doc_ref_title(hit: Hit, style: CitationStyle = "analyst") -> str:
    """The citation of a hit: a filing's (``filing_citation`` in ``style``), else file name,
    then page (PDF) or sheet (XLSX), else the chunk id and date; built from paths and ids only
    (never from document text)."""
    meta = hit.metadata
    filing = filing_citation(meta, style)
    if filing:
        return filing
    if meta.get("page") is not None or meta.get("sheet") is not None:
        return citation_label(meta.get("source") or hit.doc_id, meta.get("page"), meta.get("sheet"))
    date = meta.get("date")
    return f"{hit.chunk_id}" + (f" ({date})" if date else "")


def hit_tables(hit: Hit) -> list[TableRecord]:
    """The tables of a hit's page / sheet / file (``metadata["tables"]``, JSON), or []."""
    raw = hit.metadata.get("tables")
    if not raw:
        return []
    try:
        tables = json.loads(raw) if isinstance(raw, str) else raw
    except (TypeError, ValueError):
        return []
    return [
        cast(TableRecord, t)
        for t in tables
        if isinstance(t, dict) and t.get("columns") and t.get("rows")
    ]


def table_refspecs(
    hits: Iterable[Hit],
    tables_of: Callable[[Hit], list[TableRecord]] = hit_tables,
    style: CitationStyle = "analyst",
) -> list[RefSpec]:
    """One external tableRef spec per distinct table on the hits' pages, in hit order
    (``tables_of(hit)``: the tables of the hit's page; default those kept in its metadata)."""
    specs: list[RefSpec] = []
    seen: set[tuple[Any, ...]] = set()
    for hit in hits:
        meta = hit.metadata
        key0 = (meta.get("source"), meta.get("page"), meta.get("sheet"), meta.get("section_id"))
        if key0 in seen:
            continue
        seen.add(key0)
        for n, table in enumerate(tables_of(hit), start=1):
            key = (
                meta.get("source"),
                meta.get("page"),
                meta.get("sheet"),
                meta.get("section_id"),
                n,
            )
            if key in seen:
                continue
            seen.add(key)
            label = filing_citation(meta, style) or citation_label(
                meta.get("source") or hit.doc_id, meta.get("page"), meta.get("sheet")
            )
            filing = {k: meta[k] for k in FILING_FIELDS if meta.get(k)}
            if table.get("unit"):
                filing["unit"] = str(table["unit"])
            body = json.dumps([table["columns"], table["rows"]], ensure_ascii=False)
            specs.append(
                RefSpec(
                    kind="tableRef",
                    payload={
                        "columns": [str(c) for c in table["columns"]],
                        "rows": [[str(c) for c in row] for row in table["rows"]],
                        "units": {},
                        "meta": {
                            "source": meta.get("source"),
                            "page": meta.get("page"),
                            "sheet": meta.get("sheet"),
                            "table": n,
                            "doc_id": hit.doc_id,
                            "origin": meta.get("origin"),
                            "content_hash": hashlib.sha256(body.encode("utf-8")).hexdigest(),
                            **filing,
                        },
                    },
                    title=f"{label} 표 {n}" if filing.get("rcept_no") else f"{label} table {n}",
                    source=str(meta.get("source") or hit.doc_id),
                    source_type="external",
                    same_as=tuple(f"meta.{k}" for k in TABLE_REF_IDENTITY),
                )
            )
    return specs


def hits_to_refspecs(
    hits: Iterable[Hit], *, max_chars: int | None = None, style: CitationStyle = "analyst"
) -> list[RefSpec]:
    """One external docRef spec per distinct chunk, in hit order (for an ``Evidence``)."""
    return [
        RefSpec(
            kind="docRef",
            payload=doc_ref_payload(h, max_chars=max_chars),
            title=doc_ref_title(h, style),
            source=str(h.metadata.get("source") or h.doc_id),
            source_type="external",
            same_as=DOC_REF_IDENTITY,
        )
        for h in dedupe_hits(hits)
    ]


def find_doc_ref(ledger: RefLedger, hit: Hit) -> Ref | None:
    """A docRef already in ``ledger`` for this hit's chunk (same doc, chunk and content)."""
    key = chunk_key(hit)
    for ref in ledger.all().values():
        if ref.kind != "docRef":
            continue
        p = ref.payload
        if (p.get("doc_id"), p.get("chunk_id"), str(p.get("content_hash") or "")) == key:
            return ref
    return None


def cite_hits(
    hits: Iterable[Hit],
    ledger: RefLedger,
    *,
    created_by: str = "search_documents",
    max_chars: int | None = None,
) -> list[Ref]:
    """Issue docRefs for ``hits`` into ``ledger``, reusing a ref already issued for the same
    chunk; returns one ref per distinct chunk, in hit order."""
    refs: list[Ref] = []
    for hit in dedupe_hits(hits):
        ref = find_doc_ref(ledger, hit)
        if ref is None:
            ref = ledger.issue(
                "docRef",
                doc_ref_payload(hit, max_chars=max_chars),
                title=doc_ref_title(hit),
                source=str(hit.metadata.get("source") or hit.doc_id),
                source_type="external",
                created_by=created_by,
            )
        refs.append(ref)
    return refs

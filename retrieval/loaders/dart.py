"""Reader of a stored DART filing (``<rcept_no>.dart``, written by ``refgate dart sync``): one
``Part`` per table-of-contents section, carrying the filing's metadata (``rcept_no``,
``corp_code``, ``corp_name``, ``stock_code``, ``rcept_dt``, ``report_nm``) and the section's
(``section_id``, ``section_title``), with ``date`` the receipt date (ISO) and ``entity`` the
company's name, so the pre-filters select a company and a receipt-date range; and the section's
tables, each with its unit and section id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from refgate.retrieval.loaders.base import Part, TableRecord, Unreadable

FORMAT = "refgate.dart.filing/1"
FILING_KEYS = ("rcept_no", "corp_code", "corp_name", "stock_code", "rcept_dt", "report_nm")


def iso_date(rcept_dt: str) -> str | None:
    """``20240312`` -> ``2024-03-12`` (None when it is not 8 digits)."""
    d = str(rcept_dt or "")
    return f"{d[:4]}-{d[4:6]}-{d[6:8]}" if len(d) == 8 and d.isdigit() else None


def read_dart(path: Path) -> list[Part]:
    try:
        record: Any = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unreadable(f"not a stored DART filing ({exc})") from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise Unreadable(f"not a stored DART filing (format is not {FORMAT})")
    filing = record.get("filing") or {}
    if not isinstance(filing, dict) or not str(filing.get("rcept_no", "")).isdigit():
        raise Unreadable("a stored DART filing without its receipt number")
    meta = {k: str(filing.get(k) or "") for k in FILING_KEYS}
    parts: list[Part] = []
    for section in record.get("sections") or []:
        if not isinstance(section, dict) or not str(section.get("text", "")).strip():
            continue
        sid = str(section.get("id", ""))
        # tables as ``parse_document`` stored them (``TableRecord``)
        tables = [cast(TableRecord, t) for t in section.get("tables") or [] if isinstance(t, dict)]
        parts.append(
            Part(
                text=str(section["text"]),
                key=sid,
                meta={
                    **meta,
                    "section_id": sid,
                    "section_title": str(section.get("title", "")),
                    "date": iso_date(meta["rcept_dt"]),
                    "entity": meta["corp_name"] or None,
                    "title": f"{meta['corp_name']} {meta['report_nm']}",
                },
                tables=tables,
            )
        )
    if not parts:
        raise Unreadable("a stored DART filing with no section text")
    return parts

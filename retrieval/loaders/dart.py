"""Reader of a stored DART filing (``<rcept_no>.dart``, written by ``refgate dart sync``): one
``Part`` per table-of-contents section, carrying the filing's metadata (``rcept_no``,
``corp_code``, ``corp_name``, ``stock_code``, ``rcept_dt``, ``report_nm``) and the section's
(``section_id``, ``section_title``), with ``date`` the receipt date (ISO) and ``entity`` the
company's name, so the pre-filters select a company and a receipt-date range; the report's
period (``bsns_year``, ``quarter``, ``report_kind`` 사업/반기/분기, ``period_end``, ``amendment``:
``refgate.retrieval.periods``), so they select a report period; and the section's tables, each
with its unit and section id.

The text is cleaned of the DART viewer's artefacts (``dart_text.clean_dart_text``). A part
("I. 회사의 개요") whose text only repeats its numbered sections' ("1. 회사의 개요", "2. 회사의
연혁", ...) is left out: its children carry the same text, cut finer (parent/child collapse)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

from refgate.retrieval.loaders.base import Part, TableRecord, Unreadable
from refgate.retrieval.loaders.dart_text import clean_dart_text
from refgate.retrieval.periods import report_period

FORMAT = "refgate.dart.filing/1"
FILING_KEYS = ("rcept_no", "corp_code", "corp_name", "stock_code", "rcept_dt", "report_nm")


def iso_date(rcept_dt: str) -> str | None:
    """``20240312`` -> ``2024-03-12`` (None when it is not 8 digits)."""
    d = str(rcept_dt or "")
    return f"{d[:4]}-{d[4:6]}-{d[6:8]}" if len(d) == 8 and d.isdigit() else None


#: A part's title (Roman numeral) and a numbered section's ("1.", "12.").
_PART_TITLE = re.compile(r"^\s*(?:[IVX]{1,4}|[\u2160-\u216b])\.")
_CHILD_TITLE = re.compile(r"^\s*\d{1,2}\.")
#: Children cover a part when their texts hold this share of the part's characters.
COVERED_SHARE = 0.9


def repeated_parts(sections: list[tuple[str, str]]) -> set[int]:
    """Indexes of the parts among ``(title, text)`` sections whose numbered sections that follow
    them repeat their whole text (the parent/child duplicates)."""
    out: set[int] = set()
    for i, (title, text) in enumerate(sections):
        if not _PART_TITLE.match(title):
            continue
        children = []
        for child_title, child_text in sections[i + 1 :]:
            if not _CHILD_TITLE.match(child_title):
                break
            children.append(child_text.strip())
        filled = [c for c in children if c]
        if not filled:
            continue
        body = text.strip()
        covered = sum(len(c) for c in filled) >= COVERED_SHARE * (len(body) - len(title) - 64)
        if covered and all(c[:80] in body for c in filled):
            out.add(i)
    return out


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
    period = report_period(meta["report_nm"])
    period_meta = period.as_metadata() if period is not None else {}
    sections = [s for s in record.get("sections") or [] if isinstance(s, dict)]
    repeated = repeated_parts([(str(s.get("title", "")), str(s.get("text", ""))) for s in sections])
    parts: list[Part] = []
    for n, section in enumerate(sections):
        text = clean_dart_text(str(section.get("text", "")))
        if n in repeated or not text.strip():
            continue
        sid = str(section.get("id", ""))
        # tables as ``parse_document`` stored them (``TableRecord``)
        tables = [cast(TableRecord, t) for t in section.get("tables") or [] if isinstance(t, dict)]
        parts.append(
            Part(
                text=text,
                key=sid,
                meta={
                    **meta,
                    **period_meta,
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

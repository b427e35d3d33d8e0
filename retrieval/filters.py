"""Metadata pre-filters of ``DocumentIndex``: which chunks a search may return.

Two rules for periodic filings (chunks with a report period, ``periods.report_period``):

- **An amendment supersedes its original**: a section of a filing is left out when a later
  filing of the same company and report period (a [기재정정] report) carries a section of the same
  title. The filter ``{"superseded": True}``, or one naming a ``rcept_no`` or ``doc_id``, keeps
  superseded sections.
- **The question's period**: ``with_question_period`` adds the period a question names
  ("2023년 말", "3분기", "작년") to the filters as ``bsns_year`` / ``quarter``, unless the
  filters already choose a period or a filing, or no chunk of that period exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date

import numpy as np

from refgate.retrieval.chunking import Chunk
from refgate.retrieval.periods import QuestionPeriod, question_period

#: The metadata a ``company`` filter matches (a DART filing's corp_code, stock code or name).
COMPANY_KEYS = ("corp_code", "stock_code", "corp_name")
#: The metadata a ``doc_type`` filter matches, first present wins (a DART filing's detail type,
#: e.g. "A001", else the file format, e.g. "pdf").
DOC_TYPE_KEYS = ("detail_type", "format")
#: What makes two filings' sections the same section of the same report.
SAME_SECTION_KEYS = ("corp_code", "bsns_year", "quarter", "report_kind", "section_title")
#: Filters that choose a filing or a period themselves (then no question period is added).
PERIOD_KEYS = ("bsns_year", "quarter", "period", "period_end", "rcept_no", "doc_id")


def section_key(metadata: Mapping[str, object]) -> str | None:
    """The section of a periodic filing a chunk belongs to (``SAME_SECTION_KEYS`` joined), which
    a later filing of the same key supersedes; None for a chunk of no periodic filing."""
    if not metadata.get("rcept_no") or metadata.get("bsns_year") is None:
        return None
    return "\x1f".join(str(metadata.get(k, "")) for k in SAME_SECTION_KEYS)


def superseded(chunks: Sequence[Chunk]) -> np.ndarray:
    """Which chunks belong to a section a later filing of the same company and report period
    carries again (an amendment supersedes its original, section by section)."""
    latest: dict[str, str] = {}
    keys = [section_key(c.metadata) for c in chunks]
    for c, key in zip(chunks, keys, strict=True):
        if key is not None:
            latest[key] = max(latest.get(key, ""), str(c.metadata["rcept_no"]))
    return np.array(
        [
            key is not None and str(c.metadata["rcept_no"]) < latest[key]
            for c, key in zip(chunks, keys, strict=True)
        ],
        dtype=bool,
    )


def keeps_superseded(filters: Mapping[str, object]) -> bool:
    """Whether ``filters`` keep the sections an amendment supersedes: ``superseded`` set, or a
    filing (``rcept_no``) or document (``doc_id``) named."""
    return bool(filters.get("superseded")) or any(
        filters.get(k) is not None for k in ("rcept_no", "doc_id")
    )


def is_date_range(key: str, value: object) -> bool:
    """``date`` given as a range (``{"from": ..., "to": ...}`` or a pair), not one date."""
    return key == "date" and (
        isinstance(value, Mapping) or (isinstance(value, list | tuple) and len(value) == 2)
    )


def date_bounds(filters: Mapping[str, object]) -> tuple[object, object]:
    """The receipt-date range ``filters`` ask for (``date_from`` / ``date_to``, or a ``date``
    range, which wins); either end may be None."""
    lo, hi = filters.get("date_from"), filters.get("date_to")
    value = filters.get("date")
    if is_date_range("date", value) and isinstance(value, Mapping):
        lo, hi = value.get("from", lo), value.get("to", hi)
    elif is_date_range("date", value) and isinstance(value, list | tuple):
        lo, hi = value
    return lo, hi


def pin_question_period(
    query: str,
    filters: Mapping[str, object] | None,
    today: date | None,
    *,
    has_periods: Callable[[], bool],
    passes: Callable[[Mapping[str, object]], bool],
) -> Mapping[str, object] | None:
    """``filters`` plus the report period ``query`` names, when the filters choose no period or
    filing, the index's chunks carry report periods (``has_periods``) and some chunk of that
    period passes the filters (``passes``); else ``filters`` as they are."""
    if filters and any(filters.get(k) is not None for k in PERIOD_KEYS):
        return filters
    if not has_periods():
        return filters
    period = question_period(query, today)
    if period is None:
        return filters
    pinned = {**(filters or {}), **period.filters()}
    return pinned if passes(pinned) else filters


def period_filters(value: object) -> dict[str, int]:
    """A ``period`` filter's value as ``bsns_year`` / ``quarter`` filters: ``"2023"``,
    ``"2023Q3"``, ``{"year": 2023, "quarter": 3}`` or a ``QuestionPeriod``."""
    if isinstance(value, QuestionPeriod):
        return value.filters()
    if isinstance(value, Mapping):
        year, quarter = value.get("year"), value.get("quarter")
    else:
        text = str(value).upper().replace(" ", "")
        year, _, quarter = text.partition("Q")
    if year is None or not str(year).isdigit():
        raise ValueError(f"a period filter is a year and an optional quarter, not {value!r}")
    q = str(quarter) if quarter not in (None, "") else ""
    if q and (not q.isdigit() or not 1 <= int(q) <= 4):
        raise ValueError(f"a period's quarter is 1 to 4, not {quarter!r}")
    return QuestionPeriod(int(str(year)), int(q) if q else None).filters()


def equality_terms(filters: Mapping[str, object]) -> Iterator[tuple[str, list[str]]]:
    """The ``filters`` that choose chunks by a metadata value, as ``(key, allowed values)``: a
    ``period`` as its ``bsns_year`` / ``quarter`` terms; the dates (``date_bounds``) and the
    ``superseded`` flag (``keeps_superseded``) are left to their own readers."""
    for key, value in filters.items():
        if value is None or is_date_range(key, value):
            continue
        if key in ("date_from", "date_to", "superseded"):
            continue
        if key == "period":
            yield from ((k, [str(v)]) for k, v in period_filters(value).items())
        elif isinstance(value, list | tuple | set):
            yield key, [str(v) for v in value]
        else:
            yield key, [str(value)]


class ChunkFilter:
    """Boolean masks over ``chunks`` by their metadata (one column per key, built on first use)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks
        self._columns: dict[str, np.ndarray] = {}
        self._superseded: np.ndarray | None = None

    @property
    def superseded(self) -> np.ndarray:
        """Chunks of sections an amendment supersedes (``superseded``), computed once."""
        if self._superseded is None:
            self._superseded = superseded(self.chunks)
        return self._superseded

    def with_question_period(
        self, query: str, filters: Mapping[str, object] | None, today: date | None = None
    ) -> Mapping[str, object] | None:
        """``filters`` plus the report period ``query`` names (``pin_question_period``)."""

        def passes(pinned: Mapping[str, object]) -> bool:
            mask = self.mask(pinned)
            return mask is not None and bool(mask.any())

        return pin_question_period(
            query,
            filters,
            today,
            has_periods=lambda: bool((self.column("bsns_year") != "").any()),
            passes=passes,
        )

    def column(self, key: str) -> np.ndarray:
        """Every chunk's metadata ``key`` as a string ("" when missing)."""
        col = self._columns.get(key)
        if col is None:
            col = np.array(
                [
                    "" if c.metadata.get(key) is None else str(c.metadata.get(key))
                    for c in self.chunks
                ],
                dtype=object,
            )
            self._columns[key] = col
        return col

    def doc_types(self) -> np.ndarray:
        """Every chunk's document type: its first non-empty ``DOC_TYPE_KEYS`` value."""
        out = self.column(DOC_TYPE_KEYS[-1]).copy()
        for key in reversed(DOC_TYPE_KEYS[:-1]):
            col = self.column(key)
            out = np.where(col != "", col, out)
        return out

    def mask(self, filters: Mapping[str, object] | None) -> np.ndarray | None:
        """Boolean mask of chunks passing ``filters`` (None = no filter); see
        ``DocumentIndex.filter_mask`` for the keys."""
        replaced = self.superseded
        if not filters:
            return ~replaced if replaced.any() else None
        mask = np.ones(len(self.chunks), dtype=bool) if keeps_superseded(filters) else ~replaced
        date_from, date_to = date_bounds(filters)
        for key, allowed in equality_terms(filters):
            if key == "company":  # a DART company by corp_code, stock code or name
                hit = np.zeros(len(self.chunks), dtype=bool)
                for column in COMPANY_KEYS:
                    hit |= np.isin(self.column(column), allowed)
                mask &= hit
                continue
            if key == "doc_type":
                mask &= np.isin(self.doc_types(), allowed)
                continue
            hit = np.isin(self.column(key), allowed)
            if key == "doc_id":  # a file's id selects all its pages / sheets
                hit |= np.isin(self.column("file_id"), allowed)
            mask &= hit
        if date_from or date_to:
            dates = self.column("date")
            ok = dates != ""
            if date_from:
                ok &= dates >= str(date_from)[:10]
            if date_to:
                ok &= dates <= str(date_to)[:10]
            mask &= ok.astype(bool)
        return mask

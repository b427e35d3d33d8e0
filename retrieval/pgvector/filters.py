"""The metadata pre-filters of ``filters.ChunkFilter`` as SQL, applied before ranking.

Keys as ``DocumentIndex.filter_mask``: ``doc_id`` (or a file's ``file_id``), ``company``
(corp_code, stock code or name), ``date_from`` / ``date_to`` / ``date``, ``doc_type``, ``period``
(a filing's report period, as ``bsns_year`` and ``quarter``), ``superseded`` (keep the sections
an amendment supersedes), and any other key as equality on the chunk's metadata. Company, date,
report period and the superseded flag are columns of both the chunks and the windows table
(btree indexes on ``(corp_code, date)`` and ``(bsns_year, quarter)``); source, doc_type, doc_id
and rcept_no are indexed columns of the chunks table; other keys read the metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from psycopg import sql

from refgate.retrieval.filters import (
    COMPANY_KEYS,
    DOC_TYPE_KEYS,
    date_bounds,
    equality_terms,
    keeps_superseded,
)

#: Keys that are columns of the chunks table (the rest are read from ``metadata``).
CHUNK_COLUMNS = frozenset(
    {"doc_id", "file_id", "source", "doc_type", "rcept_no", "bsns_year", "quarter", *COMPANY_KEYS}
)
#: Keys that are also columns of the windows table (the dense side filters without the chunk).
WINDOW_COLUMNS = frozenset({"bsns_year", "quarter"})


@dataclass
class SqlFilter:
    """``WHERE`` fragments over a chunks alias ``c`` and a windows alias ``w``, and their
    parameters."""

    dates: tuple[str | None, str | None] = (None, None)
    company: list[str] | None = None
    #: The corp_codes ``company`` names (``with_corp_codes``): then the windows table filters
    #: on its own ``(corp_code, date)`` index, without the chunk.
    corp_codes: list[str] | None = None
    #: (column or metadata key, allowed values), on the chunks table.
    equal: list[tuple[str, list[str]]] = field(default_factory=list)
    #: Keep the sections an amendment supersedes (``filters.keeps_superseded``).
    keep_superseded: bool = False

    @property
    def empty(self) -> bool:
        """No filter asked for (the superseded sections are left out all the same)."""
        return self.company is None and not self.equal and self.dates == (None, None)

    def chunk_where(self, alias: str = "c") -> tuple[sql.Composable, list[object]]:
        """Conditions on the chunks table (``TRUE`` when there are none)."""
        parts: list[sql.Composable] = []
        params: list[object] = []
        a = sql.Identifier(alias)
        if self.corp_codes is None and self.company is not None:
            parts.append(
                sql.SQL("(")
                + sql.SQL(" OR ").join(
                    sql.SQL("{}.{} = ANY(%s)").format(a, sql.Identifier(k)) for k in COMPANY_KEYS
                )
                + sql.SQL(")")
            )
            params += [self.company] * len(COMPANY_KEYS)
        for key, values in self.equal:
            if key not in WINDOW_COLUMNS:  # those are tested by ``_shared``
                part, values_params = _chunk_equal(a, key, values)
                parts.append(part)
                params += values_params
        self._shared(parts, params, a)
        return _joined(parts), params

    def window_where(self, alias: str = "w") -> tuple[sql.Composable, list[object], bool]:
        """Conditions the windows table can test itself (company as corp_codes, dates, report
        period, superseded), and whether the rest still needs the chunk (``needs_chunk``)."""
        parts: list[sql.Composable] = []
        params: list[object] = []
        self._shared(parts, params, sql.Identifier(alias))
        needs_chunk = any(k not in WINDOW_COLUMNS for k, _ in self.equal) or (
            self.company is not None and self.corp_codes is None
        )
        return _joined(parts), params, needs_chunk

    def _shared(self, parts: list[sql.Composable], params: list[object], a: sql.Identifier) -> None:
        """The conditions both tables test on their own columns: company as corp_codes, the
        report period, the date range, the superseded flag."""
        if self.corp_codes is not None:
            parts.append(sql.SQL("{}.corp_code = ANY(%s)").format(a))
            params.append(self.corp_codes)
        for key, values in self.equal:
            if key in WINDOW_COLUMNS:
                parts.append(sql.SQL("{}.{} = ANY(%s)").format(a, sql.Identifier(key)))
                params.append(values)
        lo, hi = self.dates
        if lo or hi:
            parts.append(sql.SQL("{}.date <> ''").format(a))
        if lo:
            parts.append(sql.SQL("{}.date >= %s").format(a))
            params.append(lo[:10])
        if hi:
            parts.append(sql.SQL("{}.date <= %s").format(a))
            params.append(hi[:10])
        if not self.keep_superseded:
            parts.append(sql.SQL("NOT {}.superseded").format(a))


def _chunk_equal(
    a: sql.Identifier, key: str, values: list[str]
) -> tuple[sql.Composable, list[object]]:
    """One equality filter on a column of the chunks table, or on its metadata."""
    if key == "doc_id":
        return sql.SQL("({0}.doc_id = ANY(%s) OR {0}.file_id = ANY(%s))").format(a), [
            values,
            values,
        ]
    if key in CHUNK_COLUMNS:
        return sql.SQL("{}.{} = ANY(%s)").format(a, sql.Identifier(key)), [values]
    return sql.SQL("coalesce({}.metadata->>%s, '') = ANY(%s)").format(a), [key, values]


def _joined(parts: list[sql.Composable]) -> sql.Composable:
    return sql.SQL(" AND ").join(parts) if parts else sql.SQL("TRUE")


def sql_filter(filters: Mapping[str, object] | None) -> SqlFilter:
    """``filters`` (as ``ChunkFilter.mask`` reads them) as an ``SqlFilter``."""
    out = SqlFilter()
    if not filters:
        return out
    out.keep_superseded = keeps_superseded(filters)
    for key, allowed in equality_terms(filters):
        if key == "company":
            out.company = sorted(set(allowed) | set(out.company or []))
        else:
            out.equal.append((key, allowed))
    lo, hi = date_bounds(filters)
    out.dates = (str(lo) if lo else None, str(hi) if hi else None)
    return out


def doc_type(metadata: Mapping[str, object]) -> str | None:
    """The chunk's document type column: the first of ``DOC_TYPE_KEYS`` it has."""
    for key in DOC_TYPE_KEYS:
        value = metadata.get(key)
        if value not in (None, ""):
            return str(value)
    return None

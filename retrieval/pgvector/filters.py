"""The metadata pre-filters of ``filters.ChunkFilter`` as SQL, applied before ranking.

Keys as ``DocumentIndex.filter_mask``: ``doc_id`` (or a file's ``file_id``), ``company``
(corp_code, stock code or name), ``date_from`` / ``date_to`` / ``date``, ``doc_type``, and any
other key as equality on the chunk's metadata. Company and date are columns of both the chunks
and the windows table (a btree on ``(corp_code, date)`` each); source, doc_type and doc_id are
indexed columns of the chunks table; other keys read the metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from psycopg import sql

from refgate.retrieval.filters import COMPANY_KEYS, DOC_TYPE_KEYS

#: Keys that are columns of the chunks table (the rest are read from ``metadata``).
CHUNK_COLUMNS = frozenset({"doc_id", "file_id", "source", "doc_type", *COMPANY_KEYS})


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

    @property
    def empty(self) -> bool:
        return self.company is None and not self.equal and self.dates == (None, None)

    def chunk_where(self, alias: str = "c") -> tuple[sql.Composable, list[object]]:
        """Conditions on the chunks table (``TRUE`` when there are none)."""
        parts: list[sql.Composable] = []
        params: list[object] = []
        a = sql.Identifier(alias)
        if self.corp_codes is not None:
            parts.append(sql.SQL("{}.corp_code = ANY(%s)").format(a))
            params.append(self.corp_codes)
        elif self.company is not None:
            parts.append(
                sql.SQL("(")
                + sql.SQL(" OR ").join(
                    sql.SQL("{}.{} = ANY(%s)").format(a, sql.Identifier(k)) for k in COMPANY_KEYS
                )
                + sql.SQL(")")
            )
            params += [self.company] * len(COMPANY_KEYS)
        for key, values in self.equal:
            if key == "doc_id":
                parts.append(sql.SQL("({0}.doc_id = ANY(%s) OR {0}.file_id = ANY(%s))").format(a))
                params += [values, values]
            elif key == "doc_type":
                parts.append(sql.SQL("{}.doc_type = ANY(%s)").format(a))
                params.append(values)
            elif key in CHUNK_COLUMNS:
                parts.append(sql.SQL("{}.{} = ANY(%s)").format(a, sql.Identifier(key)))
                params.append(values)
            else:
                parts.append(sql.SQL("coalesce({}.metadata->>%s, '') = ANY(%s)").format(a))
                params += [key, values]
        self._dates(parts, params, a)
        return _joined(parts), params

    def window_where(self, alias: str = "w") -> tuple[sql.Composable, list[object], bool]:
        """Conditions the windows table can test itself (company as corp_codes, dates), and
        whether the rest still needs the chunk (``needs_chunk``)."""
        parts: list[sql.Composable] = []
        params: list[object] = []
        a = sql.Identifier(alias)
        if self.corp_codes is not None:
            parts.append(sql.SQL("{}.corp_code = ANY(%s)").format(a))
            params.append(self.corp_codes)
        self._dates(parts, params, a)
        needs_chunk = bool(self.equal) or (self.company is not None and self.corp_codes is None)
        return _joined(parts), params, needs_chunk

    def _dates(self, parts: list[sql.Composable], params: list[object], a: sql.Identifier) -> None:
        lo, hi = self.dates
        if lo or hi:
            parts.append(sql.SQL("{}.date <> ''").format(a))
        if lo:
            parts.append(sql.SQL("{}.date >= %s").format(a))
            params.append(lo[:10])
        if hi:
            parts.append(sql.SQL("{}.date <= %s").format(a))
            params.append(hi[:10])


def _joined(parts: list[sql.Composable]) -> sql.Composable:
    return sql.SQL(" AND ").join(parts) if parts else sql.SQL("TRUE")


def sql_filter(filters: Mapping[str, object] | None) -> SqlFilter:
    """``filters`` (as ``ChunkFilter.mask`` reads them) as an ``SqlFilter``."""
    out = SqlFilter()
    if not filters:
        return out
    date_from = filters.get("date_from")
    date_to = filters.get("date_to")
    for key, value in filters.items():
        if value is None or key in ("date_from", "date_to"):
            continue
        if key == "date" and isinstance(value, Mapping):
            date_from = value.get("from", date_from)
            date_to = value.get("to", date_to)
            continue
        if key == "date" and isinstance(value, list | tuple) and len(value) == 2:
            date_from, date_to = value
            continue
        allowed = [str(v) for v in value] if isinstance(value, list | tuple | set) else [str(value)]
        if key == "company":
            out.company = sorted(set(allowed) | set(out.company or []))
        else:
            out.equal.append((key, allowed))
    out.dates = (
        str(date_from) if date_from else None,
        str(date_to) if date_to else None,
    )
    return out


def doc_type(metadata: Mapping[str, object]) -> str | None:
    """The chunk's document type column: the first of ``DOC_TYPE_KEYS`` it has."""
    for key in DOC_TYPE_KEYS:
        value = metadata.get(key)
        if value not in (None, ""):
            return str(value)
    return None

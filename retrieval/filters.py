"""Metadata pre-filters of ``DocumentIndex``: which chunks a search may return."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from refgate.retrieval.chunking import Chunk

#: The metadata a ``company`` filter matches (a DART filing's corp_code, stock code or name).
COMPANY_KEYS = ("corp_code", "stock_code", "corp_name")
#: The metadata a ``doc_type`` filter matches, first present wins (a DART filing's detail type,
#: e.g. "A001", else the file format, e.g. "pdf").
DOC_TYPE_KEYS = ("detail_type", "format")


class ChunkFilter:
    """Boolean masks over ``chunks`` by their metadata (one column per key, built on first use)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks
        self._columns: dict[str, np.ndarray] = {}

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
        if not filters:
            return None
        mask = np.ones(len(self.chunks), dtype=bool)
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
            allowed = (
                {str(v) for v in value} if isinstance(value, list | tuple | set) else {str(value)}
            )
            if key == "company":  # a DART company by corp_code, stock code or name
                hit = np.zeros(len(self.chunks), dtype=bool)
                for column in COMPANY_KEYS:
                    hit |= np.isin(self.column(column), list(allowed))
                mask &= hit
                continue
            if key == "doc_type":
                mask &= np.isin(self.doc_types(), list(allowed))
                continue
            hit = np.isin(self.column(key), list(allowed))
            if key == "doc_id":  # a file's id selects all its pages / sheets
                hit |= np.isin(self.column("file_id"), list(allowed))
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

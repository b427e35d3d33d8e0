"""What a format reader returns: ``Part``s, or ``Unreadable`` with the reason."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired

from typing_extensions import TypedDict

from refgate.errors import InputError


class Unreadable(InputError, ValueError):
    """A file that cannot be indexed; ``reason`` says why in words (shown in the skip summary)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TableRecord(TypedDict):
    """A table as a reader keeps it: a header and rows of text cells (a DART filing's table adds
    the unit its note states and the section it is in)."""

    columns: list[str]
    rows: list[list[str]]
    unit: NotRequired[str]
    section_id: NotRequired[str]
    section_title: NotRequired[str]


@dataclass
class Part:
    """One indexable unit of a file: a PDF page, a workbook sheet, or the whole file.

    ``key`` makes the unit's ``doc_id`` unique inside its file (``p37``, ``sheet-Revenue``; empty
    for a whole file). ``tables`` are the unit's tables as ``{"columns": [...], "rows": [[...]]}``.
    """

    text: str
    key: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    tables: list[TableRecord] = field(default_factory=list)


def clean_cell(value: object) -> str:
    """A table cell as one line of text ("" for empty cells)."""
    if value is None:
        return ""
    return " ".join(str(value).split())


def table_from_rows(rows: Sequence[Sequence[object]]) -> TableRecord | None:
    """``{"columns", "rows"}`` from raw rows (first non-empty row is the header), or None."""
    cleaned = [[clean_cell(c) for c in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    if len(cleaned) < 2:
        return None
    width = max(len(r) for r in cleaned)
    cleaned = [r + [""] * (width - len(r)) for r in cleaned]
    keep = [j for j in range(width) if any(r[j] for r in cleaned)]
    cleaned = [[r[j] for j in keep] for r in cleaned]
    header = [c or f"column {j + 1}" for j, c in enumerate(cleaned[0])]
    return {"columns": header, "rows": cleaned[1:]}


def markdown_table(table: TableRecord) -> str:
    """A table as markdown rows (the chunker keeps a row whole and a table's rows together)."""

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"

    lines = [row(table["columns"]), row(["---"] * len(table["columns"]))]
    lines += [row(r) for r in table["rows"]]
    return "\n".join(lines)


def tables_json(tables: Sequence[Mapping[str, object]]) -> str | None:
    """The tables as compact JSON for document metadata (None when there are none)."""
    return json.dumps(list(tables), ensure_ascii=False, separators=(",", ":")) if tables else None

"""A DART filing's document (the XML of ``document.xml``) split by its table of contents.

A filing's XML nests ``SECTION-1`` (I. 회사의 개요, II. 사업의 내용, ...) > ``SECTION-2`` > ...,
each opening with a ``TITLE``; text sits in ``P`` and tables in ``TABLE`` (rows ``TR``, cells
``TH``/``TD``/``TE``/``TU``). Each ``SECTION-1`` becomes one ``Section``: its text with the
sub-section titles as markdown headings (so the chunker starts a chunk at them) and every table
written in place as a markdown table, and its tables kept as tables (``{"columns", "rows",
"unit"}``) with the section's id. Filings without ``SECTION-1`` (some 주요사항보고서) become one
section titled by the document name. The XML is read with a recovering parser that resolves no
entity and fetches nothing: real filings are not always well-formed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from refgate.retrieval.loaders.base import TableRecord, markdown_table, table_from_rows

#: "(단위 : 백만원)", "(단위: 원, 주)": the unit a table's amounts are written in.
UNIT_NOTE = re.compile(r"\(\s*단위\s*[:：]\s*([^)]+?)\s*\)")
_CELLS = ("TH", "TD", "TE", "TU")
_SECTION = re.compile(r"^SECTION-(\d+)$")


class DocumentError(ValueError):
    """A filing document that cannot be read."""


@dataclass
class Section:
    """One table-of-contents section of a filing."""

    section_id: str
    title: str
    text: str
    tables: list[TableRecord] = field(default_factory=list)


def _text(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def _table(el: etree._Element) -> TableRecord | None:
    rows = []
    for tr in el.iter("TR"):
        cells = [_text(c) for c in tr if isinstance(c.tag, str) and c.tag in _CELLS]
        if cells:
            rows.append(cells)
    return table_from_rows(rows)


def _walk(
    el: etree._Element, depth: int, out: list[str], tables: list[TableRecord], unit: list[str]
):
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        m = _SECTION.match(tag)
        if m:
            title = child.find("TITLE")
            if title is not None and _text(title):
                out.append("#" * min(6, int(m.group(1))) + " " + _text(title))
            _walk(child, depth + 1, out, tables, unit)
        elif tag == "TITLE":
            continue
        elif tag == "TABLE":
            table = _table(child)
            if table is None:
                continue
            note = UNIT_NOTE.search(" ".join(" | ".join(r) for r in table["rows"][:1]))
            table["unit"] = (note.group(1) if note else unit[0]) if (note or unit) else ""
            unit.clear()
            tables.append(table)
            out.append(markdown_table(table))
        elif tag in ("P", "SPAN", "TD", "TE", "PGBRK") or tag.startswith("TABLE-GROUP"):
            if tag.startswith("TABLE-GROUP"):
                _walk(child, depth, out, tables, unit)
                continue
            text = _text(child)
            if text:
                out.append(text)
                note = UNIT_NOTE.search(text)
                if note:
                    unit[:] = [note.group(1)]
        else:
            _walk(child, depth, out, tables, unit)


def parse_document(xml: bytes, *, fallback_title: str = "") -> list[Section]:
    """The sections of one filing XML document, in order (ids ``s01``, ``s02``, ...)."""
    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(xml, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise DocumentError(f"not a readable filing document ({exc})") from exc
    if root is None:
        raise DocumentError("not a readable filing document (empty)")
    tops = [el for el in root.iter("SECTION-1")]
    sections: list[Section] = []
    if not tops:
        body = root.find(".//BODY")
        body = body if body is not None else root
        name = _text(root.find("DOCUMENT-NAME")) if root.find("DOCUMENT-NAME") is not None else ""
        out: list[str] = []
        tables: list[TableRecord] = []
        _walk(body, 1, out, tables, [])
        if out:
            sections.append(
                Section("s01", name or fallback_title or "본문", "\n\n".join(out), tables)
            )
        return sections
    for n, top in enumerate(tops, start=1):
        title_el = top.find("TITLE")
        title = _text(title_el) if title_el is not None else f"section {n}"
        out = [f"# {title}"]
        tables = []
        _walk(top, 1, out, tables, [])
        section_id = f"s{n:02d}"
        for t in tables:
            t["section_id"] = section_id
            t["section_title"] = title
        sections.append(Section(section_id, title, "\n\n".join(out), tables))
    return sections

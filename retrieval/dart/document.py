"""A DART filing's document (the XML of ``document.xml``) split by its table of contents.

A filing's XML nests ``SECTION-1`` (I. 회사의 개요, II. 사업의 내용, ...) > ``SECTION-2`` > ...,
each opening with a ``TITLE``; text sits in ``P`` and tables in ``TABLE`` (rows ``TR``, cells
``TH``/``TD``/``TE``/``TU``). Each ``SECTION-1`` becomes one ``Section``: its text with the
sub-section titles as markdown headings (so the chunker starts a chunk at them) and every table
written in place as a markdown table, and its tables kept as tables (``{"columns", "rows",
"unit"}``) with the section's id. Filings without ``SECTION-1`` (some 주요사항보고서) become one
section titled by the document name.

Read as DART serves it: the charset comes from the bytes (``charset``: UTF-8, EUC-KR or CP949
whatever the declaration says), CRLF line ends are taken as LF, and tags are matched by local name
in upper case, so dart3.xsd and dart4.xsd documents (with or without a namespace) split alike.
The XML is read with a recovering parser that resolves no entity and fetches nothing (real
filings are not always well-formed), and a document nested deeper than ``max_depth`` elements is
refused by an iterative walk before the section walk could recurse that deep (libxml2 itself
stops nesting at 2,048).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from refgate.errors import InputError
from refgate.retrieval.dart.charset import Undecodable, to_utf8
from refgate.retrieval.loaders.base import TableRecord, markdown_table, table_from_rows

#: "(단위 : 백만원)", "(단위: 원, 주)": the unit a table's amounts are written in.
UNIT_NOTE = re.compile(r"\(\s*단위\s*[:：]\s*([^)]+?)\s*\)")
_CELLS = ("TH", "TD", "TE", "TU")
_SECTION = re.compile(r"^SECTION-(\d+)$")
#: Elements nested deeper than this are refused (real filings stay under 30).
MAX_DEPTH = 200


class DocumentError(InputError, ValueError):
    """A filing document that cannot be read."""


@dataclass
class Section:
    """One table-of-contents section of a filing."""

    section_id: str
    title: str
    text: str
    tables: list[TableRecord] = field(default_factory=list)


def _tag(el: etree._Element) -> str:
    """The element's local name in upper case ("" for comments and processing instructions)."""
    return etree.QName(el).localname.upper() if isinstance(el.tag, str) else ""


def _child(el: etree._Element, tag: str) -> etree._Element | None:
    return next((c for c in el if _tag(c) == tag), None)


def _text(el: etree._Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _rows(el: etree._Element) -> list[list[str]]:
    rows = []
    for tr in (e for e in el.iter() if _tag(e) == "TR"):
        cells = [_text(c) for c in tr if _tag(c) in _CELLS]
        if cells:
            rows.append(cells)
    return rows


def _walk(
    el: etree._Element, depth: int, out: list[str], tables: list[TableRecord], unit: list[str]
):
    for child in el:
        tag = _tag(child)
        m = _SECTION.match(tag)
        if m:
            title = _text(_child(child, "TITLE"))
            if title:
                out.append("#" * min(6, int(m.group(1))) + " " + title)
            _walk(child, depth + 1, out, tables, unit)
        elif tag == "TITLE":
            continue
        elif tag == "TABLE":
            rows = _rows(child)
            first = " ".join(" ".join(r) for r in rows[:2])
            note = UNIT_NOTE.search(first)
            if note and len(rows) == 1:
                # DART writes "(기준일 : ...) (단위 : 백만원)" as a one-row table above the data
                unit[:] = [note.group(1)]
                out.append(" ".join(c for c in rows[0] if c))
                continue
            table = table_from_rows(rows)
            if table is None:
                continue
            table["unit"] = (note.group(1) if note else unit[0]) if (note or unit) else ""
            unit.clear()
            tables.append(table)
            out.append(markdown_table(table))
        elif tag in ("P", "SPAN", "TD", "TE", "PGBRK") or tag.startswith("TABLE-GROUP"):
            if tag.startswith("TABLE-GROUP"):
                heading = _text(_child(child, "TITLE"))
                if heading:
                    out.append(f"**{heading}**")
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


def read_xml(data: bytes, *, max_depth: int = MAX_DEPTH) -> etree._Element:
    """The root element of a filing's XML bytes, decoded by their charset; ``DocumentError``
    for bytes that are not text, a document nested deeper than ``max_depth``, or no XML."""
    try:
        _, xml = to_utf8(data)
    except Undecodable as exc:
        raise DocumentError(f"cannot decode the filing: {exc}") from exc
    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(xml, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise DocumentError(f"not a readable filing document ({exc})") from exc
    if root is not None:
        depth = 0
        for event, _ in etree.iterwalk(root, events=("start", "end")):
            depth += 1 if event == "start" else -1
            if depth > max_depth:
                raise DocumentError(f"the filing nests elements deeper than {max_depth}: not read")
    if root is None:
        raise DocumentError("not a readable filing document (empty)")
    return root


def parse_document(
    xml: bytes, *, fallback_title: str = "", max_depth: int = MAX_DEPTH
) -> list[Section]:
    """The sections of one filing XML document, in order (ids ``s01``, ``s02``, ...)."""
    root = read_xml(xml, max_depth=max_depth)
    tops = [el for el in root.iter() if _tag(el) == "SECTION-1"]
    sections: list[Section] = []
    if not tops:
        body = next((el for el in root.iter() if _tag(el) == "BODY"), root)
        name = _text(_child(root, "DOCUMENT-NAME"))
        out: list[str] = []
        tables: list[TableRecord] = []
        _walk(body, 1, out, tables, [])
        if out:
            sections.append(
                Section("s01", name or fallback_title or "본문", "\n\n".join(out), tables)
            )
        return sections
    for n, top in enumerate(tops, start=1):
        title = _text(_child(top, "TITLE")) or f"section {n}"
        out = [f"# {title}"]
        tables = []
        _walk(top, 1, out, tables, [])
        section_id = f"s{n:02d}"
        for t in tables:
            t["section_id"] = section_id
            t["section_title"] = title
        sections.append(Section(section_id, title, "\n\n".join(out), tables))
    return sections

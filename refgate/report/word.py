"""Word reports (python-docx): the run as a document to edit and send.

The same content as the markdown report, as plain Word text: the question, the GATE's verdict,
the conversation, the answer with numbered citations, one evidence entry per cited ref (values,
the first rows of a table, source), the "Not verified" claims and the CRITIQUE. Nothing in it
is a link or a field: text from documents, pages and models stays text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docx import Document

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument

from refgate.report import cards as cardlib
from refgate.report.answer import strip_unmet_section
from refgate.report.markdown import numbered_citations
from refgate.report.run import header_facts
from refgate.report.shape import clean_run, texts

#: Rows of a cited table shown in its entry.
MAX_TABLE_ROWS = 12
_MARKUP = re.compile(r"(\*\*|__|`)")
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _plain(text: object) -> str:
    """Text Word can hold (no XML-invalid characters), markdown emphasis marks removed."""
    return _XML_BAD.sub("\ufffd", _MARKUP.sub("", str(text or "")))


def _paragraphs(doc: DocxDocument, markdown: str) -> None:
    for block in re.split(r"\n\s*\n", markdown.strip()):
        lines = [ln.rstrip() for ln in block.splitlines() if ln.strip()]
        for line in lines:
            heading = re.match(r"^(#{1,6})\s+(.*)$", line)
            bullet = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$", line)
            if heading:
                doc.add_heading(_plain(heading.group(2)), level=min(len(heading.group(1)) + 1, 4))
            elif bullet:
                doc.add_paragraph(_plain(bullet.group(1)), style="List Bullet")
            else:
                doc.add_paragraph(_plain(line))


def _card(doc: DocxDocument, c: Mapping[str, Any]) -> None:
    number = f"[{c['number']}] " if c.get("number") else ""
    doc.add_heading(_plain(f"{number}{c['kind']} {c['id']}: {c['title']}"), level=3)
    src = c["source"]
    where = src["label"] + "".join(f"; {k}: {v}" for k, v in src["details"])
    if src["url"]:
        where += f"; {src['url']}"
    doc.add_paragraph(_plain(f"Source: {where} ({c['trust']['badge']})"))
    if c["influence"]:
        doc.add_paragraph(_plain(f"Influenced: {c['influence']}"))
    if c["period"]:
        doc.add_paragraph(_plain(f"Period: {c['period']}"))
    if c["value_rows"]:
        table = doc.add_table(rows=1, cols=4)
        for cell, name in zip(table.rows[0].cells, ("name", "value", "unit", "scale"), strict=True):
            cell.text = name
        for v in c["value_rows"]:
            row = table.add_row().cells
            for cell, key in zip(row, ("name", "value", "unit", "scale"), strict=True):
                cell.text = _plain(v[key])
    if c["table"]:
        t = c["table"]
        cols = [col["name"] for col in t["columns"]]
        table = doc.add_table(rows=1, cols=len(cols) + 1)
        for cell, name in zip(table.rows[0].cells, ["#", *cols], strict=True):
            cell.text = _plain(name)
        for r in t["rows"][:MAX_TABLE_ROWS]:
            cells = table.add_row().cells
            cells[0].text = str(r["index"])
            for j, value in enumerate(r["cells"][: len(cols)]):
                cells[j + 1].text = _plain(("▶ " if value["has_citation"] else "") + value["text"])
        doc.add_paragraph(_plain(f"{t['total_rows']} row(s); cited cells are marked ▶"))
    if c["excerpt"]:
        doc.add_paragraph(_plain(c["excerpt"]), style="Intense Quote")
    if c["code"]:
        doc.add_paragraph(_plain(f"{c['producer'] or 'Computed by'}: {c['code']}"))


def render_run_docx(record: Mapping[str, object]) -> bytes:
    """The run (``run_record``'s shape) as a .docx file's bytes."""
    record = clean_run(record)
    refs = record["refs"]
    gate = record.get("gate") or {}
    answer = str(record.get("answer") or "")
    earlier = record["earlier_turns"]
    numbers = cardlib.citation_numbers(answer, *(t["answer"] for t in earlier), refs=refs)
    facts = header_facts(record)
    doc = Document()
    doc.add_heading(_plain(record.get("question") or "(no question)"), level=1)
    meta = [f"GATE: {cardlib.verdict(gate)['text']}"]
    if record.get("workspace"):
        meta.append(f"workspace: {record['workspace'].get('name')}")
    if facts["models"]:
        meta.append("model: " + ", ".join(facts["models"]))
    if record.get("created_at"):
        meta.append(f"date: {record['created_at']}")
    if facts["tokens"] is not None:
        meta.append(f"tokens: {facts['tokens']}")
    doc.add_paragraph(_plain(" · ".join(meta)))
    if earlier:
        doc.add_heading("Earlier in this conversation", level=2)
        for n, turn in enumerate(earlier, 1):
            doc.add_paragraph(_plain(f"Q{n}. {turn['question']}")).runs[0].bold = True
            _paragraphs(doc, numbered_citations(strip_unmet_section(turn["answer"]), refs, numbers))
    doc.add_heading("Answer", level=2)
    body = strip_unmet_section(answer) if not gate.get("passed") else answer
    _paragraphs(doc, numbered_citations(body, refs, numbers) or "(no answer)")
    _beside_answer(doc, gate, record.get("outbound") or [])
    cited, _ = cardlib.build_cards(answer, refs, gate)
    if cited:
        doc.add_heading("Evidence cited", level=2)
        for c in cited:
            _card(doc, {**c, "number": numbers.get(c["id"])})
    unmet = cardlib.unmet_claims(gate)
    if unmet:
        doc.add_heading("Not verified", level=2)
        for u in unmet:
            doc.add_paragraph(
                _plain(f'"{u["claim"] or "(whole answer)"}": {u["detail"]} ({u["code"]})'),
                style="List Bullet",
            )
    critiques = record.get("critiques") or []
    if critiques:
        doc.add_heading("CRITIQUE", level=2)
        for text in critiques:
            doc.add_paragraph(_plain(text), style="List Bullet")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _beside_answer(doc: DocxDocument, gate: Mapping[str, object], outbound: object) -> None:
    """Beside the answer, as in the markdown and HTML reports: the GATE's warnings, the model's
    conclusions, what was sent off the machine."""
    warned = cardlib.warnings(gate)
    if warned:
        doc.add_heading("GATE warnings", level=2)
        for w in warned:
            line = f'"{w["claim"] or "(whole answer)"}": {w["detail"]} ({w["code"]})'
            doc.add_paragraph(_plain(line), style="List Bullet")
    conclusions = texts(gate.get("conclusions"))  # already texts in a cleaned run
    if conclusions:
        doc.add_heading("The model's conclusions (not verified)", level=2)
        doc.add_paragraph(_plain(cardlib.CONCLUSIONS_NOTE))
        for text in conclusions:
            doc.add_paragraph(_plain(cardlib.clip(text, 2000)), style="List Bullet")
    sent = cardlib.sent_lines(outbound)
    if sent:
        doc.add_heading("Sent off the machine", level=2)
        for line in sent:
            doc.add_paragraph(_plain(cardlib.clip(line, 2000)), style="List Bullet")


def render_text_docx(title: str, markdown: str) -> bytes:
    """A markdown document (a research report) as a .docx file's bytes."""
    doc = Document()
    doc.add_heading(_plain(title or "refgate report"), level=1)
    _paragraphs(doc, markdown)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()

"""Tables laid out in a document's text, for the GATE: a PDF's ruled table stands in a docRef's
excerpt as markdown rows (``| Director | Age | Since |``, ``retrieval.loaders.ruled``), as do
DOCX and XLSX tables. The GATE reads such a block as a table (its header rows, each value at its
row and column) rather than as sentences, so a claim binds to it as to the same tableRef.
"""

from __future__ import annotations

import re

_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$")
_SEPARATOR = re.compile(r"^[\s|:\-]+$")
#: A pipe not escaped.
_PIPE = re.compile(r"(?<!\\)\|")

#: A table found in a text: (start, end) of its lines, its first row, its other rows.
TextTable = tuple[int, int, list[str], list[list[str]]]


def text_tables(text: str) -> list[TextTable]:
    """The blocks of at least two markdown rows in ``text`` (a separator row is dropped)."""
    if "|" not in text:
        return []
    out: list[TextTable] = []
    block: list[list[str]] = []
    start = end = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        m = _ROW.match(line.rstrip("\r\n"))
        if m is not None:
            if not block:
                start = pos
            end = pos + len(line)
            if not _SEPARATOR.match(m.group(1)):
                block.append([c.strip() for c in _PIPE.split(m.group(1))])
        else:
            if len(block) >= 2:
                out.append((start, end, block[0], block[1:]))
            block = []
        pos += len(line)
    if len(block) >= 2:
        out.append((start, end, block[0], block[1:]))
    return out

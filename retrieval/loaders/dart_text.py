"""DART scraping artefacts, cleaned from a section's text before it is chunked and tokenised.

Section text scraped from the DART viewer carries what the filer's editor and the scraper left:

- the literal entity ``&cr;`` (the editor's line break): a line break in prose, a space inside
  a table cell (so a row stays one line);
- the editor's instructions to the filer: ``◆click◆『수주상황』 삽입`` and the form file it names
  (``11011#*_수주상황.dsl``), "...하신 후
  입력하세요", "[Ctrl + 클릭]하면 해당위치로 이동합니다": dropped (a table cell holding one
  is emptied, the row kept);
- words split by the viewer's line wrapping: "리\\n니지M", "즐거움\\n으로", "(\\n가)": joined.
  A line is joined to the next when it does not end a sentence, neither line is a table row and
  the next does not open a heading or a list item. Without a space when the break cuts a word
  (the line ends in one Hangul syllable or an opening bracket, or the next line starts with a
  particle or an ending: "으로", "며,", "이다"); with one otherwise ("매출액은\\n1조" ->
  "매출액은 1조"), but never after a line that is itself a heading ("가. 회사의 명칭").
"""

from __future__ import annotations

import re

from refgate.retrieval.chunking import KOREAN_HEADING

_CR = "&cr;"
#: The editor's instructions to the filer (a line, or a table cell, holding one is dropped).
EDITOR_LEFTOVER = re.compile(
    r"◆\s*click\s*◆|삽입하신\s*후|입력하세요|Ctrl\s*\+\s*클릭|항목을\s*삽입할\s*수\s*있습니다"
    r"|^\s*\d{5}#\*.*\.dsl\s*$"
)
#: A list marker at a line's start (a Korean heading's numbering is ``KOREAN_HEADING``):
#: ※ / - / · / ○ / ■ / [ (a bracketed title) / *.
_LIST_START = re.compile(r"^\s*(?:[※\-·•○■□▶◆\[<【]|\*)")
#: Particles and endings a wrapped line may start with (then the break cut a word).
_TAIL = re.compile(
    r"^(?:으로|로서|로써|로|에서|에게|에는|에|의|을|를|은|는|이며|이고|이다|이나|이|가|와|과|도|만"
    r"|며|고|다|니다|습니다|였|었|했|하여|하고|한|할|함|됨|된|되|입니다|인|임)(?=[\s,.)]|$)"
)
_SENTENCE_END = re.compile(r"(?:[.!?。:;]|다|요|음|함|됨|임)\s*$")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _is_table(line: str) -> bool:
    return line.lstrip().startswith("|")


def _clean_table_row(line: str) -> str:
    row = line.replace(_CR, " ")
    if not EDITOR_LEFTOVER.search(row):
        return row
    cells = row.split("|")
    return "|".join("" if EDITOR_LEFTOVER.search(c) else c for c in cells)


def _joiner(prev: str, nxt: str) -> str | None:
    """How ``prev`` and the line after it join: "" (a cut word), " " (a wrapped sentence) or
    None (separate lines)."""
    a, b = prev.rstrip(), nxt.strip()
    if not a or not b or _is_table(a) or _is_table(b):
        return None
    if _SENTENCE_END.search(a) or KOREAN_HEADING.match(b) or _LIST_START.match(b):
        return None
    last = a.split()[-1]
    cut = a.endswith("(") or (len(last) == 1 and _HANGUL.match(last) is not None)
    if cut or (_HANGUL.search(a[-1]) and _TAIL.match(b)):
        return ""
    if KOREAN_HEADING.match(a) or _LIST_START.match(a) or len(a) < 2:
        return None
    return " "


def clean_dart_text(text: str) -> str:
    """``text`` without the DART viewer's artefacts (see the module docstring)."""
    lines: list[str] = []
    for raw in (text or "").replace("\r\n", "\n").split("\n"):
        if _is_table(raw):
            lines.append(_clean_table_row(raw))
            continue
        for piece in raw.split(_CR):
            if EDITOR_LEFTOVER.search(piece):
                continue
            lines.append(piece.rstrip())
    out: list[str] = []
    for line in lines:
        if out:
            glue = _joiner(out[-1], line)
            if glue is not None:
                out[-1] = out[-1].rstrip() + glue + line.strip()
                continue
        out.append(line)
    # runs of blank lines left by dropped breaks and leftovers: one blank line
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")

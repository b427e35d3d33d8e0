"""Windows of a chunk for the dense side: every part of a long chunk gets its own vector.

A 512-1024-token chunk is longer than MiniLM's 256-word-piece input. Averaging its windows'
vectors (``dense="chunk"``, the former default) blurs a chunk whose answer sits in one window;
``dense="window"`` indexes one vector per window and scores a chunk by its best window (max
pooling), returning the chunk. Windows are consecutive character spans of the chunk: the
embedder's own word pieces when it offers ``window_spans`` (MiniLM), else cl100k tokens.

A chunk of Korean text (a DART filing's) is embedded by its prose alone (``prose_windows``): each
of its lines outside tables (a paragraph) is a window, a short line (a heading) joined to the next,
and a chunk that is all table by its first two rows. A filing's tables are nine tenths of its text (32.8 of
the 47 엔씨소프트 filings' 36 million characters), their figures are what BM25 matches and a
sentence embedder reads them poorly; and a paragraph's window is the same text whenever the
paragraph repeats from one report to the next, so each is embedded once (the embeddings cache
is keyed by the window's hash). docs/benchmarks.md, "Korean search on real filings", measures it.
"""

from __future__ import annotations

from refgate.retrieval.bm25 import has_hangul
from refgate.retrieval.chunking import _encoding, content_hash, count_tokens

#: Word pieces (or tokens) per window by default: MiniLM's input less its two special tokens.
WINDOW_TOKENS = 254


def window_spans(embeddings: object, text: str, size: int = WINDOW_TOKENS) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` character spans of ``text``, each at most ``size`` tokens."""
    if not text:
        return [(0, 0)]
    own = getattr(embeddings, "window_spans", None)
    if callable(own):
        spans = own(text, size)
        return spans or [(0, len(text))]
    enc = _encoding()
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= size:
        return [(0, len(text))]
    _, offsets = enc.decode_with_offsets(tokens)
    starts = [offsets[i] for i in range(0, len(tokens), size)]
    ends = starts[1:] + [len(text)]
    return [(a, b) for a, b in zip(starts, ends, strict=True) if b > a]


#: Rows a table-only Korean chunk is embedded by (its caption and header).
TABLE_HEAD_ROWS = 2
#: A Korean window is at least this many tokens of lines (a heading joins its paragraph).
PROSE_MIN_TOKENS = 24


def prose_windows(text: str, size: int = WINDOW_TOKENS) -> list[str]:
    """The windows of a Korean chunk: each line outside tables (a paragraph) on its own, short
    lines joined to the next until ``PROSE_MIN_TOKENS``, a line over ``size`` tokens cut by
    tokens; or its first ``TABLE_HEAD_ROWS`` table rows, cut at ``size`` tokens, when it has no
    other line."""
    prose = [ln.strip() for ln in text.splitlines() if ln.strip() and not _is_table(ln)]
    if not prose:
        rows = [ln.strip() for ln in text.splitlines() if ln.strip() and "---" not in ln]
        head = "\n".join(rows[:TABLE_HEAD_ROWS]) or text[:200]
        # a wide table's rows run to thousands of tokens: the window is their first ``size``
        start, end = window_spans(None, head, size)[0]
        return [head[start:end]]
    windows: list[str] = []
    current: list[str] = []
    used = 0
    for line in prose:
        n = count_tokens(line)
        if n > size:
            windows.extend(line[a:b] for a, b in window_spans(None, line, size))
            continue
        if current and used + n > size:
            windows.append("\n".join(current))
            current, used = [], 0
        current.append(line)
        used += n
        if used >= PROSE_MIN_TOKENS:
            windows.append("\n".join(current))
            current, used = [], 0
    if current:
        windows.append("\n".join(current))
    return windows


def _is_table(line: str) -> bool:
    return line.lstrip().startswith("|")


def chunk_windows(
    embeddings: object, text: str, size: int = WINDOW_TOKENS
) -> list[tuple[str, str]]:
    """``(content hash, text)`` of each window of a chunk, in order (``prose_windows`` for a
    chunk of Korean text)."""
    if has_hangul(text):
        return [(content_hash(w), w) for w in prose_windows(text, size)]
    out = []
    for a, b in window_spans(embeddings, text, size):
        piece = text[a:b]
        out.append((content_hash(piece), piece))
    return out or [(content_hash(text), text)]

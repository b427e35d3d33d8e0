"""Windows of a chunk for the dense side: every part of a long chunk gets its own vector.

A 512-1024-token chunk is longer than MiniLM's 256-word-piece input. Averaging its windows'
vectors (``dense="chunk"``, the former default) blurs a chunk whose answer sits in one window;
``dense="window"`` indexes one vector per window and scores a chunk by its best window (max
pooling), returning the chunk. Windows are consecutive character spans of the chunk: the
embedder's own word pieces when it offers ``window_spans`` (MiniLM), else cl100k tokens.
"""

from __future__ import annotations

from refgate.retrieval.chunking import _encoding, content_hash

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


def chunk_windows(
    embeddings: object, text: str, size: int = WINDOW_TOKENS
) -> list[tuple[str, str]]:
    """``(content hash, text)`` of each window of a chunk, in order."""
    out = []
    for a, b in window_spans(embeddings, text, size):
        piece = text[a:b]
        out.append((content_hash(piece), piece))
    return out or [(content_hash(text), text)]

"""Lexical matching: content words of a text and the one BM25 ranker (``bm25s``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import bm25s

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']+")
#: Function words every matcher drops (articles, prepositions, auxiliaries, question words);
#: each matcher adds the words its own texts make noise of.
FUNCTION_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "what",
        "which",
        "with",
    }
)
_STOP = FUNCTION_WORDS | frozenset(
    {
        "about",
        "after",
        "been",
        "before",
        "between",
        "did",
        "during",
        "into",
        "over",
        "than",
        "that",
        "then",
        "these",
        "those",
        "under",
        "was",
        "were",
        "who",
        "whom",
        "why",
    }
)


def terms(text: str) -> list[str]:
    """Lower-case content words of ``text`` (stop words dropped)."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text or "")) if w not in _STOP]


class LexicalRanker:
    """BM25 over a fixed list of tokenised documents: the one lexical ranker (web snapshot search,
    skill search, the memory's fallback recall).

    Scores are ``bm25s``'s Lucene BM25 (k1 1.5, b 0.75). ``rank`` returns ``(document index,
    score)`` for documents with a positive score, best first, ties in document order. Queries are
    de-duplicated, so a repeated query word does not count twice.
    """

    def __init__(self, docs: Sequence[Sequence[str]], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.size = len(docs)
        self._model: bm25s.BM25 | None = None
        if any(docs):
            import bm25s  # deferred: ~0.5 s to import; only the first lexical search pays it

            self._model = bm25s.BM25(k1=k1, b=b, method="lucene")
            self._model.index([list(d) for d in docs], show_progress=False)

    def scores(self, query: Iterable[str]) -> list[float]:
        """The score of every document for the query words (0.0 where none occurs)."""
        words = list(dict.fromkeys(query))
        if self._model is None or not words:
            return [0.0] * self.size
        return [float(s) for s in self._model.get_scores(words)]

    def rank(self, query: Iterable[str], limit: int | None = None) -> list[tuple[int, float]]:
        """``(index, score)`` of the documents that match, best first (ties by index)."""
        scored = [(i, s) for i, s in enumerate(self.scores(query)) if s > 0.0]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored if limit is None else scored[: max(0, limit)]

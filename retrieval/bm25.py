"""The lexical side of ``DocumentIndex``: a bm25s index over the chunks (English stop words
removed, stemmed with PyStemmer when installed, numbers kept) and the BM25 scores of a query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Words of two or more characters plus numbers and fractions ("0", "1/4", "2.5"), which matter
#: in financial text and which bm25s's default pattern drops.
TOKEN_PATTERN = r"(?u)\d+(?:[./]\d+)*|\b\w\w+\b"


def stemmer() -> Any:
    """The English PyStemmer, or None when PyStemmer is not installed."""
    try:
        # deferred: PyStemmer is heavy to import; paid on first use
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english")


def bm25_tokens(texts: Sequence[str], stem: Any, *, ids: bool) -> Any:
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    return bm25s.tokenize(
        list(texts),
        token_pattern=TOKEN_PATTERN,
        stopwords="en",
        stemmer=stem,
        return_ids=ids,
        show_progress=False,
    )


def build_bm25(texts: Sequence[str], stem: Any) -> Any:
    """A bm25s index of ``texts`` (row i = text i)."""
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    model = bm25s.BM25()
    model.index(bm25_tokens(texts, stem, ids=True), show_progress=False)
    return model


def load_bm25(path: str) -> Any:
    """The bm25s index saved in the folder ``path``."""
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    return bm25s.BM25.load(path, show_progress=False)


def bm25_scores(model: Any, query: str, stem: Any, mask: np.ndarray | None) -> np.ndarray | None:
    """BM25 score of every chunk (0 outside ``mask``), or None if the query has no terms."""
    if model is None:
        return None
    tokens = bm25_tokens([query], stem, ids=False)[0]
    if not tokens:
        return None
    scores = np.asarray(model.get_scores(tokens), dtype=np.float32)
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    return scores


def bm25_top(scores: np.ndarray | None, n: int) -> list[tuple[int, float]]:
    """The ``n`` best rows with a positive score, as ``(row, score)``, best first."""
    if n <= 0 or scores is None:
        return []
    n = min(n, int(np.count_nonzero(scores > 0)))
    if n == 0:
        return []
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(r), float(scores[r])) for r in top]

"""Fusion of the dense (cosine) and lexical (BM25) rankings into one hybrid ranking.

Default: a convex combination of the two scores, each normalised by its theoretical minimum and
its per-query maximum ("TM2C2" in Bruch, Gai & Ingber, *An Analysis of Fusion Functions for
Hybrid Retrieval*, ACM TOIS 2023)::

    fused(d) = alpha * (cos(d) - (-1)) / (max cos - (-1)) + (1 - alpha) * bm25(d) / max bm25

over the union of both candidate lists, every candidate scored by *both* methods (its real cosine
and its real BM25 score, not a rank). Unlike reciprocal-rank fusion it keeps how far apart the
scores are: a dense list whose cosines barely separate the candidates (near-identical texts, as
in the FOMC statements) moves the fused ranking little, while a BM25 list with a clear winner keeps
it; no list contributes by rank position alone. The theoretical minimum (rather than the
candidates' minimum) keeps a narrow cosine spread narrow instead of stretching it to [0, 1].

The dense weight ``alpha`` (``dense_weight_for``) depends on the corpus and on the query:

- **the corpus's homogeneity** to the embedder, the mean cosine between two of its chunks
  (``homogeneity``): in a corpus whose documents all look alike to the embedder (FOMC statements:
  0.67) cosines barely tell documents apart and BM25's exact terms decide, in a varied one
  (filings, annual-report paragraphs: 0.22-0.33) the dense side reads paraphrases BM25 misses.
  The base weight is 0.85 up to a homogeneity of 0.35 and falls linearly to 0.6 at 0.65;
- **the query's length**: from 15 words the weight rises linearly from that base to 0.95 at 30
  words (a verbose question's instruction words mislead BM25);
- **whether the embedder reads the corpus's language** (``embedder_choice.reads_corpus``): an
  embedder that does not (MiniLM on Korean filings: dense recall@10 0.18) gets ``UNREAD_WEIGHT``
  instead, whatever the corpus and the query, and no decisive shift: the unread corpus rule,
  applied by ``ranking.SearchPlan.dense_weight``.

Without a corpus statistic the base is ``DENSE_WEIGHT`` (0.7).

Then, per query, **how decisive each list is** (``decisive_weight``): a list whose best candidate
stands far above the next ten (in standard deviations of its top 100) knows which chunk answers;
a list whose top is flat does not. The weight moves toward the decisive list:
``alpha' = alpha * dd^p / (alpha * dd^p + (1 - alpha) * db^p)`` with ``dd`` / ``db`` the dense and
BM25 lists' decisiveness (``decisiveness``) and ``p`` = ``DECISIVE_POWER``. How these were chosen,
and on what: docs/benchmarks.md, "Long documents". Reciprocal-rank fusion (``rrf_fuse``, Cormack et al. 2009)
stays available (``fusion="rrf"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

#: Weight of the dense score in the convex combination (1 - it goes to BM25) for a short query
#: when the corpus's homogeneity is not known.
DENSE_WEIGHT = 0.7
#: The base weight by the corpus's homogeneity (mean cosine between two chunks): ``VARIED_WEIGHT``
#: up to ``VARIED_CORPUS``, falling linearly to ``UNIFORM_WEIGHT`` at ``UNIFORM_CORPUS``.
VARIED_CORPUS = 0.35
UNIFORM_CORPUS = 0.65
VARIED_WEIGHT = 0.85
UNIFORM_WEIGHT = 0.6
#: A verbose query (an analyst's full question, instructions included) gets more dense weight:
#: BM25 scores every one of its words, and the instructions' words ("balance sheet", "USD",
#: "answer") rank the wrong pages; the dense side reads the question as a whole. The weight
#: rises linearly from ``DENSE_WEIGHT`` at ``SHORT_QUERY_WORDS`` words to ``LONG_QUERY_WEIGHT``
#: at ``LONG_QUERY_WORDS`` (docs/benchmarks.md, "Long documents").
SHORT_QUERY_WORDS = 15
LONG_QUERY_WORDS = 30
LONG_QUERY_WEIGHT = 0.95
#: The dense weight when the embedder does not read the corpus's language (the unread corpus
#: rule): its cosines barely tell the chunks apart, so BM25 decides and the dense side only
#: breaks ties. On the tuning half of the real Korean questions every weight from 0 to 0.4 gave
#: the same recall and 0.5 lost some; this is the plateau's middle (docs/benchmarks.md,
#: "The Korean default search").
UNREAD_WEIGHT = 0.2
_WORD = re.compile(r"\w+")


def base_dense_weight(homogeneity: float | None) -> float:
    """The dense weight for a short query over a corpus of this ``homogeneity`` (None: unknown)."""
    if homogeneity is None:
        return DENSE_WEIGHT
    t = (float(homogeneity) - VARIED_CORPUS) / (UNIFORM_CORPUS - VARIED_CORPUS)
    t = min(1.0, max(0.0, t))
    return VARIED_WEIGHT + t * (UNIFORM_WEIGHT - VARIED_WEIGHT)


def dense_weight_for(query: str, homogeneity: float | None = None) -> float:
    """The default dense weight for ``query`` over a corpus of this ``homogeneity``: the corpus's
    base weight, rising with the query's length in words to ``LONG_QUERY_WEIGHT``."""
    base = base_dense_weight(homogeneity)
    n = len(_WORD.findall(query))
    if n <= SHORT_QUERY_WORDS:
        return base
    if n >= LONG_QUERY_WORDS:
        return max(base, LONG_QUERY_WEIGHT)
    share = (n - SHORT_QUERY_WORDS) / (LONG_QUERY_WORDS - SHORT_QUERY_WORDS)
    return base + share * max(0.0, LONG_QUERY_WEIGHT - base)


#: How strongly the lists' decisiveness moves the dense weight (0: not at all).
DECISIVE_POWER = 0.5
#: The next candidates the best one is compared with, and the list depth whose spread scales it.
DECISIVE_NEXT = 10
DECISIVE_DEPTH = 100
#: Decisiveness of a list with nothing to rank (no BM25 term matched), or a flat one.
_NO_SIGNAL = 1e-6


def decisiveness(scores: Sequence[float] | np.ndarray) -> float:
    """How far a list's best score stands above the next ``DECISIVE_NEXT``, in standard deviations
    of its best ``DECISIVE_DEPTH`` scores (0 for fewer than three scores or a flat list)."""
    top = np.sort(np.asarray(scores, dtype=np.float64))[::-1][:DECISIVE_DEPTH]
    if len(top) < 3:
        return 0.0
    spread = float(top.std())
    if spread == 0.0:
        return 0.0
    return float((top[0] - top[1 : 1 + DECISIVE_NEXT].mean()) / spread)


def decisive_weight(
    alpha: float,
    dense: Sequence[float] | np.ndarray,
    lexical: Sequence[float] | np.ndarray,
    *,
    power: float = DECISIVE_POWER,
) -> float:
    """The dense weight ``alpha`` moved toward the more decisive list: ``dense`` / ``lexical`` are
    the scores of every chunk the query may reach (cosines; BM25 scores, 0 for no match)."""
    if power == 0.0:
        return alpha
    lex = np.asarray(lexical, dtype=np.float64)
    dd = max(decisiveness(dense), _NO_SIGNAL) ** power
    db = max(decisiveness(lex), _NO_SIGNAL) ** power if (lex > 0).any() else _NO_SIGNAL**power
    return alpha * dd / (alpha * dd + (1.0 - alpha) * db)


def corpus_homogeneity(vectors: np.ndarray) -> float:
    """The mean cosine between two different rows of ``vectors`` (each normalised first): 0 for
    fewer than two rows."""
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2 or len(v) < 2:
        return 0.0
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    v = v / norms
    n = len(v)
    # sum over all pairs = |sum of rows|^2; minus the n self-pairs, over n(n-1) ordered pairs
    total = float(np.dot(v.sum(axis=0), v.sum(axis=0)))
    return (total - float((np.linalg.norm(v, axis=1) ** 2).sum())) / (n * (n - 1))


#: Theoretical minimum of each score: cosine of unit vectors, and BM25.
COSINE_FLOOR = -1.0
BM25_FLOOR = 0.0
#: The usual RRF constant (Cormack et al. 2009).
RRF_K = 60


def rrf_fuse(
    rankings: Sequence[Sequence[int]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """Fuse ranked lists of row ids: ``score(d) = sum w_i / (k + rank_i(d))`` (rank from 1),
    best first; ``weights`` default to 1 per list."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else float(weights[i])
        for rank, row in enumerate(ranking, start=1):
            scores[row] = scores.get(row, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def normalise_scores(scores: np.ndarray, *, floor: float) -> np.ndarray:
    """``(s - floor) / (max s - floor)``, clipped to [0, 1]; all zeros if nothing exceeds ``floor``."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return s
    top = float(s.max())
    if top <= floor:
        return np.zeros_like(s)
    return np.clip((s - floor) / (top - floor), 0.0, 1.0)


def convex_fuse(
    rows: Sequence[int],
    dense: Sequence[float] | np.ndarray,
    lexical: Sequence[float] | np.ndarray,
    *,
    alpha: float = DENSE_WEIGHT,
    dense_floor: float = COSINE_FLOOR,
    lexical_floor: float = BM25_FLOOR,
) -> list[tuple[int, float]]:
    """Fuse candidates scored by both methods: ``dense[i]`` / ``lexical[i]`` are row ``rows[i]``'s
    cosine and BM25 score. Returns ``(row, fused score in [0, 1])``, best first (ties: lower row)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha (the dense weight) must be in [0, 1]")
    if not len(rows) == len(dense) == len(lexical):
        raise ValueError("rows, dense and lexical must have the same length")
    if len(rows) == 0:
        return []
    fused = alpha * normalise_scores(np.asarray(dense), floor=dense_floor) + (
        1.0 - alpha
    ) * normalise_scores(np.asarray(lexical), floor=lexical_floor)
    order = sorted(range(len(rows)), key=lambda i: (-fused[i], rows[i]))
    return [(int(rows[i]), float(fused[i])) for i in order]

"""Reciprocal-rank fusion and maximal marginal relevance over fused candidates.

LangChain's ``maximal_marginal_relevance`` scores relevance as cosine similarity to the query
embedding. Over hybrid candidates that would throw away the BM25 half of the ranking, so MMR here
takes the fused relevance (RRF scores, scaled to [0, 1]) and uses the embeddings only for the
redundancy term: ``lambda * relevance - (1 - lambda) * max cosine to the picked ones``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The usual RRF constant (Cormack et al. 2009).
RRF_K = 60


def rrf_fuse(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse ranked lists of row ids: ``score(d) = sum 1 / (k + rank)`` (rank from 1), best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking, start=1):
            scores[row] = scores.get(row, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def mmr_select(
    relevance: np.ndarray, vectors: np.ndarray, k: int, *, lambda_mult: float = 0.7
) -> list[int]:
    """Indices (into ``relevance``) of ``k`` candidates picked by MMR.

    ``relevance`` is scaled to [0, 1] by its maximum; ``vectors`` are unit-norm rows.
    """
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    if not 0.0 <= lambda_mult <= 1.0:
        raise ValueError("lambda_mult must be in [0, 1]")
    rel = np.asarray(relevance, dtype=np.float64)
    top = rel.max()
    rel = rel / top if top > 0 else rel
    vecs = np.asarray(vectors, dtype=np.float32)
    sims = vecs @ vecs.T
    picked = [int(np.argmax(rel))]
    max_sim = sims[picked[0]].astype(np.float64)
    while len(picked) < min(k, n):
        score = lambda_mult * rel - (1.0 - lambda_mult) * max_sim
        score[picked] = -np.inf
        nxt = int(np.argmax(score))
        picked.append(nxt)
        max_sim = np.maximum(max_sim, sims[nxt])
    return picked

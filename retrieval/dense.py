"""The dense side of ``DocumentIndex``: unit vectors in a FAISS inner-product index, exact or HNSW
by size, and the best chunks for a query vector.

In window mode (``windows.py``) a FAISS row is one window of a chunk, the windows of a chunk
consecutive; ``window_rows`` maps rows to chunks, and a chunk's score is its best window's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    import faiss

#: Vectors up to which the dense index is exact (``faiss.IndexFlatIP``, a full scan per query:
#: 11-29 ms at 200,000 vectors here); a bigger index is an HNSW graph (``IndexHNSWFlat``, inner
#: product), whose query time grows with log n. The graph is approximate: on the synthetic
#: benchmark vectors its top 10 shared 0.44 (efSearch 128) to 0.67 (512) of the exact top 10, so
#: it is used only where a full scan gets slow. See docs/benchmarks.md ("Document scale").
FLAT_MAX_VECTORS = 250_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 512


def normalise(vecs: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), as contiguous float32."""
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim == 1:
        vecs = vecs[None, :]
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vecs / norms, dtype=np.float32)


def faiss_index_for(mat: np.ndarray) -> faiss.Index:
    """The FAISS index for these unit vectors: exact up to ``FLAT_MAX_VECTORS``, HNSW above."""
    # deferred: faiss is heavy to import; paid on first use
    import faiss

    index: faiss.Index
    if len(mat) <= FLAT_MAX_VECTORS:
        index = faiss.IndexFlatIP(mat.shape[1])
    else:
        graph = faiss.IndexHNSWFlat(mat.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        graph.hnsw.efSearch = HNSW_EF_SEARCH
        index = graph
    index.add(mat)
    return index


def faiss_kind(index: object) -> str:
    return "hnsw" if index is not None and hasattr(index, "hnsw") else "flat"


@overload
def window_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def window_rows(counts: None) -> tuple[None, None]: ...
def window_rows(counts: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """From the windows per chunk: each chunk's first FAISS row and each row's chunk."""
    if counts is None:
        return None, None
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return first, np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def mean_chunk_vectors(mat: np.ndarray, window_chunk: np.ndarray, chunks: int) -> np.ndarray:
    """One unit vector per chunk: the normalised sum of its windows' rows of ``mat``."""
    sums = np.zeros((chunks, mat.shape[1]), dtype=np.float32)
    np.add.at(sums, window_chunk, mat)
    return normalise(sums)


def dense_top(
    index: faiss.Index | None,
    qvec: np.ndarray,
    n: int,
    mask: np.ndarray | None,
    chunks: int,
    window_chunk: np.ndarray | None,
) -> list[tuple[int, float]]:
    """The ``n`` best of ``chunks`` chunks (within ``mask``) as ``(row, cosine)``, best first."""
    # deferred: faiss is heavy to import; paid on first use
    import faiss

    faiss_any: Any = faiss  # its stubs lack SearchParametersHNSW and the sel= argument

    if index is None or n <= 0:
        return []
    params: Any = None  # faiss's search parameters (its stubs lack the HNSW ones)
    windowed = window_chunk is not None
    hnsw = faiss_kind(index) == "hnsw"
    allowed = chunks
    if mask is not None:
        ids = np.flatnonzero(mask).astype(np.int64)
        if len(ids) == 0:
            return []
        allowed = len(ids)
        if windowed:
            ids = np.flatnonzero(mask[window_chunk]).astype(np.int64)
        if hnsw and len(ids) <= FLAT_MAX_VECTORS:
            # a selective filter on a graph index: score the allowed vectors exactly
            return dense_exact(index, qvec, ids, min(n, allowed), window_chunk)
        selector = faiss.IDSelectorBatch(ids)  # kept alive while params refer to it
        params = (
            faiss_any.SearchParametersHNSW(sel=selector, efSearch=max(HNSW_EF_SEARCH, 4 * n))
            if hnsw
            else faiss_any.SearchParameters(sel=selector)
        )
    elif hnsw:
        params = faiss_any.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, 4 * n))
    n = min(n, allowed)
    if window_chunk is None:
        n = min(n, index.ntotal)
        scores, rows = index.search(qvec, n, params=params)
        found = [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
        return sorted(found, key=lambda rs: (-rs[1], rs[0]))  # equal scores in row order
    return _window_top(index, qvec, n, params, window_chunk)


def _window_top(
    index: faiss.Index,
    qvec: np.ndarray,
    n: int,
    params: faiss.SearchParameters | None,
    window_chunk: np.ndarray,
) -> list[tuple[int, float]]:
    """Window mode: the best windows, grouped by chunk (a chunk's score = its best window's);
    the window search widens until ``n`` distinct chunks are found or every window is seen."""
    total = index.ntotal
    want = min(total, max(4 * n, n + 16))
    while True:
        scores, rows = index.search(qvec, want, params=params)
        best: dict[int, float] = {}
        # equal scores (the same text twice) in row order, whatever order FAISS's heap left
        for r, sc in sorted(zip(rows[0], scores[0], strict=True), key=lambda x: (-x[1], x[0])):
            if r < 0:
                continue
            c = int(window_chunk[r])
            if c not in best:
                best[c] = float(sc)
        if len(best) >= n or want >= total:
            return list(best.items())[:n]
        want = min(total, want * 4)


def dense_exact(
    index: faiss.Index, qvec: np.ndarray, ids: np.ndarray, n: int, window_chunk: np.ndarray | None
) -> list[tuple[int, float]]:
    """Exact scores of the vectors ``ids`` (rows of the FAISS index), best ``n`` chunks."""
    vecs = index.reconstruct_batch(ids)
    scores = vecs @ qvec[0]
    rows = ids if window_chunk is None else window_chunk[ids]
    best: dict[int, float] = {}
    for i in np.argsort(-scores, kind="stable"):
        c = int(rows[i])
        if c not in best:
            best[c] = float(scores[i])
            if len(best) >= n:
                break
    return list(best.items())


def dense_score(
    index: faiss.Index,
    row: int,
    qvec: np.ndarray,
    first_window: np.ndarray | None,
    window_counts: np.ndarray | None,
) -> float:
    """Cosine of chunk ``row`` with the query: its best window's in window mode."""
    if first_window is None or window_counts is None:
        return float(index.reconstruct(int(row)) @ qvec[0])
    first = int(first_window[row])
    vecs = index.reconstruct_n(first, int(window_counts[row]))
    return float(np.max(vecs @ qvec[0]))

"""The ranking both index backends share (``index.DocumentIndex`` and ``pgvector.index.PgIndex``):
the search options, the fusion of the dense and BM25 candidate lists into one ranking, and the
pick of the ``k`` hits from it (MMR). Each backend finds its candidates and their missing scores
its own way; what it does with them is here, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol

import numpy as np
from typing_extensions import TypedDict

from refgate.retrieval.fusion import (
    COSINE_FLOOR,
    DECISIVE_POWER,
    DENSE_WEIGHT,
    RRF_K,
    UNREAD_WEIGHT,
    convex_fuse,
    decisive_weight,
    dense_weight_for,
    rrf_fuse,
)
from refgate.retrieval.mmr import mmr_select

SearchMode = Literal["hybrid", "dense", "bm25"]
FusionMethod = Literal["convex", "rrf"]
#: A ranked candidate list: ``(row, score)``, best first.
Ranked = list[tuple[int, float]]

#: Candidates taken from each of the dense and BM25 lists before fusion (at least; more when
#: ``fetch_k`` asks for more). Fusing deeper lists lets a chunk ranked modestly by both methods
#: surface; it costs one more FAISS / BM25 top-n, not another scan.
CANDIDATES = 100


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk, its score and its metadata (doc_id, section, entity, date,
    source, start/end character offsets, content hash)."""

    doc_id: str
    chunk_id: str
    score: float
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    rank: int = 0
    dense_score: float | None = None
    bm25_score: float | None = None

    @property
    def start(self) -> int:
        return int(self.metadata.get("start", 0))

    @property
    def end(self) -> int:
        return int(self.metadata.get("end", 0))


class SearchOptions(TypedDict, total=False):
    """The keyword arguments of a backend's ``search`` (``DocumentIndex.search`` explains them)."""

    k: int
    filters: Mapping[str, object] | None
    mmr: bool
    mode: SearchMode
    lambda_mult: float | None
    fetch_k: int | None
    fusion: FusionMethod
    dense_weight: float | None
    decisive: float
    near_duplicate: float | None
    dense_floor: float


class IndexSearchOptions(SearchOptions, total=False):
    """``SearchOptions`` and the report period a question names, as a filter: what both
    backends' ``search`` take (the period is applied before the ``SearchPlan``)."""

    question_period: bool
    as_of: date | None


@dataclass(frozen=True)
class SearchPlan:
    """One query's ``SearchOptions`` with their defaults filled in, and the list sizes they give:
    ``fetch`` candidates are fused and picked from, ``pool`` taken from each list."""

    k: int
    filters: Mapping[str, object] | None
    mmr: bool
    mode: SearchMode
    lam: float
    fetch: int
    pool: int
    fusion: FusionMethod
    alpha: float | None
    decisive: float
    near_duplicate: float | None
    dense_floor: float

    @classmethod
    def of(cls, options: SearchOptions, default_lambda: float) -> SearchPlan:
        """The plan of ``options`` (``default_lambda``: the index's own MMR lambda); a
        ``TypeError`` for an option no backend knows, as for any unexpected keyword."""
        for name in options:
            if name not in SearchOptions.__optional_keys__:
                raise TypeError(f"search() got an unexpected keyword argument {name!r}")
        k = options.get("k", 10)
        mode = options.get("mode", "hybrid")
        fetch = max(options.get("fetch_k") or 4 * k, k)
        lam = options.get("lambda_mult")
        return cls(
            k=k,
            filters=options.get("filters"),
            mmr=options.get("mmr", True),
            mode=mode,
            lam=default_lambda if lam is None else lam,
            fetch=fetch,
            pool=max(fetch, CANDIDATES) if mode == "hybrid" else fetch,
            fusion=options.get("fusion", "convex"),
            alpha=options.get("dense_weight"),
            decisive=options.get("decisive", DECISIVE_POWER),
            near_duplicate=options.get("near_duplicate"),
            dense_floor=options.get("dense_floor", COSINE_FLOOR),
        )

    def check(self) -> None:
        """A ``ValueError`` for a mode or a fusion method no backend knows."""
        if self.mode not in ("hybrid", "dense", "bm25"):
            raise ValueError(f"mode must be hybrid, dense or bm25, not {self.mode!r}")
        if self.fusion not in ("convex", "rrf"):
            raise ValueError(f"fusion must be convex or rrf, not {self.fusion!r}")

    @property
    def weighs_lists(self) -> bool:
        """Whether the dense weight is to be chosen for this query (convex fusion, none given)."""
        return self.alpha is None and self.mode == "hybrid" and self.fusion == "convex"

    def dense_weight(
        self,
        query: str,
        homogeneity: float | None,
        dense: Ranked,
        reachable_bm25: Sequence[float] | np.ndarray,
        *,
        reads_corpus: bool = True,
    ) -> float:
        """The convex fusion's dense weight for ``query``: the corpus's and the query's
        (``fusion.dense_weight_for``), moved toward the more decisive list (``decisive_weight``;
        ``reachable_bm25``: the BM25 scores of the chunks the filters let through). An embedder
        that does not read the corpus's language (``reads_corpus`` False) gets
        ``UNREAD_WEIGHT``, whatever the query: how decisive its cosines look says nothing (the
        unread corpus rule)."""
        if not reads_corpus:
            return UNREAD_WEIGHT
        alpha = dense_weight_for(query, homogeneity)
        return decisive_weight(alpha, [s for _, s in dense], reachable_bm25, power=self.decisive)


class MissingScores(Protocol):
    """How a backend scores fusion candidates that only one list found."""

    def dense_of(self, rows: list[int]) -> Mapping[int, float]:
        """The cosines of ``rows`` (chunks only BM25 found)."""
        ...

    def bm25_of(self, rows: list[int]) -> Mapping[int, float]:
        """The BM25 scores of ``rows`` (chunks only the dense side found)."""
        ...


@dataclass
class Candidates:
    """A query's two candidate lists and every score known of their chunks."""

    dense: Ranked
    lexical: Ranked
    dense_s: dict[int, float] = field(init=False)
    bm25_s: dict[int, float] = field(init=False)

    def __post_init__(self) -> None:
        self.dense_s = dict(self.dense)
        self.bm25_s = dict(self.lexical)

    def rank(self, plan: SearchPlan, alpha: float | None, missing: MissingScores) -> Ranked:
        """The ``plan.fetch`` best candidates: fused in hybrid mode (reciprocal rank, or convex
        with dense weight ``alpha`` over both scores of every candidate), else one list."""
        if plan.mode == "hybrid" and plan.fusion == "rrf":
            rows = [[r for r, _ in self.dense], [r for r, _ in self.lexical]]
            return rrf_fuse(rows, k=RRF_K)[: plan.fetch]
        if plan.mode == "hybrid":
            # alpha is None only when the plan did not weigh the lists: never in convex fusion
            return self._convex(plan, DENSE_WEIGHT if alpha is None else alpha, missing)
        return self.dense if plan.mode == "dense" else self.lexical

    def _convex(self, plan: SearchPlan, alpha: float, missing: MissingScores) -> Ranked:
        # score every candidate by both methods: the cosine of BM25-only candidates and the
        # BM25 score (possibly 0) of dense-only ones
        rows = list(dict.fromkeys([r for r, _ in self.dense] + [r for r, _ in self.lexical]))
        no_dense = [r for r in rows if r not in self.dense_s]
        if no_dense:
            self.dense_s.update(missing.dense_of(no_dense))
        no_bm25 = [r for r in rows if r not in self.bm25_s]
        if no_bm25:
            self.bm25_s.update(missing.bm25_of(no_bm25))
        return convex_fuse(
            rows,
            [self.dense_s.get(r, -1.0) for r in rows],
            [self.bm25_s.get(r, 0.0) for r in rows],
            alpha=alpha,
            dense_floor=plan.dense_floor,
        )[: plan.fetch]


#: A chunk as a hit shows it: ``(doc_id, chunk_id, text, metadata)``.
ChunkView = tuple[str, str, str, dict[str, Any]]


def pick_hits(
    plan: SearchPlan,
    ranked: Ranked,
    candidates: Candidates,
    chunk_of: Callable[[int], ChunkView],
    vector_of: Callable[[int], np.ndarray] | None,
) -> list[Hit]:
    """The ``plan.k`` hits of ``ranked``: by maximal marginal relevance over the chunks' vectors
    (``vector_of``; None: the index holds none) when ``plan.mmr``, else the first ``k``."""
    rows = [r for r, _ in ranked]
    rel = np.array([s for _, s in ranked], dtype=np.float64)
    if plan.mmr and len(rows) > 1 and vector_of is not None:
        vecs = np.stack([vector_of(r) for r in rows])
        order = mmr_select(
            rel, vecs, plan.k, lambda_mult=plan.lam, near_duplicate=plan.near_duplicate
        )
    else:
        order = list(range(min(plan.k, len(rows))))
    hits = []
    for rank, i in enumerate(order, start=1):
        doc_id, chunk_id, text, metadata = chunk_of(rows[i])
        hits.append(
            Hit(
                doc_id=doc_id,
                chunk_id=chunk_id,
                score=float(rel[i]),
                text=text,
                metadata=metadata,
                rank=rank,
                dense_score=candidates.dense_s.get(rows[i]),
                bm25_score=candidates.bm25_s.get(rows[i]),
            )
        )
    return hits

"""``DocumentIndex``: chunks, a FAISS inner-product index on normalised vectors and a BM25 index,
fused by a convex combination of normalised scores (or reciprocal rank, see ``fusion.py``), with
metadata pre-filters and MMR; persisted to a folder.

Its parts: ``dense`` (FAISS index choice, dense top-n over chunks or windows), ``bm25`` (the
lexical side), ``filters`` (metadata pre-filters), ``refresh`` (incremental build and update),
``index_files`` (the folder: manifest, writing, reading; its layout is described there),
``fusion`` and ``mmr`` (combining the two rankings, picking diverse hits).

``load`` reads the folder and embeds nothing; the embedding model loads only when a query has
to be embedded (a BM25-only search never loads it).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from refgate.memory.embeddings import document_embeddings, embeddings_from_spec, embeddings_id
from refgate.retrieval.bm25 import bm25_scores, bm25_top, stemmer
from refgate.retrieval.chunking import MAX_TOKENS, MIN_TOKENS, OVERLAP_TOKENS, Chunk
from refgate.retrieval.dense import dense_score, dense_top, normalise, window_rows
from refgate.retrieval.filters import ChunkFilter
from refgate.retrieval.fusion import (
    COSINE_FLOOR,
    DECISIVE_POWER,
    RRF_K,
    convex_fuse,
    corpus_homogeneity,
    decisive_weight,
    dense_weight_for,
    rrf_fuse,
)
from refgate.retrieval.index_files import (
    DenseUnit,
    DocumentIndexError,
    IndexManifest,
    StoredIndex,
    dense_unit,
    new_manifest,
    read_files,
    read_manifest,
    write_files,
)
from refgate.retrieval.mmr import DEFAULT_LAMBDA, mmr_select
from refgate.retrieval.refresh import Progress, UpdateResult, refresh
from refgate.retrieval.windows import WINDOW_TOKENS

if TYPE_CHECKING:
    import faiss
    from bm25s import BM25

    from refgate.config import Settings

SearchMode = Literal["hybrid", "dense", "bm25"]
FusionMethod = Literal["convex", "rrf"]

#: How the dense side represents a chunk (see ``windows.py``): "window" = one vector per window,
#: a chunk scored by its best window; "chunk" = one vector, the mean of its windows.
DENSE_UNIT: DenseUnit = "window"

#: Candidates taken from each of the dense and BM25 lists before fusion (at least; more when
#: ``fetch_k`` asks for more). Fusing deeper lists lets a chunk ranked modestly by both methods
#: surface; it costs one more FAISS / BM25 top-n, not another scan.
CANDIDATES = 100
#: Chunks whose vectors estimate the corpus's homogeneity (all of them in a smaller index).
HOMOGENEITY_SAMPLE = 4096


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


class DocumentIndex:
    """A persisted hybrid (FAISS + BM25) index over document chunks.

    Build with ``DocumentIndex.build(documents, path)``, reopen with ``DocumentIndex.load(path)``,
    refresh with ``update(documents)`` (the full current set: new and edited documents are
    re-chunked, only chunks with new content are embedded, removed documents leave the index).
    """

    def __init__(
        self,
        path: Path,
        chunks: list[Chunk],
        index: faiss.Index | None,
        bm25: BM25 | None,
        embeddings: Embeddings,
        manifest: IndexManifest,
    ) -> None:
        self.path = Path(path)
        self.chunks = chunks
        self.faiss_index = index
        self.bm25 = bm25
        self.embeddings = embeddings
        self.manifest = manifest
        self.lambda_mult = DEFAULT_LAMBDA
        self._by_id = {c.chunk_id: i for i, c in enumerate(chunks)}
        self._filter = ChunkFilter(chunks)
        self._stem = stemmer() if manifest.get("bm25", {}).get("stemmer") else None
        self._tokenizer: str | None = manifest.get("bm25", {}).get("tokenizer")
        #: What the last build / update did (None after ``load``).
        self.last_result: UpdateResult | None = None
        #: Window mode: windows per chunk, first window row of each chunk, window -> chunk row,
        #: and the chunk vectors (mean of windows) for MMR.
        self.window_counts: np.ndarray | None = None
        self.chunk_vectors: np.ndarray | None = None
        self.cache_path: Path | None = None
        #: Window mode: the content hashes of each chunk's windows (the FAISS rows, in order).
        self.window_hashes: list[list[str]] | None = None
        self._homogeneity: float | None = None
        self._set_windows(None)

    @property
    def dense_unit(self) -> DenseUnit:
        return dense_unit(self.manifest)

    def _set_windows(self, counts: np.ndarray | None) -> None:
        self.window_counts = counts
        self._first_window: np.ndarray | None
        self._window_chunk: np.ndarray | None
        self._first_window, self._window_chunk = window_rows(counts)

    # ------------------------------------------------------------------ construction

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        path: Path | str,
        *,
        embeddings: Embeddings | None = None,
        progress: Progress | None = None,
        min_tokens: int = MIN_TOKENS,
        max_tokens: int = MAX_TOKENS,
        overlap_tokens: int = OVERLAP_TOKENS,
        dense: DenseUnit | None = None,
        window_tokens: int = WINDOW_TOKENS,
        cache_path: Path | str | None = None,
    ) -> DocumentIndex:
        """Chunk, embed (reusing the cache beside ``path``, or at ``cache_path``) and index
        ``documents`` at ``path``; ``dense`` chooses one vector per chunk or per window."""
        path = Path(path)
        dense = dense or DENSE_UNIT
        if dense not in ("chunk", "window"):
            raise ValueError(f"dense must be chunk or window, not {dense!r}")
        docs = list(documents)
        emb = embeddings if embeddings is not None else document_embeddings()
        manifest = new_manifest(
            emb,
            min_tokens=min_tokens,
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
            dense=dense,
            window_tokens=window_tokens,
        )
        empty = cls(path, [], None, None, emb, manifest)
        empty.cache_path = Path(cache_path) if cache_path is not None else None
        empty._refresh(docs, progress=progress, existing=False)
        return empty

    @classmethod
    def load(
        cls,
        path: Path | str,
        *,
        embeddings: Embeddings | None = None,
        settings: Settings | None = None,
    ) -> DocumentIndex:
        """Open a persisted index. Nothing is embedded; the query embedder loads lazily."""
        path = Path(path)
        manifest = read_manifest(path)
        if embeddings is None:
            try:
                emb = embeddings_from_spec(manifest["embeddings"], settings)
            except Exception as exc:
                raise DocumentIndexError(
                    f"{path}: cannot rebuild the embedder {manifest['embeddings']!r} ({exc}); "
                    "pass embeddings= to DocumentIndex.load"
                ) from exc
        else:
            emb = embeddings
        if embeddings is not None and embeddings_id(embeddings) != manifest["embeddings_id"]:
            raise DocumentIndexError(
                f"{path}: built with embeddings {manifest['embeddings_id']}, "
                f"not {embeddings_id(embeddings)}"
            )
        stored = read_files(path, manifest)
        loaded = cls(path, stored.chunks, stored.faiss_index, stored.bm25, emb, manifest)
        if stored.window_counts is not None:
            loaded._set_windows(stored.window_counts)
            loaded.chunk_vectors = stored.chunk_vectors
            loaded.window_hashes = stored.window_hashes
        return loaded

    def update(
        self, documents: Iterable[Document], *, progress: Progress | None = None
    ) -> UpdateResult:
        """Bring the index to exactly ``documents``; returns chunks embedded vs reused."""
        return self._refresh(list(documents), progress=progress, existing=True)

    def _refresh(
        self, docs: list[Document], *, progress: Progress | None, existing: bool
    ) -> UpdateResult:
        t0 = time.perf_counter()
        say = progress or (lambda stage, done, total: None)
        new = refresh(self, docs, say=say, existing=existing)
        if new.dimension is not None:
            self.manifest["dimension"] = new.dimension
            self.manifest["faiss"] = new.faiss
        stored = new.stored
        self.chunks, self.faiss_index, self.bm25 = stored.chunks, stored.faiss_index, stored.bm25
        self._stem = new.stem
        self._tokenizer = new.tokenizer
        if new.tokenizer:
            self.manifest["bm25"]["tokenizer"] = new.tokenizer
        else:
            self.manifest["bm25"].pop("tokenizer", None)
        self._set_windows(stored.window_counts)
        self.chunk_vectors = stored.chunk_vectors
        self.window_hashes = stored.window_hashes
        self._homogeneity = None
        self._by_id = {c.chunk_id: i for i, c in enumerate(self.chunks)}
        self._filter = ChunkFilter(self.chunks)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.manifest.setdefault("built_at", now)
        self.manifest["updated_at"] = now
        self.manifest["documents"] = new.documents
        self.manifest["chunk_count"] = len(self.chunks)
        self._save()
        say("index", 1, 1)
        self.last_result = replace(new.result, seconds=time.perf_counter() - t0)
        return self.last_result

    def _save(self) -> None:
        stored = StoredIndex(
            self.chunks,
            self.faiss_index,
            self.bm25,
            self.window_counts,
            self.chunk_vectors,
            self.window_hashes,
        )
        write_files(self.path, stored, self.manifest)

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def doc_ids(self) -> list[str]:
        return list(self.manifest.get("documents", {}))

    @property
    def homogeneity(self) -> float | None:
        """The mean cosine between two chunks' vectors (``fusion.corpus_homogeneity``; over
        ``HOMOGENEITY_SAMPLE`` evenly spaced chunks in a larger index), which sets the base dense
        weight of hybrid search; None without vectors. Computed once per build, update or load."""
        if self._homogeneity is None and self.faiss_index is not None and len(self.chunks) > 1:
            n = len(self.chunks)
            rows = np.unique(np.linspace(0, n - 1, min(n, HOMOGENEITY_SAMPLE)).astype(np.int64))
            if self.chunk_vectors is not None:
                vecs = self.chunk_vectors[rows]
            else:
                vecs = np.stack([self.chunk_vector(int(r)) for r in rows])
            self._homogeneity = corpus_homogeneity(vecs)
        return self._homogeneity

    def chunk_vector(self, row: int) -> np.ndarray:
        """The unit vector of chunk ``row`` (the mean of its windows in window mode)."""
        if self.chunk_vectors is not None:
            return self.chunk_vectors[row]
        if self.faiss_index is None:
            raise DocumentIndexError(f"{self.path}: the index holds no vectors")
        return np.asarray(self.faiss_index.reconstruct(int(row)))

    def filter_mask(self, filters: Mapping[str, object] | None) -> np.ndarray | None:
        """Boolean mask of chunks passing ``filters`` (None = no filter).

        Keys: ``doc_id`` (a unit's id, or a file's ``file_id`` for all its pages), ``entity``
        (a value or a list of values), ``company`` (a DART filing's corp_code, stock code or
        company name; a value or a list), ``date_from`` / ``date_to``
        (ISO dates, inclusive; ``date`` may also be ``{"from": ..., "to": ...}`` or a pair),
        ``period`` (a filing's report period: ``"2023"``, ``"2023Q3"`` or ``{"year", "quarter"}``),
        ``superseded`` (True: keep the sections an amendment supersedes, see ``filters.py``);
        any other key is an equality test on the chunk metadata.
        """
        return self._filter.mask(filters)

    def embed_query(self, query: str) -> np.ndarray:
        return normalise(np.asarray(self.embeddings.embed_query(query), dtype=np.float32))

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        filters: Mapping[str, object] | None = None,
        mmr: bool = True,
        mode: SearchMode = "hybrid",
        lambda_mult: float | None = None,
        fetch_k: int | None = None,
        fusion: FusionMethod = "convex",
        dense_weight: float | None = None,
        decisive: float = DECISIVE_POWER,
        near_duplicate: float | None = None,
        dense_floor: float = COSINE_FLOOR,
        question_period: bool = True,
        as_of: date | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``.

        Filters are applied before ranking. ``mode="hybrid"`` takes the ``max(fetch_k, 100)`` best
        chunks of FAISS and of BM25, scores every candidate by both and fuses them
        (``fusion="convex"``: ``dense_weight`` (default ``fusion.dense_weight_for``: 0.85 in a
        varied corpus down to 0.6 in a uniform one, by ``homogeneity``, rising to 0.95 for
        queries of 15 to 30 words, then moved toward the more decisive list by
        ``fusion.decisive_weight`` with power ``decisive``, 0 = not moved) times the cosine
        normalised by ``dense_floor`` (default its theoretical minimum, -1) and the query's
        maximum plus the rest times BM25 / its maximum;
        ``fusion="rrf"``: reciprocal rank); ``score`` = the fused score. ``"dense"`` / ``"bm25"``
        use one of them (``score`` = cosine / BM25). With ``question_period``, a query naming a
        report period ("2023년 말", "3분기", "작년", counted from ``as_of``, default today) keeps
        the chunks of that period when the chunks carry report periods
        (``ChunkFilter.with_question_period``). A chunk's cosine is its best window's in
        window mode (the default), the cosine of its one vector otherwise. With ``mmr`` the ``k`` hits are picked from
        the ``fetch_k`` (default ``4 * k``) best candidates by maximal marginal relevance
        (``lambda_mult``, default ``DEFAULT_LAMBDA`` = 1.0, relevance order; see ``mmr.py``; relevance = the score min-max scaled over those candidates,
        redundancy = cosine between chunks, or only its excess over ``near_duplicate``).
        """
        if k <= 0 or not self.chunks or not query.strip():
            return []
        if mode not in ("hybrid", "dense", "bm25"):
            raise ValueError(f"mode must be hybrid, dense or bm25, not {mode!r}")
        if fusion not in ("convex", "rrf"):
            raise ValueError(f"fusion must be convex or rrf, not {fusion!r}")
        lam = self.lambda_mult if lambda_mult is None else lambda_mult
        alpha = dense_weight
        fetch = max(fetch_k or 4 * k, k)
        if question_period:
            filters = self._filter.with_question_period(query, filters, as_of)
        mask = self.filter_mask(filters)
        if mask is not None and not mask.any():
            return []
        pool = max(fetch, CANDIDATES) if mode == "hybrid" else fetch
        dense: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []
        qvec = None
        bm25_all = None
        if mode in ("hybrid", "dense"):
            qvec = self.embed_query(query)
            dense = dense_top(
                self.faiss_index, qvec, pool, mask, len(self.chunks), self._window_chunk
            )
        if mode in ("hybrid", "bm25"):
            bm25_all = bm25_scores(self.bm25, query, self._stem, mask, self._tokenizer)
            lexical = bm25_top(bm25_all, pool)
        dense_s = dict(dense)
        bm25_s = dict(lexical)
        if alpha is None and mode == "hybrid" and fusion == "convex":
            alpha = dense_weight_for(query, self.homogeneity)
            if bm25_all is not None and mask is not None:
                reachable = bm25_all[mask]
            else:
                reachable = bm25_all if bm25_all is not None else np.zeros(0)
            alpha = decisive_weight(alpha, [s for _, s in dense], reachable, power=decisive)
        if mode == "hybrid" and fusion == "rrf":
            ranked = rrf_fuse([[r for r, _ in dense], [r for r, _ in lexical]], k=RRF_K)[:fetch]
        elif mode == "hybrid":
            rows = list(dict.fromkeys([r for r, _ in dense] + [r for r, _ in lexical]))
            # score every candidate by both methods: the cosine of BM25-only candidates and the
            # BM25 score (possibly 0) of dense-only ones
            for r in rows:
                if r not in dense_s and qvec is not None and self.faiss_index is not None:
                    dense_s[r] = dense_score(
                        self.faiss_index, r, qvec, self._first_window, self.window_counts
                    )
                if r not in bm25_s:
                    bm25_s[r] = float(bm25_all[r]) if bm25_all is not None else 0.0
            ranked = convex_fuse(
                rows,
                [dense_s[r] for r in rows],
                [bm25_s[r] for r in rows],
                alpha=alpha if alpha is not None else dense_weight_for(query, self.homogeneity),
                dense_floor=dense_floor,
            )[:fetch]
        elif mode == "dense":
            ranked = dense
        else:
            ranked = lexical
        if not ranked:
            return []
        rows = [r for r, _ in ranked]
        rel = np.array([s for _, s in ranked], dtype=np.float64)
        if mmr and len(rows) > 1 and self.faiss_index is not None:
            vecs = np.stack([self.chunk_vector(r) for r in rows])
            order = mmr_select(rel, vecs, k, lambda_mult=lam, near_duplicate=near_duplicate)
        else:
            order = list(range(min(k, len(rows))))
        hits = []
        for rank, i in enumerate(order, start=1):
            c = self.chunks[rows[i]]
            hits.append(
                Hit(
                    doc_id=c.doc_id,
                    chunk_id=c.chunk_id,
                    score=float(rel[i]),
                    text=c.text,
                    metadata=dict(c.metadata),
                    rank=rank,
                    dense_score=dense_s.get(rows[i]),
                    bm25_score=bm25_s.get(rows[i]),
                )
            )
        return hits


class SearchIndex(Protocol):
    """What a reader needs of a document index, whichever backend holds it: a FAISS folder
    (``DocumentIndex``) or a PostgreSQL database with pgvector (``pgvector.index.PgIndex``).
    ``refgate.retrieval.backend.open_search_index`` opens the one a workspace configures."""

    @property
    def manifest(self) -> Mapping[str, Any]: ...

    @property
    def doc_ids(self) -> list[str]: ...

    def __len__(self) -> int: ...

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        filters: Mapping[str, object] | None = None,
        mmr: bool = True,
        mode: SearchMode = "hybrid",
        lambda_mult: float | None = None,
        fetch_k: int | None = None,
        fusion: FusionMethod = "convex",
        dense_weight: float | None = None,
        decisive: float = DECISIVE_POWER,
        near_duplicate: float | None = None,
        dense_floor: float = COSINE_FLOOR,
    ) -> list[Hit]: ...

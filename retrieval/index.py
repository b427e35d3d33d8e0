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
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from typing_extensions import Unpack

from refgate.memory.embeddings import document_embeddings, embeddings_id
from refgate.retrieval.bm25 import bm25_scores, bm25_top, stemmer
from refgate.retrieval.chunking import MAX_TOKENS, MIN_TOKENS, OVERLAP_TOKENS, Chunk
from refgate.retrieval.dense import dense_score, dense_top, normalise, window_rows
from refgate.retrieval.embedder_choice import reads_corpus
from refgate.retrieval.filters import ChunkFilter
from refgate.retrieval.fusion import corpus_homogeneity
from refgate.retrieval.index_files import (
    DenseUnit,
    DocumentIndexError,
    IndexManifest,
    StoredIndex,
    dense_unit,
    new_manifest,
    read_files,
    read_manifest,
    stored_embedder,
    write_files,
)
from refgate.retrieval.mmr import DEFAULT_LAMBDA
from refgate.retrieval.ranking import (
    Candidates,
    ChunkView,
    Hit,
    IndexSearchOptions,
    Ranked,
    SearchOptions,
    SearchPlan,
    pick_hits,
)
from refgate.retrieval.refresh import Progress, UpdateResult, refresh
from refgate.retrieval.windows import WINDOW_TOKENS

if TYPE_CHECKING:
    import faiss
    from bm25s import BM25

    from refgate.config import Settings

#: How the dense side represents a chunk (see ``windows.py``): "window" = one vector per window,
#: a chunk scored by its best window; "chunk" = one vector, the mean of its windows.
DENSE_UNIT: DenseUnit = "window"


#: Chunks whose vectors estimate the corpus's homogeneity (all of them in a smaller index).
HOMOGENEITY_SAMPLE = 4096


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
        emb = (
            embeddings
            if embeddings is not None
            else stored_embedder(manifest["embeddings"], settings, index=str(path))
        )
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

    def search(self, query: str, **options: Unpack[IndexSearchOptions]) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (``SearchOptions``; defaults in brackets).

        Filters are applied before ranking. ``mode="hybrid"`` takes the ``max(fetch_k, 100)`` best
        chunks of FAISS and of BM25, scores every candidate by both and fuses them
        (``fusion="convex"``: ``dense_weight`` (default ``fusion.dense_weight_for``: 0.85 in a
        varied corpus down to 0.6 in a uniform one, by ``homogeneity``, rising to 0.95 for
        queries of 15 to 30 words, then moved toward the more decisive list by
        ``fusion.decisive_weight`` with power ``decisive``, 0 = not moved) times the cosine
        normalised by ``dense_floor`` (default its theoretical minimum, -1) and the query's
        maximum plus the rest times BM25 / its maximum;
        ``fusion="rrf"``: reciprocal rank); ``score`` = the fused score. ``"dense"`` / ``"bm25"``
        use one of them (``score`` = cosine / BM25). With ``question_period`` [True], a query
        naming a report period ("2023년 말", "3분기", "작년", counted from ``as_of``, default
        today) keeps the chunks of that period when the chunks carry report periods
        (``ChunkFilter.with_question_period``). A chunk's cosine is its best window's in window
        mode (the default), the cosine of its one vector otherwise. With ``mmr`` [True] the ``k``
        [10] hits are picked from the ``fetch_k`` (default ``4 * k``) best candidates by maximal
        marginal relevance (``lambda_mult``, default ``DEFAULT_LAMBDA`` = 1.0, relevance order;
        see ``mmr.py``; relevance = the score min-max scaled over those candidates, redundancy =
        cosine between chunks, or only its excess over ``near_duplicate``).
        """
        question_period = options.pop("question_period", True)
        as_of = options.pop("as_of", None)
        plan = SearchPlan.of(options, self.lambda_mult)
        if plan.k <= 0 or not self.chunks or not query.strip():
            return []
        plan.check()
        filters = plan.filters
        if question_period:
            filters = self._filter.with_question_period(query, filters, as_of)
        mask = self.filter_mask(filters)
        if mask is not None and not mask.any():
            return []
        return self._ranked_hits(query, plan, mask)

    def _ranked_hits(self, query: str, plan: SearchPlan, mask: np.ndarray | None) -> list[Hit]:
        """The hits of ``query`` among the chunks ``mask`` lets through (None: all)."""
        lists = _QueryLists(self, query, plan, mask)
        candidates = Candidates(lists.dense, lists.lexical)
        alpha = plan.alpha
        if plan.weighs_lists:
            alpha = plan.dense_weight(
                query,
                self.homogeneity,
                lists.dense,
                lists.reachable_bm25(),
                reads_corpus=reads_corpus(self.manifest["embeddings_id"], self._tokenizer),
            )
        ranked = candidates.rank(plan, alpha, lists)
        if not ranked:
            return []
        vector_of = self.chunk_vector if self.faiss_index is not None else None
        return pick_hits(plan, ranked, candidates, self._chunk_view, vector_of)

    def _chunk_view(self, row: int) -> ChunkView:
        c = self.chunks[row]
        return c.doc_id, c.chunk_id, c.text, dict(c.metadata)


class _QueryLists:
    """One query's dense and BM25 candidate lists over a ``DocumentIndex`` (the ``plan.pool``
    best of each its mode uses), and the scores of the candidates only one list found."""

    def __init__(
        self, index: DocumentIndex, query: str, plan: SearchPlan, mask: np.ndarray | None
    ) -> None:
        self.index = index
        self.mask = mask
        self.dense: Ranked = []
        self.lexical: Ranked = []
        self.qvec: np.ndarray | None = None
        self.bm25_all: np.ndarray | None = None
        if plan.mode in ("hybrid", "dense"):
            self.qvec = index.embed_query(query)
            self.dense = dense_top(
                index.faiss_index, self.qvec, plan.pool, mask, len(index.chunks),
                index._window_chunk,
            )  # fmt: skip
        if plan.mode in ("hybrid", "bm25"):
            self.bm25_all = bm25_scores(index.bm25, query, index._stem, mask, index._tokenizer)
            self.lexical = bm25_top(self.bm25_all, plan.pool)

    def reachable_bm25(self) -> np.ndarray:
        """The BM25 scores of every chunk the filters let through."""
        if self.bm25_all is None:
            return np.zeros(0)
        return self.bm25_all[self.mask] if self.mask is not None else self.bm25_all

    def dense_of(self, rows: list[int]) -> dict[int, float]:
        index, qvec = self.index, self.qvec
        if qvec is None or index.faiss_index is None:
            return {}
        return {
            r: dense_score(index.faiss_index, r, qvec, index._first_window, index.window_counts)
            for r in rows
        }

    def bm25_of(self, rows: list[int]) -> dict[int, float]:
        bm25_all = self.bm25_all
        return {r: float(bm25_all[r]) if bm25_all is not None else 0.0 for r in rows}


class SearchIndex(Protocol):
    """What a reader needs of a document index, whichever backend holds it: a FAISS folder
    (``DocumentIndex``) or a PostgreSQL database with pgvector (``pgvector.index.PgIndex``).
    ``refgate.retrieval.backend.open_search_index`` opens the one a workspace configures."""

    @property
    def manifest(self) -> Mapping[str, Any]: ...

    @property
    def doc_ids(self) -> list[str]: ...

    def __len__(self) -> int: ...

    def search(self, query: str, **options: Unpack[SearchOptions]) -> list[Hit]: ...

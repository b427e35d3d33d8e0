"""``DocumentIndex``: chunks, a FAISS inner-product index on normalised vectors and a BM25 index,
fused by a convex combination of normalised scores (or reciprocal rank, see ``fusion.py``), with
metadata pre-filters and MMR; persisted to a folder.

Folder layout (``path``)::

    manifest.json        format, embedder spec, chunking parameters, document hashes
    chunks.parquet       one row per chunk: ids, text, metadata (JSON)
    vectors.faiss        FAISS inner-product index: row i = chunk i (``dense="chunk"``), or one
                         row per window, chunk by chunk (``dense="window"``; the chunk's
                         window count is its ``windows`` column)
    chunk_vectors.npy    (window mode) one unit vector per chunk, the mean of its windows' (and
                         ``window_hashes`` their content hashes, so updates re-tokenize nothing): MMR's
                         redundancy term
    bm25/                bm25s index (stemmed, English stop words removed)
    embeddings.sqlite    the embeddings cache by content hash (see ``cache.py``)

``load`` reads these files and embeds nothing; the embedding model loads only when a query has
to be embedded (a BM25-only search never loads it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings

from refgate.embeddings import (
    BATCH_SIZE,
    default_embeddings,
    embeddings_from_spec,
    embeddings_id,
    embeddings_spec,
)
from refgate.retrieval.cache import EmbeddingCache
from refgate.retrieval.chunking import (
    ENCODING,
    MAX_TOKENS,
    MIN_TOKENS,
    OVERLAP_TOKENS,
    Chunk,
    chunk_documents,
)
from refgate.retrieval.fusion import (
    RRF_K,
    convex_fuse,
    corpus_homogeneity,
    dense_weight_for,
    rrf_fuse,
)
from refgate.retrieval.mmr import DEFAULT_LAMBDA, mmr_select
from refgate.retrieval.windows import WINDOW_TOKENS, chunk_windows

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHUNKS = "chunks.parquet"
VECTORS = "vectors.faiss"
BM25_DIR = "bm25"
CACHE = "embeddings.sqlite"
CHUNK_VECTORS = "chunk_vectors.npy"

#: ``progress(stage, done, total)``; stages: "chunk", "embed", "index".
Progress = Callable[[str, int, int], None]
SearchMode = Literal["hybrid", "dense", "bm25"]
FusionMethod = Literal["convex", "rrf"]
DenseUnit = Literal["chunk", "window"]

#: How the dense side represents a chunk (see ``windows.py``): "window" = one vector per window,
#: a chunk scored by its best window; "chunk" = one vector, the mean of its windows.
DENSE_UNIT: DenseUnit = "window"

#: Vectors up to which the dense index is exact (``faiss.IndexFlatIP``, a full scan per query:
#: 11-29 ms at 200,000 vectors here); a bigger index is an HNSW graph (``IndexHNSWFlat``, inner
#: product), whose query time grows with log n. The graph is approximate: on the synthetic
#: benchmark vectors its top 10 shared 0.44 (efSearch 128) to 0.67 (512) of the exact top 10, so
#: it is used only where a full scan gets slow. See docs/benchmarks.md ("Document scale").
FLAT_MAX_VECTORS = 250_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 512

#: Candidates taken from each of the dense and BM25 lists before fusion (at least; more when
#: ``fetch_k`` asks for more). Fusing deeper lists lets a chunk ranked modestly by both methods
#: surface; it costs one more FAISS / BM25 top-n, not another scan.
CANDIDATES = 100
#: Chunks whose vectors estimate the corpus's homogeneity (all of them in a smaller index).
HOMOGENEITY_SAMPLE = 4096


def faiss_index_for(mat: np.ndarray) -> Any:
    """The FAISS index for these unit vectors: exact up to ``FLAT_MAX_VECTORS``, HNSW above."""
    # deferred: faiss is heavy to import; paid on first use
    import faiss

    if len(mat) <= FLAT_MAX_VECTORS:
        index = faiss.IndexFlatIP(mat.shape[1])
    else:
        index = faiss.IndexHNSWFlat(mat.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        index.hnsw.efSearch = HNSW_EF_SEARCH
    index.add(mat)
    return index


def faiss_kind(index: Any) -> str:
    return "hnsw" if index is not None and hasattr(index, "hnsw") else "flat"


class DocumentIndexError(RuntimeError):
    """The index folder is missing, incomplete or from another format."""


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


@dataclass(frozen=True)
class UpdateResult:
    """What ``build`` / ``update`` did: chunks embedded now vs reused from the cache or index."""

    embedded: int
    reused: int
    removed: int = 0
    chunks: int = 0
    documents: int = 0
    added_documents: int = 0
    changed_documents: int = 0
    removed_documents: int = 0
    unchanged_documents: int = 0
    seconds: float = 0.0

    @property
    def reuse_rate(self) -> float:
        """Share of the index's chunks whose vectors were reused (the cache hit rate)."""
        total = self.embedded + self.reused
        return self.reused / total if total else 1.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["reuse_rate"] = self.reuse_rate
        return d

    def __getitem__(self, key: str) -> Any:  # dict-style access: result["embedded"]
        return self.to_dict()[key]


def _doc_hash(doc: Any) -> str:
    meta = {k: v for k, v in sorted((doc.metadata or {}).items()) if _jsonable(v)}
    h = hashlib.sha256((doc.page_content or "").encode("utf-8"))
    h.update(json.dumps(meta, sort_keys=True, default=str).encode("utf-8"))
    return h.hexdigest()


def _jsonable(v: Any) -> bool:
    return isinstance(v, str | int | float | bool) or v is None


def _normalise(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim == 1:
        vecs = vecs[None, :]
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vecs / norms, dtype=np.float32)


def _stemmer() -> Any:
    try:
        # deferred: PyStemmer is heavy to import; paid on first use
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english")


#: Words of two or more characters plus numbers and fractions ("0", "1/4", "2.5"), which matter
#: in financial text and which bm25s's default pattern drops.
TOKEN_PATTERN = r"(?u)\d+(?:[./]\d+)*|\b\w\w+\b"


def _bm25_tokens(texts: Sequence[str], stemmer: Any, *, ids: bool) -> Any:
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    return bm25s.tokenize(
        list(texts),
        token_pattern=TOKEN_PATTERN,
        stopwords="en",
        stemmer=stemmer,
        return_ids=ids,
        show_progress=False,
    )


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
        index: Any,
        bm25: Any,
        embeddings: Embeddings,
        manifest: dict[str, Any],
    ) -> None:
        self.path = Path(path)
        self.chunks = chunks
        self.faiss_index = index
        self.bm25 = bm25
        self.embeddings = embeddings
        self.manifest = manifest
        self.lambda_mult = DEFAULT_LAMBDA
        self._by_id = {c.chunk_id: i for i, c in enumerate(chunks)}
        self._filters_cache: dict[str, np.ndarray] = {}
        self._stem = _stemmer() if manifest.get("bm25", {}).get("stemmer") else None
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
        return (self.manifest.get("dense") or {}).get("unit", "chunk")

    def _set_windows(self, counts: np.ndarray | None) -> None:
        self.window_counts = counts
        if counts is None:
            self._first_window = None
            self._window_chunk = None
            return
        self._first_window = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self._window_chunk = np.repeat(np.arange(len(counts), dtype=np.int64), counts)

    # ------------------------------------------------------------------ construction

    @classmethod
    def build(
        cls,
        documents: Iterable[Any],
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
        emb = embeddings if embeddings is not None else default_embeddings()
        manifest = {
            "format": FORMAT_VERSION,
            "embeddings": embeddings_spec(emb),
            "embeddings_id": embeddings_id(emb),
            "chunking": {
                "encoding": ENCODING,
                "min_tokens": min_tokens,
                "max_tokens": max_tokens,
                "overlap_tokens": overlap_tokens,
            },
            "bm25": {
                "stopwords": "en",
                "stemmer": "english" if _stemmer() else None,
                "token_pattern": TOKEN_PATTERN,
            },
            "dense": {"unit": dense, "window_tokens": int(window_tokens)},
            "documents": {},
        }
        empty = cls(path, [], None, None, emb, manifest)
        empty.cache_path = Path(cache_path) if cache_path is not None else None
        empty._refresh(list(documents), progress=progress, existing=False)
        return empty

    @classmethod
    def load(
        cls,
        path: Path | str,
        *,
        embeddings: Embeddings | None = None,
        settings: Any = None,
    ) -> DocumentIndex:
        """Open a persisted index. Nothing is embedded; the query embedder loads lazily."""
        # deferred: faiss is heavy to import; paid on first use
        import faiss
        import pyarrow.parquet as pq

        path = Path(path)
        mpath = path / MANIFEST
        if not mpath.is_file():
            raise DocumentIndexError(f"no document index at {path} (missing {MANIFEST})")
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION:
            raise DocumentIndexError(
                f"{mpath}: index format {manifest.get('format')!r}, expected {FORMAT_VERSION}; "
                "rebuild it"
            )
        if manifest.get("bm25", {}).get("stemmer") and _stemmer() is None:
            raise DocumentIndexError(
                f"{path}: the index was built with PyStemmer; install PyStemmer"
            )
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
        table = pq.read_table(path / CHUNKS).to_pydict()
        chunks = [
            Chunk(cid, did, text, int(m["start"]), int(m["end"]), m)
            for cid, did, text, m in zip(
                table["chunk_id"],
                table["doc_id"],
                table["text"],
                (json.loads(s) for s in table["metadata"]),
                strict=True,
            )
        ]
        index = faiss.read_index(str(path / VECTORS)) if chunks else None
        bm25 = None
        if chunks:
            # deferred: bm25s is heavy to import; paid on first use
            import bm25s

            bm25 = bm25s.BM25.load(str(path / BM25_DIR), show_progress=False)
        loaded = cls(path, chunks, index, bm25, emb, manifest)
        if loaded.dense_unit == "window" and chunks:
            loaded._set_windows(np.asarray(table["windows"], dtype=np.int64))
            loaded.chunk_vectors = np.load(path / CHUNK_VECTORS)
            if "window_hashes" in table:
                loaded.window_hashes = [list(h) for h in table["window_hashes"]]
        return loaded

    def update(self, documents: Iterable[Any], *, progress: Progress | None = None) -> UpdateResult:
        """Bring the index to exactly ``documents``; returns chunks embedded vs reused."""
        return self._refresh(list(documents), progress=progress, existing=True)

    def _refresh(
        self, docs: list[Any], *, progress: Progress | None, existing: bool
    ) -> UpdateResult:

        t0 = time.perf_counter()
        say = progress or (lambda stage, done, total: None)
        cfg = self.manifest["chunking"]
        old_hashes: dict[str, str] = dict(self.manifest.get("documents", {}))
        old_by_doc: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            old_by_doc.setdefault(c.doc_id, []).append(c)

        # 1. chunk new and changed documents; keep unchanged documents' chunks
        new_hashes: dict[str, str] = {}
        chunks: list[Chunk] = []
        added = changed = unchanged = 0
        say("chunk", 0, len(docs))
        for n, doc in enumerate(docs, start=1):
            doc_id = str((doc.metadata or {}).get("doc_id") or "")
            if not doc_id:
                raise ValueError("every document needs metadata['doc_id']")
            if doc_id in new_hashes:
                raise ValueError(f"duplicate doc_id {doc_id!r}")
            h = _doc_hash(doc)
            new_hashes[doc_id] = h
            if existing and old_hashes.get(doc_id) == h and doc_id in old_by_doc:
                chunks.extend(old_by_doc[doc_id])
                unchanged += 1
            else:
                chunks.extend(
                    chunk_documents(
                        [doc],
                        min_tokens=cfg["min_tokens"],
                        max_tokens=cfg["max_tokens"],
                        overlap_tokens=cfg["overlap_tokens"],
                    )
                )
                if doc_id in old_hashes:
                    changed += 1
                else:
                    added += 1
            say("chunk", n, len(docs))
        removed_docs = len(set(old_hashes) - set(new_hashes))

        # 2. vectors: from the current index, else the cache, else embed (batches of 100); one
        #    per chunk, or one per window of each chunk (window mode)
        model_id = self.manifest["embeddings_id"]
        windowed = self.dense_unit == "window"
        size = int((self.manifest.get("dense") or {}).get("window_tokens", WINDOW_TOKENS))
        if windowed:
            known: dict[str, list[str]] = {}
            if existing and self.window_hashes is not None:
                known = {
                    c.chunk_id + c.content_hash: hs
                    for c, hs in zip(self.chunks, self.window_hashes, strict=False)
                }
            pieces = [
                [(h, "") for h in known[c.chunk_id + c.content_hash]]
                if c.chunk_id + c.content_hash in known
                else chunk_windows(self.embeddings, c.text, size)
                for c in chunks
            ]
        else:
            pieces = [[(c.content_hash, c.text)] for c in chunks]
        hashes = [h for ws in pieces for h, _ in ws]
        have: dict[str, np.ndarray] = {}
        if existing and self.chunks and self.faiss_index is not None:
            current = self.faiss_index.reconstruct_n(0, self.faiss_index.ntotal)
            wanted = set(hashes)
            for h, vec in zip(self._row_hashes(), current, strict=True):
                if h in wanted:
                    have[h] = vec
        self.path.mkdir(parents=True, exist_ok=True)
        with EmbeddingCache(self.cache_path or self.path / CACHE) as cache:
            missing_from_index = [h for h in dict.fromkeys(hashes) if h not in have]
            have.update(cache.get_many(model_id, missing_from_index))
            todo: dict[str, str] = {}
            for n, ws in enumerate(pieces):
                if windowed and any(h not in have and not t for h, t in ws):
                    ws = pieces[n] = chunk_windows(self.embeddings, chunks[n].text, size)
                for h, text in ws:
                    if h not in have:
                        todo.setdefault(h, text)
            items = list(todo.items())
            say("embed", 0, len(items))
            for i in range(0, len(items), BATCH_SIZE):
                batch = items[i : i + BATCH_SIZE]
                vecs = _normalise(
                    np.asarray(self.embeddings.embed_documents([t for _, t in batch]))
                )
                fresh = [(h, v) for (h, _), v in zip(batch, vecs, strict=True)]
                cache.put_many(model_id, fresh)
                have.update(fresh)
                say("embed", min(i + BATCH_SIZE, len(items)), len(items))
            if self.cache_path is None:
                cache.prune(model_id, hashes)
        embedded_set = set(todo)
        embedded = sum(1 for ws in pieces if any(h in embedded_set for h, _ in ws))
        reused = len(chunks) - embedded

        # 3. indexes
        say("index", 0, 1)
        if chunks:
            dims = {int(have[h].shape[0]) for h in hashes}
            if len(dims) != 1:
                raise DocumentIndexError(
                    f"vectors of different sizes {sorted(dims)} for one index: the embedder "
                    f"{model_id!r} is not identified uniquely; give it an embeddings_id"
                )
            mat = _normalise(np.stack([have[h] for h in hashes]))
            index = faiss_index_for(mat)
            self.manifest["dimension"] = int(mat.shape[1])
            self.manifest["faiss"] = faiss_kind(index)
            bm25 = self._build_bm25([c.text for c in chunks])
            if windowed:
                counts = np.array([len(ws) for ws in pieces], dtype=np.int64)
                self._set_windows(counts)
                self.window_hashes = [[h for h, _ in ws] for ws in pieces]
                sums = np.zeros((len(chunks), mat.shape[1]), dtype=np.float32)
                np.add.at(sums, self._window_chunk, mat)
                self.chunk_vectors = _normalise(sums)
            else:
                self._set_windows(None)
                self.chunk_vectors = None
                self.window_hashes = None
        else:
            index, bm25 = None, None
            self._set_windows(None)
            self.chunk_vectors = None
            self.window_hashes = None
        old_ids = {c.chunk_id for c in self.chunks}
        removed_chunks = len(old_ids - {c.chunk_id for c in chunks}) if existing else 0
        self.chunks, self.faiss_index, self.bm25 = chunks, index, bm25
        self._homogeneity = None
        self._by_id = {c.chunk_id: i for i, c in enumerate(chunks)}
        self._filters_cache = {}
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.manifest.setdefault("built_at", now)
        self.manifest["updated_at"] = now
        self.manifest["documents"] = new_hashes
        self.manifest["chunk_count"] = len(chunks)
        self._save()
        say("index", 1, 1)
        self.last_result = UpdateResult(
            embedded=embedded,
            reused=reused,
            removed=removed_chunks,
            chunks=len(chunks),
            documents=len(new_hashes),
            added_documents=added,
            changed_documents=changed,
            removed_documents=removed_docs,
            unchanged_documents=unchanged,
            seconds=time.perf_counter() - t0,
        )
        return self.last_result

    def _row_hashes(self) -> list[str]:
        """The content hash of each FAISS row (a chunk's, or each of its windows')."""
        if self.dense_unit != "window":
            return [c.content_hash for c in self.chunks]
        if self.window_hashes is not None and len(self.window_hashes) == len(self.chunks):
            return [h for hs in self.window_hashes for h in hs]
        size = int((self.manifest.get("dense") or {}).get("window_tokens", WINDOW_TOKENS))
        rows = [h for c in self.chunks for h, _ in chunk_windows(self.embeddings, c.text, size)]
        if self.faiss_index is not None and len(rows) != self.faiss_index.ntotal:
            return [""] * self.faiss_index.ntotal  # windows changed (embedder): reuse nothing
        return rows

    @property
    def homogeneity(self) -> float | None:
        """The mean cosine between two chunks' vectors (``fusion.corpus_homogeneity``; over
        ``HOMOGENEITY_SAMPLE`` evenly spaced chunks in a larger index), which sets the base dense
        weight of hybrid search; None without vectors. Computed once per build, update or load."""
        if self._homogeneity is None and self.faiss_index is not None and len(self.chunks) > 1:
            n = len(self.chunks)
            rows = np.unique(np.linspace(0, n - 1, min(n, HOMOGENEITY_SAMPLE)).astype(np.int64))
            vecs = np.stack([self.chunk_vector(int(r)) for r in rows])
            self._homogeneity = corpus_homogeneity(vecs)
        return self._homogeneity

    def chunk_vector(self, row: int) -> np.ndarray:
        """The unit vector of chunk ``row`` (the mean of its windows in window mode)."""
        if self.chunk_vectors is not None:
            return self.chunk_vectors[row]
        return self.faiss_index.reconstruct(int(row))

    def _dense_of(self, row: int, qvec: np.ndarray) -> float:
        """Cosine of chunk ``row`` with the query: its best window's in window mode."""
        if self._first_window is None:
            return float(self.faiss_index.reconstruct(int(row)) @ qvec[0])
        first = int(self._first_window[row])
        vecs = self.faiss_index.reconstruct_n(first, int(self.window_counts[row]))
        return float(np.max(vecs @ qvec[0]))

    def _build_bm25(self, texts: Sequence[str]) -> Any:
        # deferred: bm25s is heavy to import; paid on first use
        import bm25s

        stem = _stemmer() if self.manifest["bm25"].get("stemmer") else None
        self._stem = stem
        model = bm25s.BM25()
        model.index(_bm25_tokens(texts, stem, ids=True), show_progress=False)
        return model

    def _save(self) -> None:
        # deferred: faiss is heavy to import; paid on first use
        import faiss
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = self.path
        p.mkdir(parents=True, exist_ok=True)
        table = pa.table(
            {
                "chunk_id": [c.chunk_id for c in self.chunks],
                "doc_id": [c.doc_id for c in self.chunks],
                "text": [c.text for c in self.chunks],
                "metadata": [json.dumps(c.metadata, ensure_ascii=False) for c in self.chunks],
                "windows": (
                    [int(n) for n in self.window_counts]
                    if self.window_counts is not None
                    else [1] * len(self.chunks)
                ),
                "window_hashes": (
                    self.window_hashes
                    if self.window_hashes is not None
                    else [[c.content_hash] for c in self.chunks]
                ),
            },
            schema=pa.schema(
                [
                    ("chunk_id", pa.string()),
                    ("doc_id", pa.string()),
                    ("text", pa.string()),
                    ("metadata", pa.string()),
                    ("windows", pa.int64()),
                    ("window_hashes", pa.list_(pa.string())),
                ]
            ),
        )
        pq.write_table(table, p / (CHUNKS + ".tmp"))
        os.replace(p / (CHUNKS + ".tmp"), p / CHUNKS)
        if self.chunk_vectors is not None:
            with open(p / (CHUNK_VECTORS + ".tmp"), "wb") as fh:
                np.save(fh, self.chunk_vectors)
            os.replace(p / (CHUNK_VECTORS + ".tmp"), p / CHUNK_VECTORS)
        else:
            (p / CHUNK_VECTORS).unlink(missing_ok=True)
        if self.faiss_index is not None:
            faiss.write_index(self.faiss_index, str(p / (VECTORS + ".tmp")))
            os.replace(p / (VECTORS + ".tmp"), p / VECTORS)
            tmp = p / (BM25_DIR + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            self.bm25.save(str(tmp), show_progress=False)
            shutil.rmtree(p / BM25_DIR, ignore_errors=True)
            os.replace(tmp, p / BM25_DIR)
        else:
            (p / VECTORS).unlink(missing_ok=True)
            shutil.rmtree(p / BM25_DIR, ignore_errors=True)
        (p / (MANIFEST + ".tmp")).write_text(json.dumps(self.manifest, indent=1), encoding="utf-8")
        os.replace(p / (MANIFEST + ".tmp"), p / MANIFEST)

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def doc_ids(self) -> list[str]:
        return list(self.manifest.get("documents", {}))

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        i = self._by_id.get(chunk_id)
        return None if i is None else self.chunks[i]

    def _column(self, key: str) -> np.ndarray:
        col = self._filters_cache.get(key)
        if col is None:
            col = np.array(
                [
                    "" if c.metadata.get(key) is None else str(c.metadata.get(key))
                    for c in self.chunks
                ],
                dtype=object,
            )
            self._filters_cache[key] = col
        return col

    def filter_mask(self, filters: Mapping[str, Any] | None) -> np.ndarray | None:
        """Boolean mask of chunks passing ``filters`` (None = no filter).

        Keys: ``doc_id`` (a unit's id, or a file's ``file_id`` for all its pages), ``entity``
        (a value or a list of values), ``date_from`` / ``date_to``
        (ISO dates, inclusive; ``date`` may also be ``{"from": ..., "to": ...}`` or a pair);
        any other key is an equality test on the chunk metadata.
        """
        if not filters:
            return None
        mask = np.ones(len(self.chunks), dtype=bool)
        date_from = filters.get("date_from")
        date_to = filters.get("date_to")
        for key, value in filters.items():
            if value is None or key in ("date_from", "date_to"):
                continue
            if key == "date" and isinstance(value, Mapping):
                date_from = value.get("from", date_from)
                date_to = value.get("to", date_to)
                continue
            if key == "date" and isinstance(value, list | tuple) and len(value) == 2:
                date_from, date_to = value
                continue
            allowed = (
                {str(v) for v in value} if isinstance(value, list | tuple | set) else {str(value)}
            )
            hit = np.isin(self._column(key), list(allowed))
            if key == "doc_id":  # a file's id selects all its pages / sheets
                hit |= np.isin(self._column("file_id"), list(allowed))
            mask &= hit
        if date_from or date_to:
            dates = self._column("date")
            ok = dates != ""
            if date_from:
                ok &= dates >= str(date_from)[:10]
            if date_to:
                ok &= dates <= str(date_to)[:10]
            mask &= ok.astype(bool)
        return mask

    def _dense(self, qvec: np.ndarray, n: int, mask: np.ndarray | None) -> list[tuple[int, float]]:
        # deferred: faiss is heavy to import; paid on first use
        import faiss

        if self.faiss_index is None or n <= 0:
            return []
        params = None
        windowed = self._window_chunk is not None
        hnsw = faiss_kind(self.faiss_index) == "hnsw"
        allowed = len(self.chunks)
        if mask is not None:
            ids = np.flatnonzero(mask).astype(np.int64)
            if len(ids) == 0:
                return []
            allowed = len(ids)
            if windowed:
                ids = np.flatnonzero(mask[self._window_chunk]).astype(np.int64)
            if hnsw and len(ids) <= FLAT_MAX_VECTORS:
                # a selective filter on a graph index: score the allowed vectors exactly
                return self._dense_exact(qvec, ids, min(n, allowed))
            selector = faiss.IDSelectorBatch(ids)  # kept alive while params refer to it
            params = (
                faiss.SearchParametersHNSW(sel=selector, efSearch=max(HNSW_EF_SEARCH, 4 * n))
                if hnsw
                else faiss.SearchParameters(sel=selector)
            )
        elif hnsw:
            params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, 4 * n))
        n = min(n, allowed)
        if not windowed:
            n = min(n, self.faiss_index.ntotal)
            scores, rows = self.faiss_index.search(qvec, n, params=params)
            return [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
        # window mode: best windows, grouped by chunk (a chunk's score = its best window's);
        # widen the window search until n distinct chunks are found or every window is seen
        total = self.faiss_index.ntotal
        want = min(total, max(4 * n, n + 16))
        while True:
            scores, rows = self.faiss_index.search(qvec, want, params=params)
            best: dict[int, float] = {}
            for r, sc in zip(rows[0], scores[0], strict=True):
                if r < 0:
                    continue
                c = int(self._window_chunk[r])
                if c not in best:
                    best[c] = float(sc)
            if len(best) >= n or want >= total:
                return list(best.items())[:n]
            want = min(total, want * 4)

    def _dense_exact(self, qvec: np.ndarray, ids: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Exact scores of the vectors ``ids`` (rows of the FAISS index), best ``n`` chunks."""
        vecs = self.faiss_index.reconstruct_batch(ids)
        scores = vecs @ qvec[0]
        rows = ids if self._window_chunk is None else self._window_chunk[ids]
        best: dict[int, float] = {}
        for i in np.argsort(-scores, kind="stable"):
            c = int(rows[i])
            if c not in best:
                best[c] = float(scores[i])
                if len(best) >= n:
                    break
        return list(best.items())

    def _bm25_scores(self, query: str, mask: np.ndarray | None) -> np.ndarray | None:
        """BM25 score of every chunk (0 outside ``mask``), or None if the query has no terms."""
        if self.bm25 is None:
            return None
        tokens = _bm25_tokens([query], self._stem, ids=False)[0]
        if not tokens:
            return None
        scores = np.asarray(self.bm25.get_scores(tokens), dtype=np.float32)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        return scores

    def _bm25(
        self, query: str, n: int, mask: np.ndarray | None, scores: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        if n <= 0:
            return []
        if scores is None:
            scores = self._bm25_scores(query, mask)
        if scores is None:
            return []
        n = min(n, int(np.count_nonzero(scores > 0)))
        if n == 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(r), float(scores[r])) for r in top]

    def embed_query(self, query: str) -> np.ndarray:
        return _normalise(np.asarray(self.embeddings.embed_query(query), dtype=np.float32))

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        filters: Mapping[str, Any] | None = None,
        mmr: bool = True,
        mode: SearchMode = "hybrid",
        lambda_mult: float | None = None,
        fetch_k: int | None = None,
        fusion: FusionMethod = "convex",
        dense_weight: float | None = None,
        near_duplicate: float | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``.

        Filters are applied before ranking. ``mode="hybrid"`` takes the ``max(fetch_k, 100)`` best
        chunks of FAISS and of BM25, scores every candidate by both and fuses them
        (``fusion="convex"``: ``dense_weight`` (default ``fusion.dense_weight_for``: 0.85 in a
        varied corpus down to 0.6 in a uniform one, by ``homogeneity``, rising to 0.95 for
        queries of 15 to 30 words) times the cosine normalised by its
        theoretical minimum and the query's maximum plus the rest times BM25 / its maximum;
        ``fusion="rrf"``: reciprocal rank); ``score`` = the fused score. ``"dense"`` / ``"bm25"``
        use one of them (``score`` = cosine / BM25). A chunk's cosine is its best window's in
        window mode (the default), the cosine of its one vector otherwise. With ``mmr`` the ``k`` hits are picked from
        the ``fetch_k`` (default ``4 * k``) best candidates by maximal marginal relevance
        (``lambda_mult``, default ``DEFAULT_LAMBDA`` = 0.9, see ``mmr.py``; relevance = the score min-max scaled over those candidates,
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
        if alpha is None and mode == "hybrid" and fusion == "convex":
            alpha = dense_weight_for(query, self.homogeneity)
        fetch = max(fetch_k or 4 * k, k)
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
            dense = self._dense(qvec, pool, mask)
        if mode in ("hybrid", "bm25"):
            bm25_all = self._bm25_scores(query, mask)
            lexical = self._bm25(query, pool, mask, bm25_all)
        dense_s = dict(dense)
        bm25_s = dict(lexical)
        if mode == "hybrid" and fusion == "rrf":
            ranked = rrf_fuse([[r for r, _ in dense], [r for r, _ in lexical]], k=RRF_K)[:fetch]
        elif mode == "hybrid":
            rows = list(dict.fromkeys([r for r, _ in dense] + [r for r, _ in lexical]))
            # score every candidate by both methods: the cosine of BM25-only candidates and the
            # BM25 score (possibly 0) of dense-only ones
            for r in rows:
                if r not in dense_s and qvec is not None and self.faiss_index is not None:
                    dense_s[r] = self._dense_of(r, qvec)
                if r not in bm25_s:
                    bm25_s[r] = float(bm25_all[r]) if bm25_all is not None else 0.0
            ranked = convex_fuse(
                rows, [dense_s[r] for r in rows], [bm25_s[r] for r in rows], alpha=alpha
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

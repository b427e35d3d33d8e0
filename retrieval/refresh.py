"""Incremental refresh of a ``DocumentIndex``: bring it to exactly a set of documents.

New and edited documents are re-chunked (unchanged ones keep their chunks); each chunk's vector
(or each of its windows', in window mode) comes from the current index, else the embeddings
cache, else the embedder; then the FAISS and BM25 sides are rebuilt. ``refresh`` computes the
next state and ``DocumentIndex`` applies and saves it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from refgate.memory.embeddings import BATCH_SIZE
from refgate.retrieval.bm25 import build_bm25, corpus_tokenizer, stemmer
from refgate.retrieval.cache import EmbeddingCache
from refgate.retrieval.chunking import Chunk, chunk_documents
from refgate.retrieval.dense import (
    faiss_index_for,
    faiss_kind,
    mean_chunk_vectors,
    normalise,
    window_rows,
)
from refgate.retrieval.index_files import CACHE, DocumentIndexError, StoredIndex
from refgate.retrieval.windows import WINDOW_TOKENS, chunk_windows

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from Stemmer import Stemmer

    from refgate.retrieval.index import DocumentIndex

#: ``progress(stage, done, total)``; stages: "chunk", "embed", "index".
Progress = Callable[[str, int, int], None]
#: The windows of one chunk as ``(content hash, text)`` (text "" when known by its hash alone).
Pieces = list[list[tuple[str, str]]]


@dataclass
class UpdateResult:
    """What ``build`` / ``update`` did: chunks embedded now vs reused from the cache or index,
    chunks removed, and the documents added, changed, removed or left as they were. A backend
    that writes as it goes (pgvector's ``write_index``) tallies into one while it runs."""

    embedded: int = 0
    reused: int = 0
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

    def to_dict(self) -> dict[str, int | float]:
        d = asdict(self)
        d["reuse_rate"] = self.reuse_rate
        return d

    def __getitem__(self, key: str) -> int | float:  # dict-style access: result["embedded"]
        return self.to_dict()[key]


@dataclass
class Refreshed:
    """The refreshed index's content and what the refresh did (``seconds`` left at 0)."""

    stored: StoredIndex
    stem: Stemmer | None
    #: The BM25 tokenizer chosen for the chunks (``bm25.corpus_tokenizer``: None = words).
    tokenizer: str | None
    documents: dict[str, str]
    dimension: int | None
    faiss: str | None
    result: UpdateResult


def doc_hash(doc: Document) -> str:
    """A document's content hash: its text and its scalar metadata."""
    meta = {k: v for k, v in sorted((doc.metadata or {}).items()) if _jsonable(v)}
    h = hashlib.sha256((doc.page_content or "").encode("utf-8"))
    h.update(json.dumps(meta, sort_keys=True, default=str).encode("utf-8"))
    return h.hexdigest()


def doc_id_of(doc: Document) -> str:
    """A document's ``metadata['doc_id']`` ("" when it has none)."""
    return str((doc.metadata or {}).get("doc_id") or "")


def document_hashes(docs: Sequence[Document]) -> dict[str, str]:
    """Each document's content hash (``doc_hash``) by its doc_id, in the documents' order; a
    missing or repeated doc_id is refused (``ValueError``), before anything is indexed."""
    hashes: dict[str, str] = {}
    for doc in docs:
        doc_id = doc_id_of(doc)
        if not doc_id:
            raise ValueError("every document needs metadata['doc_id']")
        if doc_id in hashes:
            raise ValueError(f"duplicate doc_id {doc_id!r}")
        hashes[doc_id] = doc_hash(doc)
    return hashes


def _jsonable(v: object) -> bool:
    return isinstance(v, str | int | float | bool) or v is None


@dataclass
class _Chunked:
    """The chunks of a refresh's documents (an unchanged document keeps its old chunks), each
    document's content hash, and how many documents were added, changed or left as they were."""

    chunks: list[Chunk] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    added: int = 0
    changed: int = 0
    unchanged: int = 0

    @classmethod
    def of(
        cls, old: DocumentIndex, docs: list[Document], *, say: Progress, existing: bool
    ) -> _Chunked:
        cfg = old.manifest["chunking"]
        old_hashes: dict[str, str] = dict(old.manifest.get("documents", {}))
        old_by_doc: dict[str, list[Chunk]] = {}
        for c in old.chunks:
            old_by_doc.setdefault(c.doc_id, []).append(c)
        out = cls(hashes=document_hashes(docs))
        say("chunk", 0, len(docs))
        for n, (doc, (doc_id, h)) in enumerate(zip(docs, out.hashes.items(), strict=True), 1):
            if existing and old_hashes.get(doc_id) == h and doc_id in old_by_doc:
                out.chunks.extend(old_by_doc[doc_id])
                out.unchanged += 1
            else:
                out.chunks.extend(
                    chunk_documents(
                        [doc],
                        min_tokens=cfg["min_tokens"],
                        max_tokens=cfg["max_tokens"],
                        overlap_tokens=cfg["overlap_tokens"],
                    )
                )
                if doc_id in old_hashes:
                    out.changed += 1
                else:
                    out.added += 1
            say("chunk", n, len(docs))
        return out


def refresh(
    old: DocumentIndex, docs: list[Document], *, say: Progress, existing: bool
) -> Refreshed:
    """The next state of ``old`` holding exactly ``docs`` (``existing``: reuse its chunks and
    vectors; a build starts from nothing)."""
    # 1. chunk new and changed documents; keep unchanged documents' chunks
    step = _Chunked.of(old, docs, say=say, existing=existing)
    chunks, new_hashes = step.chunks, step.hashes
    removed_docs = len(set(old.manifest.get("documents", {})) - set(new_hashes))

    # 2. vectors
    pieces, hashes, have, embedded = _vectors(old, chunks, say=say, existing=existing)
    reused = len(chunks) - embedded

    # 3. indexes
    say("index", 0, 1)
    stem = stemmer() if old.manifest["bm25"].get("stemmer") else None
    tokenizer = corpus_tokenizer([c.text for c in chunks])
    model_id = old.manifest["embeddings_id"]
    stored, dimension = _indexes(
        chunks, pieces, hashes, have, old.dense_unit == "window", stem, model_id, tokenizer
    )
    old_ids = {c.chunk_id for c in old.chunks}
    removed_chunks = len(old_ids - {c.chunk_id for c in chunks}) if existing else 0
    return Refreshed(
        stored=stored,
        stem=stem,
        tokenizer=tokenizer,
        documents=new_hashes,
        dimension=dimension,
        faiss=faiss_kind(stored.faiss_index) if chunks else None,
        result=UpdateResult(
            embedded=embedded,
            reused=reused,
            removed=removed_chunks,
            chunks=len(chunks),
            documents=len(new_hashes),
            added_documents=step.added,
            changed_documents=step.changed,
            removed_documents=removed_docs,
            unchanged_documents=step.unchanged,
        ),
    )


def _vectors(
    old: DocumentIndex, chunks: list[Chunk], *, say: Progress, existing: bool
) -> tuple[Pieces, list[str], dict[str, np.ndarray], int]:
    """Each chunk's pieces (one, or its windows), their hashes in FAISS row order, a vector for
    every hash (from the current index, else the cache, else embedded in batches) and how many
    chunks were embedded."""
    model_id = old.manifest["embeddings_id"]
    windowed = old.dense_unit == "window"
    dense = old.manifest.get("dense")
    size = int(dense.get("window_tokens", WINDOW_TOKENS) if dense else WINDOW_TOKENS)
    if windowed:
        known: dict[str, list[str]] = {}
        if existing and old.window_hashes is not None:
            known = {
                c.chunk_id + c.content_hash: hs
                for c, hs in zip(old.chunks, old.window_hashes, strict=False)
            }
        pieces = [
            [(h, "") for h in known[c.chunk_id + c.content_hash]]
            if c.chunk_id + c.content_hash in known
            else chunk_windows(old.embeddings, c.text, size)
            for c in chunks
        ]
    else:
        pieces = [[(c.content_hash, c.text)] for c in chunks]
    hashes = [h for ws in pieces for h, _ in ws]
    have: dict[str, np.ndarray] = {}
    if existing and old.chunks and old.faiss_index is not None:
        current = old.faiss_index.reconstruct_n(0, old.faiss_index.ntotal)
        wanted = set(hashes)
        for h, vec in zip(row_hashes(old), current, strict=True):
            if h in wanted:
                have[h] = vec
    old.path.mkdir(parents=True, exist_ok=True)
    with EmbeddingCache(old.cache_path or old.path / CACHE) as cache:
        missing_from_index = [h for h in dict.fromkeys(hashes) if h not in have]
        have.update(cache.get_many(model_id, missing_from_index))
        todo: dict[str, str] = {}
        for n, ws in enumerate(pieces):
            if windowed and any(h not in have and not t for h, t in ws):
                ws = pieces[n] = chunk_windows(old.embeddings, chunks[n].text, size)
            for h, text in ws:
                if h not in have:
                    todo.setdefault(h, text)
        have.update(embed_missing(old.embeddings, todo, cache, model_id, say))
        if old.cache_path is None:
            cache.prune(model_id, hashes)
    embedded_set = set(todo)
    embedded = sum(1 for ws in pieces if any(h in embedded_set for h, _ in ws))
    return pieces, hashes, have, embedded


def embed_missing(
    embeddings: Embeddings,
    todo: Mapping[str, str],
    cache: EmbeddingCache | None,
    model_id: str,
    say: Progress,
) -> dict[str, np.ndarray]:
    """Unit vectors of the ``todo`` texts (by content hash), embedded ``BATCH_SIZE`` at a time
    and put in the ``cache`` (when given) batch by batch; the "embed" stage's progress."""
    items = list(todo.items())
    out: dict[str, np.ndarray] = {}
    say("embed", 0, len(items))
    for i in range(0, len(items), BATCH_SIZE):
        batch = items[i : i + BATCH_SIZE]
        vecs = normalise(np.asarray(embeddings.embed_documents([text for _, text in batch])))
        fresh = [(h, v) for (h, _), v in zip(batch, vecs, strict=True)]
        if cache is not None:
            cache.put_many(model_id, fresh)
        out.update(fresh)
        say("embed", min(i + BATCH_SIZE, len(items)), len(items))
    return out


def _indexes(
    chunks: list[Chunk],
    pieces: Pieces,
    hashes: list[str],
    have: dict[str, np.ndarray],
    windowed: bool,
    stem: Stemmer | None,
    model_id: str,
    tokenizer: str | None = None,
) -> tuple[StoredIndex, int | None]:
    """The FAISS and BM25 indexes of ``chunks`` (and the window layout), and their dimension."""
    if not chunks:
        return StoredIndex(chunks), None
    dims = {int(have[h].shape[0]) for h in hashes}
    if len(dims) != 1:
        raise DocumentIndexError(
            f"vectors of different sizes {sorted(dims)} for one index: the embedder "
            f"{model_id!r} is not identified uniquely; give it an embeddings_id"
        )
    mat = normalise(np.stack([have[h] for h in hashes]))
    stored = StoredIndex(
        chunks, faiss_index_for(mat), build_bm25([c.text for c in chunks], stem, tokenizer)
    )
    if windowed:
        counts = np.array([len(ws) for ws in pieces], dtype=np.int64)
        stored.window_counts = counts
        stored.window_hashes = [[h for h, _ in ws] for ws in pieces]
        _, window_chunk = window_rows(counts)
        stored.chunk_vectors = mean_chunk_vectors(mat, window_chunk, len(chunks))
    return stored, int(mat.shape[1])


def row_hashes(old: DocumentIndex) -> list[str]:
    """The content hash of each FAISS row of ``old`` (a chunk's, or each of its windows')."""
    if old.dense_unit != "window":
        return [c.content_hash for c in old.chunks]
    if old.window_hashes is not None and len(old.window_hashes) == len(old.chunks):
        return [h for hs in old.window_hashes for h in hs]
    dense = old.manifest.get("dense")
    size = int(dense.get("window_tokens", WINDOW_TOKENS) if dense else WINDOW_TOKENS)
    rows = [h for c in old.chunks for h, _ in chunk_windows(old.embeddings, c.text, size)]
    if old.faiss_index is not None and len(rows) != old.faiss_index.ntotal:
        return [""] * old.faiss_index.ntotal  # windows changed (embedder): reuse nothing
    return rows

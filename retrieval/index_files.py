"""The folder of a ``DocumentIndex``: its manifest, writing its files atomically, reading them back.

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
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NotRequired

import numpy as np
from langchain_core.embeddings import Embeddings
from typing_extensions import TypedDict

from refgate import files
from refgate.errors import RefgateError
from refgate.memory.embeddings import (
    EmbeddingsSpec,
    embeddings_from_spec,
    embeddings_id,
    embeddings_spec,
)
from refgate.retrieval.bm25 import KIWI, TOKEN_PATTERN, kiwi_available, load_bm25, stemmer
from refgate.retrieval.chunking import ENCODING, Chunk

if TYPE_CHECKING:
    import faiss
    from bm25s import BM25

    from refgate.config import Settings

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHUNKS = "chunks.parquet"
VECTORS = "vectors.faiss"
BM25_DIR = "bm25"
CACHE = "embeddings.sqlite"
CHUNK_VECTORS = "chunk_vectors.npy"

DenseUnit = Literal["chunk", "window"]


class ChunkingSpec(TypedDict):
    encoding: str
    min_tokens: int
    max_tokens: int
    overlap_tokens: int


class Bm25Spec(TypedDict):
    stopwords: str
    stemmer: str | None
    token_pattern: str
    #: ``"kiwi"`` when the chunks are tokenised as Korean morphemes (absent: words).
    tokenizer: NotRequired[str]


class DenseSpec(TypedDict):
    unit: DenseUnit
    window_tokens: int


class IndexManifest(TypedDict):
    """``manifest.json``: how the index was built and what it holds (document hashes by id)."""

    format: int
    embeddings: EmbeddingsSpec
    embeddings_id: str
    chunking: ChunkingSpec
    bm25: Bm25Spec
    #: Absent in indexes from before windows (one vector per chunk).
    dense: NotRequired[DenseSpec]
    documents: dict[str, str]
    dimension: NotRequired[int]
    faiss: NotRequired[str | None]
    built_at: NotRequired[str]
    updated_at: NotRequired[str]
    chunk_count: NotRequired[int]


class DocumentIndexError(RefgateError, RuntimeError):
    """The index folder is missing, incomplete or from another format."""


def stored_embedder(
    spec: EmbeddingsSpec,
    settings: Settings | None,
    *,
    index: str,
    error: type[DocumentIndexError] = DocumentIndexError,
) -> Embeddings:
    """The embedder an index was built with, rebuilt from its stored ``spec``; ``error`` naming
    the ``index`` when it cannot be rebuilt here."""
    try:
        return embeddings_from_spec(spec, settings)
    except Exception as exc:
        raise error(
            f"{index}: cannot rebuild its embedder {spec!r} ({exc}); pass embeddings= to open it"
        ) from exc


def new_manifest(
    emb: Embeddings,
    *,
    min_tokens: int,
    max_tokens: int,
    overlap_tokens: int,
    dense: DenseUnit,
    window_tokens: int,
) -> IndexManifest:
    """The manifest of a new, empty index (its documents are added by the first refresh)."""
    return {
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
            "stemmer": "english" if stemmer() else None,
            "token_pattern": TOKEN_PATTERN,
        },
        "dense": {"unit": dense, "window_tokens": int(window_tokens)},
        "documents": {},
    }


def dense_unit(manifest: IndexManifest) -> DenseUnit:
    """One vector per chunk or per window (indexes from before windows: per chunk)."""
    dense = manifest.get("dense")
    return dense.get("unit", "chunk") if dense else "chunk"


def read_manifest(path: Path) -> IndexManifest:
    """The manifest at ``path``, once it is known to be readable here (format, stemmer)."""
    mpath = path / MANIFEST
    if not mpath.is_file():
        raise DocumentIndexError(f"no document index at {path} (missing {MANIFEST})")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT_VERSION:
        raise DocumentIndexError(
            f"{mpath}: index format {manifest.get('format')!r}, expected {FORMAT_VERSION}; "
            "rebuild it"
        )
    if manifest.get("bm25", {}).get("stemmer") and stemmer() is None:
        raise DocumentIndexError(f"{path}: the index was built with PyStemmer; install PyStemmer")
    if manifest.get("bm25", {}).get("tokenizer") == KIWI and not kiwi_available():
        raise DocumentIndexError(
            f"{path}: the index tokenises Korean with kiwipiepy; install kiwipiepy"
        )
    return manifest


@dataclass
class StoredIndex:
    """What an index folder holds besides its manifest (window fields: window mode only)."""

    chunks: list[Chunk]
    faiss_index: faiss.Index | None = None
    bm25: BM25 | None = None
    window_counts: np.ndarray | None = None
    chunk_vectors: np.ndarray | None = None
    window_hashes: list[list[str]] | None = None


def read_files(path: Path, manifest: IndexManifest) -> StoredIndex:
    """Read the chunks, the FAISS and BM25 indexes and the window layout; embeds nothing."""
    # deferred: faiss is heavy to import; paid on first use
    import faiss
    import pyarrow.parquet as pq

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
    if not chunks:
        return StoredIndex(chunks)
    stored = StoredIndex(
        chunks, faiss.read_index(str(path / VECTORS)), load_bm25(str(path / BM25_DIR))
    )
    if dense_unit(manifest) == "window":
        stored.window_counts = np.asarray(table["windows"], dtype=np.int64)
        stored.chunk_vectors = np.load(path / CHUNK_VECTORS)
        if "window_hashes" in table:
            stored.window_hashes = [list(h) for h in table["window_hashes"]]
    return stored


def write_files(path: Path, stored: StoredIndex, manifest: Mapping[str, object]) -> None:
    """Write the index to ``path``, each file through a temporary one, the manifest last."""
    # deferred: faiss is heavy to import; paid on first use
    import faiss
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = path
    chunks = stored.chunks
    p.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "chunk_id": [c.chunk_id for c in chunks],
            "doc_id": [c.doc_id for c in chunks],
            "text": [c.text for c in chunks],
            "metadata": [json.dumps(c.metadata, ensure_ascii=False) for c in chunks],
            "windows": (
                [int(n) for n in stored.window_counts]
                if stored.window_counts is not None
                else [1] * len(chunks)
            ),
            "window_hashes": (
                stored.window_hashes
                if stored.window_hashes is not None
                else [[c.content_hash] for c in chunks]
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
    with files.replacing(p / CHUNKS) as tmp:
        pq.write_table(table, tmp)
    if stored.chunk_vectors is not None:
        with files.replacing(p / CHUNK_VECTORS) as tmp, open(tmp, "wb") as fh:
            np.save(fh, stored.chunk_vectors)
    else:
        (p / CHUNK_VECTORS).unlink(missing_ok=True)
    if stored.faiss_index is not None and stored.bm25 is not None:  # both, or neither
        with files.replacing(p / VECTORS) as tmp:
            faiss.write_index(stored.faiss_index, str(tmp))
        tmp = p / (BM25_DIR + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        stored.bm25.save(str(tmp), show_progress=False)
        shutil.rmtree(p / BM25_DIR, ignore_errors=True)
        os.replace(tmp, p / BM25_DIR)
    else:
        (p / VECTORS).unlink(missing_ok=True)
        shutil.rmtree(p / BM25_DIR, ignore_errors=True)
    files.write_atomic(p / MANIFEST, json.dumps(manifest, indent=1))

"""``refgate index --migrate``: copy a workspace's FAISS index into the pgvector index, embedding
nothing. Its chunks, their windows' vectors (read back from the FAISS index) and its document
hashes move as they are, one transaction per document (``writer._write_doc``); the BM25 term
counts are tokenised from the chunks' text as the FAISS index tokenised them."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from refgate.retrieval.bm25 import KIWI
from refgate.retrieval.chunking import Chunk
from refgate.retrieval.index import DocumentIndex
from refgate.retrieval.pgvector.connection import PgIndexError, connect
from refgate.retrieval.pgvector.schema import (
    Tables,
    check_name,
    create_tables,
    registry_rows,
    table_prefix,
)
from refgate.retrieval.pgvector.writer import PreparedDoc, _write_doc, chunk_terms, index_spec
from refgate.retrieval.refresh import Progress, UpdateResult, row_hashes
from refgate.retrieval.windows import WINDOW_TOKENS


def migrate_faiss(
    folder: Path,
    dsn: str,
    *,
    name: str = "documents",
    progress: Progress | None = None,
    embeddings: Embeddings | None = None,
) -> UpdateResult:
    """Copy the FAISS index at ``folder`` into the pgvector index ``name`` (its embedder's
    tables); documents already there with the same hash are left as they are. ``embeddings``:
    the index's embedder, when its manifest cannot rebuild it (it embeds nothing here)."""
    t0 = time.perf_counter()
    say = progress or (lambda stage, done, total: None)
    check_name(name)
    faiss_index = DocumentIndex.load(folder, embeddings=embeddings)
    manifest = faiss_index.manifest
    if faiss_index.faiss_index is None or not faiss_index.chunks:
        raise PgIndexError(f"{folder}: the FAISS index is empty: nothing to migrate")
    hashes = row_hashes(faiss_index)
    vectors = faiss_index.faiss_index.reconstruct_n(0, faiss_index.faiss_index.ntotal)
    counts = (
        faiss_index.window_counts
        if faiss_index.window_counts is not None
        else np.ones(len(faiss_index.chunks), dtype=np.int64)
    )
    tokenizer = manifest["bm25"].get("tokenizer")
    stem = faiss_index._stem
    dim = int(vectors.shape[1])
    dense = manifest.get("dense")
    window_tokens = int(dense.get("window_tokens", WINDOW_TOKENS)) if dense else WINDOW_TOKENS
    emb = faiss_index.embeddings
    by_doc: dict[str, list[tuple[Chunk, list[tuple[str, str]], list[np.ndarray]]]] = {}
    row = 0
    for chunk, n in zip(faiss_index.chunks, counts, strict=True):
        ws = [(hashes[row + i], "") for i in range(int(n))]
        vs = [vectors[row + i] for i in range(int(n))]
        by_doc.setdefault(chunk.doc_id, []).append((chunk, ws, vs))
        row += int(n)
    doc_hashes = manifest.get("documents", {})
    written = 0
    with connect(dsn) as conn:
        emb_id = manifest["embeddings_id"]
        t = Tables(table_prefix(name, emb_id))
        known = {r["prefix"]: r for r in registry_rows(conn, name)}.get(t.prefix)
        if known is not None and known["spec"].get("bm25", {}).get("tokenizer") != tokenizer:
            old = conn.execute(f'SELECT count(*) FROM "{t.name("docs")}"').fetchone()
            if old and int(old[0]) and tokenizer == KIWI:
                raise PgIndexError(
                    f"pgvector index {name!r} tokenises words and the FAISS index Korean "
                    "morphemes: migrate into a new [index] name, or rebuild it"
                )
        t = create_tables(
            conn,
            name=name,
            embeddings_id=emb_id,
            embeddings=dict(manifest["embeddings"]),
            dimension=dim,
            spec=index_spec(emb, tokenizer=tokenizer, stem=stem, window_tokens=window_tokens),
        )
        say("index", 0, len(by_doc))
        for n, (doc_id, items) in enumerate(by_doc.items(), start=1):
            chunks = [c for c, _, _ in items]
            d = PreparedDoc(
                doc_id,
                str(doc_hashes.get(doc_id, "")),
                dict(chunks[0].metadata),
                chunks,
                [ws for _, ws, _ in items],
            )
            d.vectors = [vs for _, _, vs in items]
            d.terms = chunk_terms([c.text for c in chunks], stem, tokenizer)
            written += int(_write_doc(conn, t, d, dimension=dim))
            say("index", n, len(by_doc))
        total = conn.execute(f'SELECT chunks FROM "{t.name("stats")}"').fetchone()
    return UpdateResult(
        embedded=0,
        reused=len(faiss_index.chunks),
        chunks=int(total[0]) if total else 0,
        documents=len(by_doc),
        added_documents=written,
        unchanged_documents=len(by_doc) - written,
        seconds=time.perf_counter() - t0,
    )

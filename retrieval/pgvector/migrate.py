"""``refgate index --migrate``: copy a workspace's FAISS index into the pgvector index, embedding
nothing. Its chunks, their windows' vectors (read back from the FAISS index) and its document
hashes move as they are, one transaction per document (``writer.write_doc``); the BM25 term
counts are tokenised from the chunks' text as the FAISS index tokenised them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.embeddings import Embeddings
from psycopg import sql

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
from refgate.retrieval.pgvector.writer import PreparedDoc, chunk_terms, index_spec, write_doc
from refgate.retrieval.refresh import Progress, UpdateResult, row_hashes
from refgate.retrieval.windows import WINDOW_TOKENS

if TYPE_CHECKING:
    import psycopg


#: One document's chunks as the FAISS index holds them: each with its windows' content hashes
#: (texts are not needed: nothing is embedded) and their vectors.
DocRows = list[tuple[Chunk, list[tuple[str, str]], list[np.ndarray]]]


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
    if faiss_index.faiss_index is None or not faiss_index.chunks:
        raise PgIndexError(f"{folder}: the FAISS index is empty: nothing to migrate")
    by_doc = _rows_by_document(faiss_index)
    doc_hashes = faiss_index.manifest.get("documents", {})
    tokenizer = faiss_index.manifest["bm25"].get("tokenizer")
    written = 0
    with connect(dsn) as conn:
        t = _target_tables(conn, name, faiss_index)
        say("index", 0, len(by_doc))
        for n, (doc_id, items) in enumerate(by_doc.items(), start=1):
            chunks = [c for c, _, _ in items]
            d = PreparedDoc(
                doc_id,
                str(doc_hashes.get(doc_id, "")),
                dict(chunks[0].metadata),
                chunks,
                [ws for _, ws, _ in items],
                vectors=[vs for _, _, vs in items],
                terms=chunk_terms([c.text for c in chunks], faiss_index._stem, tokenizer),
            )
            written += write_doc(conn, t, d, dimension=len(items[0][2][0])) is not None
            say("index", n, len(by_doc))
        total = conn.execute(sql.SQL("SELECT chunks FROM {}").format(t.stats)).fetchone()
    return UpdateResult(
        embedded=0,
        reused=len(faiss_index.chunks),
        chunks=int(total[0]) if total else 0,
        documents=len(by_doc),
        added_documents=written,
        unchanged_documents=len(by_doc) - written,
        seconds=time.perf_counter() - t0,
    )


def _rows_by_document(faiss_index: DocumentIndex) -> dict[str, DocRows]:
    """The FAISS index's chunks grouped by document, each with its windows' hashes and vectors
    read back from the FAISS index."""
    assert faiss_index.faiss_index is not None  # checked by the caller
    hashes = row_hashes(faiss_index)
    vectors = faiss_index.faiss_index.reconstruct_n(0, faiss_index.faiss_index.ntotal)
    counts = (
        faiss_index.window_counts
        if faiss_index.window_counts is not None
        else np.ones(len(faiss_index.chunks), dtype=np.int64)
    )
    by_doc: dict[str, DocRows] = {}
    row = 0
    for chunk, n in zip(faiss_index.chunks, counts, strict=True):
        ws = [(hashes[row + i], "") for i in range(int(n))]
        vs = [vectors[row + i] for i in range(int(n))]
        by_doc.setdefault(chunk.doc_id, []).append((chunk, ws, vs))
        row += int(n)
    return by_doc


def _target_tables(conn: psycopg.Connection, name: str, faiss_index: DocumentIndex) -> Tables:
    """The pgvector table set for the FAISS index's embedder, created if missing; an index
    that tokenises otherwise (words against morphemes) and holds documents is refused."""
    manifest = faiss_index.manifest
    emb_id = manifest["embeddings_id"]
    tokenizer = manifest["bm25"].get("tokenizer")
    t = Tables(table_prefix(name, emb_id))
    known = {r["prefix"]: r for r in registry_rows(conn, name)}.get(t.prefix)
    if known is not None and known["spec"].get("bm25", {}).get("tokenizer") != tokenizer:
        old = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(t.docs)).fetchone()
        if old and int(old[0]) and tokenizer == KIWI:
            raise PgIndexError(
                f"pgvector index {name!r} tokenises words and the FAISS index Korean "
                "morphemes: migrate into a new [index] name, or rebuild it"
            )
    dense = manifest.get("dense")
    window_tokens = int(dense.get("window_tokens", WINDOW_TOKENS)) if dense else WINDOW_TOKENS
    return create_tables(
        conn,
        name=name,
        embeddings_id=emb_id,
        embeddings=manifest["embeddings"],
        dimension=int(faiss_index.faiss_index.d) if faiss_index.faiss_index is not None else 0,
        spec=index_spec(
            faiss_index.embeddings,
            tokenizer=tokenizer,
            stem=faiss_index._stem,
            window_tokens=window_tokens,
        ),
    )

"""Writing the pgvector index: incremental, one transaction per document.

``write_index(dsn, documents, embeddings)`` brings the index to exactly ``documents``: new and
edited documents (by content hash, as ``refresh.doc_hash``) are chunked as the FAISS path chunks
them, their windows' vectors come from the index itself (by content hash), else the embeddings
cache, else the embedder; then each document is replaced in one transaction (its chunks,
windows, term counts, the BM25 document frequencies and the corpus statistics), so a reader sees
a document whole or not at all, a kill leaves whole documents only, and two writers never lose
each other's work: a per-document advisory lock orders writers of the same document, and every
commit serialises on the one statistics row, which it locks before the document frequencies.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql
from psycopg.types.json import Jsonb

from refgate.memory.embeddings import BATCH_SIZE, embeddings_id, embeddings_spec
from refgate.retrieval.bm25 import KIWI, bm25_tokens, corpus_tokenizer, morpheme_tokens, stemmer
from refgate.retrieval.cache import EmbeddingCache
from refgate.retrieval.chunking import (
    ENCODING,
    MAX_TOKENS,
    MIN_TOKENS,
    OVERLAP_TOKENS,
    Chunk,
    chunk_documents,
)
from refgate.retrieval.dense import normalise
from refgate.retrieval.pgvector.connection import PgIndexError, as_array, connect
from refgate.retrieval.pgvector.filters import doc_type
from refgate.retrieval.pgvector.schema import (
    Tables,
    check_name,
    create_hnsw,
    create_tables,
    drop_tables,
    registry_rows,
    table_prefix,
    update_spec,
)
from refgate.retrieval.refresh import Progress, UpdateResult, doc_hash
from refgate.retrieval.windows import WINDOW_TOKENS, chunk_windows

if TYPE_CHECKING:
    import psycopg
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from Stemmer import Stemmer

#: Windows embedded together (across small documents) before their documents are written.
EMBED_GROUP = 4 * BATCH_SIZE
#: A fresh index filled with at least this many windows builds its HNSW graph once, after the
#: rows are in (pgvector builds a graph over existing rows much faster than row by row).
BULK_WINDOWS = 20_000
_DOC_LOCK = "refgate-doc:"


@dataclass
class PreparedDoc:
    """One document ready to write: its chunks, windows (hash, vector) and BM25 terms."""

    doc_id: str
    hash: str
    metadata: dict[str, Any]
    chunks: list[Chunk]
    windows: list[list[tuple[str, str]]]
    vectors: list[list[np.ndarray]] = field(default_factory=list)
    terms: list[Counter[str]] = field(default_factory=list)


def index_spec(
    emb: Embeddings, *, tokenizer: str | None, stem: Stemmer | None, window_tokens: int
) -> dict[str, Any]:
    """What the registry records of how chunks are cut, windowed and tokenised."""
    return {
        "chunking": {
            "encoding": ENCODING,
            "min_tokens": MIN_TOKENS,
            "max_tokens": MAX_TOKENS,
            "overlap_tokens": OVERLAP_TOKENS,
        },
        "dense": {"unit": "window", "window_tokens": int(window_tokens)},
        "bm25": {"stemmer": "english" if stem is not None else None, "tokenizer": tokenizer},
        "embeddings_id": embeddings_id(emb),
    }


def chunk_terms(
    texts: Sequence[str], stem: Stemmer | None, tokenizer: str | None
) -> list[Counter[str]]:
    """Each text's BM25 terms with their counts, tokenised as ``bm25.build_bm25`` does."""
    if tokenizer == KIWI:
        lists = morpheme_tokens(texts, stem)
    else:
        lists = bm25_tokens(texts, stem, ids=False)
    return [Counter(ts) for ts in lists]


def write_index(
    dsn: str,
    documents: Iterable[Document],
    embeddings: Embeddings,
    *,
    name: str = "documents",
    rebuild: bool = False,
    progress: Progress | None = None,
    cache_path: Path | None = None,
    window_tokens: int = WINDOW_TOKENS,
    on_document: Callable[[str], None] | None = None,
) -> UpdateResult:
    """Bring the pgvector index ``name`` (this embedder's tables) to exactly ``documents``;
    ``on_document(doc_id)`` is called after each document's transaction commits."""
    t0 = time.perf_counter()
    say = progress or (lambda stage, done, total: None)
    check_name(name)
    docs = list(documents)
    hashes: dict[str, str] = {}
    for doc in docs:
        doc_id = str((doc.metadata or {}).get("doc_id") or "")
        if not doc_id:
            raise ValueError("every document needs metadata['doc_id']")
        if doc_id in hashes:
            raise ValueError(f"duplicate doc_id {doc_id!r}")
        hashes[doc_id] = doc_hash(doc)
    emb_id = embeddings_id(embeddings)
    stem = stemmer()
    with connect(dsn) as conn:
        if rebuild:
            drop_tables(conn, name, emb_id)
        rows = {r["prefix"]: r for r in registry_rows(conn, name)}
        t = Tables(table_prefix(name, emb_id))
        known = rows.get(t.prefix)
        old: dict[str, str] = {}
        tokenizer = corpus_tokenizer([d.page_content or "" for d in docs])
        if known is not None:
            old = dict(
                conn.execute(sql.SQL("SELECT doc_id, hash FROM {}").format(t.docs)).fetchall()
            )
            stored = known["spec"].get("bm25", {})
            if bool(stored.get("stemmer")) != (stem is not None):
                raise PgIndexError(
                    f"index {name!r} was tokenised {'with' if stored.get('stemmer') else 'without'} "
                    "PyStemmer, which this installation does not match: rebuild it with "
                    "refgate index --backend pgvector --rebuild"
                )
            if old and stored.get("tokenizer") != tokenizer and tokenizer == KIWI:
                raise PgIndexError(
                    f"index {name!r} tokenises words, and these documents hold Korean text "
                    "(tokenised to morphemes): rebuild it with "
                    "refgate index --backend pgvector --rebuild"
                )
            if old:
                tokenizer = stored.get("tokenizer")
        todo = [
            d
            for d in docs
            if old.get(str(d.metadata["doc_id"])) != hashes[str(d.metadata["doc_id"])]
        ]
        removed = sorted(set(old) - set(hashes))
        result = _Counts()
        cache = EmbeddingCache(cache_path) if cache_path is not None else None
        try:
            t_ready = known is not None
            say("chunk", 0, len(todo))
            done = 0
            for group in _groups(todo, embeddings, window_tokens):
                _embed(conn, t if t_ready else None, group, embeddings, emb_id, cache, result, say)
                dim = _dimension(group)
                if known is not None and dim is not None and dim != int(known["dimension"]):
                    raise PgIndexError(
                        f"pgvector index {name!r} holds {known['dimension']}-dimensional vectors "
                        f"of {emb_id}, the embedder now gives {dim}: rebuild it with "
                        "refgate index --backend pgvector --rebuild"
                    )
                if not t_ready:
                    dim = _dimension(group)
                    if dim is None:
                        continue
                    t = create_tables(
                        conn,
                        name=name,
                        embeddings_id=emb_id,
                        embeddings=dict(embeddings_spec(embeddings)),
                        dimension=dim,
                        spec=index_spec(
                            embeddings, tokenizer=tokenizer, stem=stem, window_tokens=window_tokens
                        ),
                    )
                    t_ready = True
                    _start_bulk(conn, t, todo)
                elif not old:
                    update_spec(
                        conn,
                        t,
                        index_spec(
                            embeddings, tokenizer=tokenizer, stem=stem, window_tokens=window_tokens
                        ),
                    )
                for prepared in group:
                    prepared.terms = chunk_terms([c.text for c in prepared.chunks], stem, tokenizer)
                    if _write_doc(conn, t, prepared, dimension=_dimension([prepared])):
                        result.written += 1
                        if prepared.doc_id in old:
                            result.changed += 1
                        else:
                            result.added += 1
                    if on_document is not None:
                        on_document(prepared.doc_id)
                    done += 1
                    say("chunk", done, len(todo))
            if t_ready:
                say("index", 0, 1)
                for doc_id in removed:
                    _remove_doc(conn, t, doc_id)
                # the graph, if a bulk fill (this one, or one killed before its end) left none
                create_hnsw(conn, t)
                total = conn.execute(sql.SQL("SELECT chunks FROM {}").format(t.stats)).fetchone()
                result.chunks = int(total[0]) if total else 0
                say("index", 1, 1)
        finally:
            if cache is not None:
                cache.close()
    return UpdateResult(
        embedded=result.embedded,
        reused=result.reused,
        removed=result.removed_chunks,
        chunks=result.chunks,
        documents=len(hashes),
        added_documents=result.added,
        changed_documents=result.changed,
        removed_documents=len(removed),
        unchanged_documents=len(docs) - len(todo),
        seconds=time.perf_counter() - t0,
    )


@dataclass
class _Counts:
    embedded: int = 0
    reused: int = 0
    written: int = 0
    added: int = 0
    changed: int = 0
    removed_chunks: int = 0
    chunks: int = 0


def _groups(
    docs: list[Document], embeddings: Embeddings, window_tokens: int
) -> Iterable[list[PreparedDoc]]:
    """Documents chunked and windowed, in groups of about ``EMBED_GROUP`` windows."""
    group: list[PreparedDoc] = []
    pending = 0
    for doc in docs:
        chunks = chunk_documents([doc])
        windows = [chunk_windows(embeddings, c.text, window_tokens) for c in chunks]
        meta = dict(doc.metadata or {})
        group.append(PreparedDoc(str(meta["doc_id"]), doc_hash(doc), meta, chunks, windows))
        pending += sum(len(w) for w in windows)
        if pending >= EMBED_GROUP:
            yield group
            group, pending = [], 0
    if group:
        yield group


def _embed(
    conn: psycopg.Connection,
    t: Tables | None,
    group: list[PreparedDoc],
    embeddings: Embeddings,
    emb_id: str,
    cache: EmbeddingCache | None,
    counts: _Counts,
    say: Progress,
) -> None:
    """Fill each document's window vectors: from the index, the cache, else the embedder."""
    hashes = list(dict.fromkeys(h for d in group for ws in d.windows for h, _ in ws))
    have: dict[str, np.ndarray] = {}
    if t is not None and hashes:
        for h, vec in conn.execute(
            sql.SQL("SELECT DISTINCT ON (hash) hash, vec FROM {} WHERE hash = ANY(%s)").format(
                t.windows
            ),
            [hashes],
        ):
            have[h] = as_array(vec)
    if cache is not None:
        have.update(cache.get_many(emb_id, [h for h in hashes if h not in have]))
    todo: dict[str, str] = {}
    for d in group:
        for ws in d.windows:
            for h, text in ws:
                if h not in have:
                    todo.setdefault(h, text)
    items = list(todo.items())
    say("embed", 0, len(items))
    for i in range(0, len(items), BATCH_SIZE):
        batch = items[i : i + BATCH_SIZE]
        vecs = normalise(np.asarray(embeddings.embed_documents([text for _, text in batch])))
        fresh = [(h, v) for (h, _), v in zip(batch, vecs, strict=True)]
        if cache is not None:
            cache.put_many(emb_id, fresh)
        have.update(fresh)
        say("embed", min(i + BATCH_SIZE, len(items)), len(items))
    embedded = set(todo)
    for d in group:
        d.vectors = [[normalise(have[h])[0] for h, _ in ws] for ws in d.windows]
        for ws in d.windows:
            if any(h in embedded for h, _ in ws):
                counts.embedded += 1
            else:
                counts.reused += 1


def _dimension(group: list[PreparedDoc]) -> int | None:
    for d in group:
        for vs in d.vectors:
            for v in vs:
                return int(v.shape[0])
    return None


def _start_bulk(conn: psycopg.Connection, t: Tables, todo: list[Document]) -> bool:
    """A fresh index about to receive many windows: drop its (empty) HNSW graph, to build it
    once at the end. Readers meanwhile scan exactly (slower, same results)."""
    if len(todo) < 2:
        return False
    n = conn.execute(sql.SQL("SELECT windows FROM {}").format(t.stats)).fetchone()
    if n is None or int(n[0]) > 0:
        return False
    # a rough estimate: the text's characters over a window's (about 4 characters a token)
    estimate = sum(len(d.page_content or "") for d in todo) / (4 * WINDOW_TOKENS)
    if estimate < BULK_WINDOWS:
        return False
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(t.name("windows_hnsw"))))
    return True


def _lock_doc(conn: psycopg.Connection, t: Tables, doc_id: str) -> str | None:
    """Lock ``doc_id`` for this transaction; its stored hash (None if not indexed)."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [_DOC_LOCK + t.prefix + doc_id]
    )
    row = conn.execute(
        sql.SQL("SELECT hash FROM {} WHERE doc_id = %s").format(t.docs), [doc_id]
    ).fetchone()
    return None if row is None else str(row[0])


def _take_old(
    conn: psycopg.Connection, t: Tables, doc_id: str, dimension: int
) -> tuple[Counter[str], int, int, int, np.ndarray]:
    """Delete ``doc_id``'s chunks (and windows); what they added to the statistics."""
    df: Counter[str] = Counter()
    chunks = terms = 0
    vsum = np.zeros(dimension, dtype=np.float64)
    rows = conn.execute(
        sql.SQL(
            "DELETE FROM {} WHERE doc_id = %s RETURNING terms, dl, vec,"
            " array_length(window_hashes, 1)"
        ).format(t.chunks),
        [doc_id],
    ).fetchall()
    windows = 0
    for ts, dl, vec, nw in rows:
        df.update(ts)
        chunks += 1
        terms += int(dl)
        windows += int(nw or 0)
        vsum += as_array(vec)
    return df, chunks, terms, windows, vsum


def _write_doc(
    conn: psycopg.Connection, t: Tables, d: PreparedDoc, *, dimension: int | None
) -> bool:
    """Replace one document in one transaction; False if another writer already wrote it."""
    dim = dimension or _stats_dimension(conn, t)
    with conn.transaction():
        if _lock_doc(conn, t, d.doc_id) == d.hash:
            return False
        stats = conn.execute(
            sql.SQL("SELECT chunks, terms, windows, vsum FROM {} FOR UPDATE").format(t.stats)
        ).fetchone()
        assert stats is not None  # created with the tables
        old_df, old_n, old_terms, old_w, old_vsum = _take_old(conn, t, d.doc_id, dim)
        ids = [
            int(r[0])
            for r in conn.execute(
                sql.SQL(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)"
                ),
                [t.name("chunks"), len(d.chunks)],
            )
        ]
        new_df: Counter[str] = Counter()
        new_terms = new_w = 0
        vsum = np.zeros(dim, dtype=np.float64)
        with conn.cursor().copy(
            sql.SQL(
                "COPY {} (id, chunk_id, doc_id, ord, text, metadata, file_id, corp_code,"
                " stock_code, corp_name, date, source, doc_type, dl, terms, tfs, vec,"
                " window_hashes) FROM STDIN"
            ).format(t.chunks)
        ) as copy:
            for cid, c, ws, vecs, terms in zip(
                ids, d.chunks, d.windows, d.vectors, d.terms, strict=True
            ):
                m = c.metadata
                names = sorted(terms)
                dl = sum(terms.values())
                chunk_vec = normalise(np.sum(np.stack(vecs), axis=0))[0]
                vsum += chunk_vec
                new_df.update(names)
                new_terms += dl
                new_w += len(ws)
                copy.write_row(
                    (
                        cid,
                        c.chunk_id,
                        c.doc_id,
                        int(m.get("chunk_index", 0)),
                        c.text.replace("\x00", "\ufffd"),
                        Jsonb(m, dumps=_json),
                        _text(m.get("file_id")),
                        _text(m.get("corp_code")),
                        _text(m.get("stock_code")),
                        _text(m.get("corp_name")),
                        _text(m.get("date")) or "",
                        _text(m.get("source")),
                        doc_type(m),
                        dl,
                        names,
                        [terms[n] for n in names],
                        chunk_vec,
                        [h for h, _ in ws],
                    )
                )
        with conn.cursor().copy(
            sql.SQL("COPY {} (chunk, hash, corp_code, date, vec) FROM STDIN").format(t.windows)
        ) as copy:
            for cid, c, ws, vecs in zip(ids, d.chunks, d.windows, d.vectors, strict=True):
                code, date = _text(c.metadata.get("corp_code")), _text(c.metadata.get("date")) or ""
                for (h, _), v in zip(ws, vecs, strict=True):
                    copy.write_row((cid, h, code, date, v))
        _apply_df(conn, t, new_df, old_df)
        conn.execute(
            sql.SQL(
                "UPDATE {} SET chunks = chunks + %s, terms = terms + %s, windows = windows + %s,"
                " vsum = %s"
            ).format(t.stats),
            [
                len(d.chunks) - old_n,
                new_terms - old_terms,
                new_w - old_w,
                (np.asarray(stats[3], dtype=np.float64) - old_vsum + vsum).tolist(),
            ],
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (doc_id, hash, corp_code, stock_code, corp_name, chunks)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (doc_id) DO UPDATE SET"
                " hash = EXCLUDED.hash, corp_code = EXCLUDED.corp_code,"
                " stock_code = EXCLUDED.stock_code, corp_name = EXCLUDED.corp_name,"
                " chunks = EXCLUDED.chunks, updated_at = now()"
            ).format(t.docs),
            [
                d.doc_id,
                d.hash,
                _text(d.metadata.get("corp_code")),
                _text(d.metadata.get("stock_code")),
                _text(d.metadata.get("corp_name")),
                len(d.chunks),
            ],
        )
    return True


def _remove_doc(conn: psycopg.Connection, t: Tables, doc_id: str) -> None:
    dim = _stats_dimension(conn, t)
    with conn.transaction():
        if _lock_doc(conn, t, doc_id) is None:
            return
        stats = conn.execute(sql.SQL("SELECT vsum FROM {} FOR UPDATE").format(t.stats)).fetchone()
        assert stats is not None
        old_df, n, terms, windows, vsum = _take_old(conn, t, doc_id, dim)
        _apply_df(conn, t, Counter(), old_df)
        conn.execute(
            sql.SQL(
                "UPDATE {} SET chunks = chunks - %s, terms = terms - %s, windows = windows - %s,"
                " vsum = %s"
            ).format(t.stats),
            [n, terms, windows, (np.asarray(stats[0], dtype=np.float64) - vsum).tolist()],
        )
        conn.execute(sql.SQL("DELETE FROM {} WHERE doc_id = %s").format(t.docs), [doc_id])


def _apply_df(conn: psycopg.Connection, t: Tables, new: Counter[str], old: Counter[str]) -> None:
    delta = Counter(new)
    delta.subtract(old)
    changed = sorted(k for k, v in delta.items() if v)
    if not changed:
        return
    conn.execute(
        sql.SQL(
            "INSERT INTO {0} (term, df) SELECT * FROM unnest(%s::text[], %s::bigint[])"
            " ON CONFLICT (term) DO UPDATE SET df = {0}.df + EXCLUDED.df"
        ).format(t.df),
        [changed, [delta[k] for k in changed]],
    )
    conn.execute(sql.SQL("DELETE FROM {} WHERE term = ANY(%s) AND df <= 0").format(t.df), [changed])


def _stats_dimension(conn: psycopg.Connection, t: Tables) -> int:
    row = conn.execute(sql.SQL("SELECT array_length(vsum, 1) FROM {}").format(t.stats)).fetchone()
    if row is None or row[0] is None:
        raise PgIndexError(f"index tables {t.prefix}_* are incomplete: rebuild with --rebuild")
    return int(row[0])


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str).replace("\\u0000", "\\ufffd")

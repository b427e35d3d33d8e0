"""Writing the pgvector index: incremental, one transaction per document.

``write_index(dsn, documents, embeddings)`` brings the index to exactly ``documents``: new and
edited documents (by content hash, as ``refresh.doc_hash``) are chunked as the FAISS path chunks
them, their windows' vectors come from the index itself (by content hash), else the embeddings
cache, else the embedder; then each document is replaced in one transaction (its chunks,
windows, term counts and postings, the BM25 document frequencies and the corpus statistics), so
a reader sees a document whole or not at all, a kill leaves whole documents only, and two
writers never lose each other's work: a per-document advisory lock orders writers of the same
document, and every commit serialises on the one statistics row, which it locks before the
document frequencies.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

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
from refgate.retrieval.filters import section_key
from refgate.retrieval.pgvector.connection import PgIndexError, as_array, connect
from refgate.retrieval.pgvector.filters import doc_type
from refgate.retrieval.pgvector.schema import (
    SCHEMA_VERSION,
    IndexSpec,
    RegistryRow,
    Tables,
    check_name,
    create_hnsw,
    create_tables,
    drop_tables,
    ensure_layout,
    registry_rows,
    resupersede,
    table_prefix,
    update_spec,
)
from refgate.retrieval.refresh import (
    Progress,
    UpdateResult,
    doc_hash,
    doc_id_of,
    document_hashes,
    embed_missing,
)
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
    metadata: dict[str, object]
    chunks: list[Chunk]
    windows: list[list[tuple[str, str]]]
    vectors: list[list[np.ndarray]] = field(default_factory=list)
    terms: list[Counter[str]] = field(default_factory=list)


def index_spec(
    emb: Embeddings, *, tokenizer: str | None, stem: Stemmer | None, window_tokens: int
) -> IndexSpec:
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
        "schema": SCHEMA_VERSION,
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
    check_name(name)
    docs = list(documents)
    hashes = document_hashes(docs)
    with connect(dsn) as conn:
        if rebuild:
            drop_tables(conn, name, embeddings_id(embeddings))
        w = _Writer(conn, name, embeddings, window_tokens, progress, on_document)
        w.read_state([d.page_content or "" for d in docs])
        todo = [d for d in docs if w.old.get(doc_id_of(d)) != hashes[doc_id_of(d)]]
        removed = sorted(set(w.old) - set(hashes))
        w.cache = EmbeddingCache(cache_path) if cache_path is not None else None
        try:
            w.write(todo)
            w.finish(removed)
        finally:
            if w.cache is not None:
                w.cache.close()
    return replace(
        w.result,
        documents=len(hashes),
        removed_documents=len(removed),
        unchanged_documents=len(docs) - len(todo),
        seconds=time.perf_counter() - t0,
    )


def _rebuild_hint(name: str, why: str) -> PgIndexError:
    return PgIndexError(
        f"index {name!r} {why}: rebuild it with refgate index --backend pgvector --rebuild"
    )


class _Writer:
    """One ``write_index`` run on one connection: the table set, what it holds, its tally."""

    def __init__(
        self,
        conn: psycopg.Connection,
        name: str,
        embeddings: Embeddings,
        window_tokens: int,
        progress: Progress | None,
        on_document: Callable[[str], None] | None,
    ) -> None:
        self.conn = conn
        self.name = name
        self.embeddings = embeddings
        self.emb_id = embeddings_id(embeddings)
        self.window_tokens = window_tokens
        self.say: Progress = progress or (lambda stage, done, total: None)
        self.on_document = on_document
        self.stem = stemmer()
        self.t = Tables(table_prefix(name, self.emb_id))
        self.known: RegistryRow | None = None
        self.ready = False
        self.old: dict[str, str] = {}
        self.tokenizer: str | None = None
        self.cache: EmbeddingCache | None = None
        #: The tally as the run goes: chunks embedded, reused and removed, documents added and
        #: changed, and the chunks the index holds at the end (``write_index`` adds the rest).
        self.result = UpdateResult()

    def read_state(self, texts: list[str]) -> None:
        """The table set's registry row and stored hashes; the tokeniser the documents need,
        checked against the one the index was built with."""
        rows = {r["prefix"]: r for r in registry_rows(self.conn, self.name)}
        self.known = rows.get(self.t.prefix)
        self.ready = self.known is not None
        self.tokenizer = corpus_tokenizer(texts)
        if self.known is None:
            return
        ensure_layout(self.conn, self.t, int(self.known["dimension"]))
        self.old = dict(
            self.conn.execute(sql.SQL("SELECT doc_id, hash FROM {}").format(self.t.docs)).fetchall()
        )
        stored = self.known["spec"].get("bm25", {})
        if bool(stored.get("stemmer")) != (self.stem is not None):
            how = "with" if stored.get("stemmer") else "without"
            raise _rebuild_hint(
                self.name, f"was tokenised {how} PyStemmer, which this installation does not match"
            )
        if self.old and stored.get("tokenizer") != self.tokenizer and self.tokenizer == KIWI:
            raise _rebuild_hint(
                self.name,
                "tokenises words, and these documents hold Korean text (tokenised to morphemes)",
            )
        if self.old:
            self.tokenizer = stored.get("tokenizer")

    def spec(self) -> IndexSpec:
        return index_spec(
            self.embeddings,
            tokenizer=self.tokenizer,
            stem=self.stem,
            window_tokens=self.window_tokens,
        )

    def write(self, todo: list[Document]) -> None:
        """Embed and write ``todo``, one transaction per document."""
        self.say("chunk", 0, len(todo))
        done = 0
        for group in _groups(todo, self.embeddings, self.window_tokens):
            _embed(
                self.conn, self.t if self.ready else None, group, self.embeddings, self.emb_id,
                self.cache, self.result, self.say,
            )  # fmt: skip
            if not self.prepare_tables(group, todo):
                continue
            for prepared in group:
                self.write_doc(prepared)
                done += 1
                self.say("chunk", done, len(todo))

    def prepare_tables(self, group: list[PreparedDoc], todo: list[Document]) -> bool:
        """The table set ready for ``group``'s vectors (created on the first vectors; a
        dimension other than the index's refused); False while no vector was seen."""
        dim = _dimension(group)
        if self.known is not None and dim is not None and dim != int(self.known["dimension"]):
            raise _rebuild_hint(
                self.name,
                f"holds {self.known['dimension']}-dimensional vectors of {self.emb_id}, "
                f"the embedder now gives {dim}",
            )
        if self.ready:
            if not self.old:
                update_spec(self.conn, self.t, self.spec())
            return True
        if dim is None:
            return False
        self.t = create_tables(
            self.conn,
            name=self.name,
            embeddings_id=self.emb_id,
            embeddings=embeddings_spec(self.embeddings),
            dimension=dim,
            spec=self.spec(),
        )
        self.ready = True
        _start_bulk(self.conn, self.t, todo)
        return True

    def write_doc(self, prepared: PreparedDoc) -> None:
        prepared.terms = chunk_terms([c.text for c in prepared.chunks], self.stem, self.tokenizer)
        removed = write_doc(self.conn, self.t, prepared, dimension=_dimension([prepared]))
        if removed is not None:
            self.result.removed += removed
            if prepared.doc_id in self.old:
                self.result.changed_documents += 1
            else:
                self.result.added_documents += 1
        if self.on_document is not None:
            self.on_document(prepared.doc_id)

    def finish(self, removed: list[str]) -> None:
        """Remove the documents gone, build the graph a bulk fill left out, count the chunks."""
        if not self.ready:
            return
        self.say("index", 0, 1)
        for doc_id in removed:
            self.result.removed += _remove_doc(self.conn, self.t, doc_id)
        # the graph, if a bulk fill (this one, or one killed before its end) left none
        create_hnsw(self.conn, self.t)
        total = self.conn.execute(sql.SQL("SELECT chunks FROM {}").format(self.t.stats)).fetchone()
        self.result.chunks = int(total[0]) if total else 0
        self.say("index", 1, 1)


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
    result: UpdateResult,
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
    have.update(embed_missing(embeddings, todo, cache, emb_id, say))
    embedded = set(todo)
    for d in group:
        d.vectors = [[normalise(have[h])[0] for h, _ in ws] for ws in d.windows]
        for ws in d.windows:
            if any(h in embedded for h, _ in ws):
                result.embedded += 1
            else:
                result.reused += 1


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


@dataclass
class _Share:
    """What some chunks add to the index's statistics (BM25 document frequencies, counts, the
    sum of chunk vectors) and the filing sections they belong to."""

    df: Counter[str]
    chunks: int
    terms: int
    windows: int
    vsum: np.ndarray
    sections: set[str] = field(default_factory=set)
    #: The chunks' ids (``chunk_id``), to count those an update removes.
    chunk_ids: set[str] = field(default_factory=set)

    @classmethod
    def none(cls, dimension: int) -> _Share:
        return cls(Counter(), 0, 0, 0, np.zeros(dimension, dtype=np.float64))


def _take_old(conn: psycopg.Connection, t: Tables, doc_id: str, dimension: int) -> _Share:
    """Delete ``doc_id``'s chunks (and windows); what they added to the statistics."""
    old = _Share.none(dimension)
    rows = conn.execute(
        sql.SQL(
            "DELETE FROM {} WHERE doc_id = %s RETURNING terms, dl, vec,"
            " array_length(window_hashes, 1), section_key, chunk_id, id"
        ).format(t.chunks),
        [doc_id],
    ).fetchall()
    _delete_postings(conn, t, [(int(r[6]), list(r[0])) for r in rows])
    for ts, dl, vec, nw, key, chunk_id, _ in rows:
        old.chunk_ids.add(str(chunk_id))
        old.df.update(ts)
        old.chunks += 1
        old.terms += int(dl)
        old.windows += int(nw or 0)
        old.vsum += as_array(vec)
        if key is not None:
            old.sections.add(str(key))
    return old


def _delete_postings(
    conn: psycopg.Connection, t: Tables, chunks: list[tuple[int, list[str]]]
) -> None:
    """Delete the postings of the chunks ``(id, terms)``, by their primary key."""
    pairs = [(term, cid) for cid, terms in chunks for term in terms]
    if not pairs:
        return
    conn.execute(
        sql.SQL(
            "DELETE FROM {} p USING unnest(%s::text[], %s::bigint[]) AS x(term, chunk)"
            " WHERE p.term = x.term AND p.chunk = x.chunk"
        ).format(t.postings),
        [[term for term, _ in pairs], [cid for _, cid in pairs]],
    )


def write_doc(
    conn: psycopg.Connection, t: Tables, d: PreparedDoc, *, dimension: int | None
) -> int | None:
    """Replace one document in one transaction: how many of its chunks are gone (their ids not
    among the new ones, as ``refresh`` counts them); None if another writer already wrote it."""
    dim = dimension or _stats_dimension(conn, t)
    with conn.transaction():
        if _lock_doc(conn, t, d.doc_id) == d.hash:
            return None
        vsum = _lock_stats(conn, t)
        old = _take_old(conn, t, d.doc_id, dim)
        ids = _chunk_ids(conn, t, len(d.chunks))
        new = _copy_chunks(conn, t, d, ids, dim)
        _copy_postings(conn, t, ids, d.terms)
        _copy_windows(conn, t, d, ids)
        _apply_df(conn, t, new.df, old.df)
        _update_stats(conn, t, new, old, vsum)
        _upsert_doc(conn, t, d)
        resupersede(conn, t, sorted(new.sections | old.sections))
    return len(old.chunk_ids - {c.chunk_id for c in d.chunks})


def _lock_stats(conn: psycopg.Connection, t: Tables) -> np.ndarray:
    """Lock the statistics row (every commit serialises on it); the stored vector sum."""
    row = conn.execute(sql.SQL("SELECT vsum FROM {} FOR UPDATE").format(t.stats)).fetchone()
    if row is None:
        raise PgIndexError(f"index tables {t.prefix}_* are incomplete: rebuild with --rebuild")
    return np.asarray(row[0], dtype=np.float64)


def _chunk_ids(conn: psycopg.Connection, t: Tables, n: int) -> list[int]:
    """``n`` fresh chunk ids (the windows refer to them)."""
    rows = conn.execute(
        sql.SQL("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)"),
        [t.name("chunks"), n],
    )
    return [int(r[0]) for r in rows]


def _chunk_row(
    cid: int, c: Chunk, ws: list[tuple[str, str]], terms: Counter[str], vec: np.ndarray
) -> tuple[object, ...]:
    """One row of the chunks table (``schema.TABLES_DDL`` and ``PERIOD_DDL``)."""
    m = c.metadata
    names = sorted(terms)
    return (
        cid, c.chunk_id, c.doc_id, int(m.get("chunk_index", 0)),
        c.text.replace("\x00", "\ufffd"), Jsonb(m, dumps=_json),
        _text(m.get("file_id")), _text(m.get("corp_code")), _text(m.get("stock_code")),
        _text(m.get("corp_name")), _text(m.get("date")) or "", _text(m.get("source")),
        doc_type(m), sum(terms.values()), names, [terms[n] for n in names], vec,
        [h for h, _ in ws], _text(m.get("rcept_no")), _text(m.get("bsns_year")),
        _text(m.get("quarter")), section_key(m),
    )  # fmt: skip


CHUNK_COLUMNS = (
    "id, chunk_id, doc_id, ord, text, metadata, file_id, corp_code, stock_code, corp_name, date,"
    " source, doc_type, dl, terms, tfs, vec, window_hashes, rcept_no, bsns_year, quarter,"
    " section_key"
)


def _copy_chunks(
    conn: psycopg.Connection, t: Tables, d: PreparedDoc, ids: list[int], dim: int
) -> _Share:
    """COPY ``d``'s chunks in; what they add to the statistics."""
    new = _Share.none(dim)
    with conn.cursor().copy(
        sql.SQL("COPY {} ({}) FROM STDIN").format(t.chunks, sql.SQL(CHUNK_COLUMNS))
    ) as copy:
        for cid, c, ws, vecs, terms in zip(
            ids, d.chunks, d.windows, d.vectors, d.terms, strict=True
        ):
            chunk_vec = normalise(np.sum(np.stack(vecs), axis=0))[0]
            new.vsum += chunk_vec
            new.df.update(terms.keys())
            new.chunks += 1
            new.terms += sum(terms.values())
            new.windows += len(ws)
            key = section_key(c.metadata)
            if key is not None:
                new.sections.add(key)
            copy.write_row(_chunk_row(cid, c, ws, terms, chunk_vec))
    return new


def _copy_postings(
    conn: psycopg.Connection, t: Tables, ids: list[int], terms: list[Counter[str]]
) -> None:
    """COPY the chunks' postings in: (term, chunk id, term count, chunk length)."""
    with conn.cursor().copy(
        sql.SQL("COPY {} (term, chunk, tf, dl) FROM STDIN").format(t.postings)
    ) as copy:
        for cid, counts in zip(ids, terms, strict=True):
            dl = sum(counts.values())
            for term, tf in counts.items():
                copy.write_row((term, cid, tf, dl))


def _copy_windows(conn: psycopg.Connection, t: Tables, d: PreparedDoc, ids: list[int]) -> None:
    with conn.cursor().copy(
        sql.SQL(
            "COPY {} (chunk, hash, corp_code, date, bsns_year, quarter, vec) FROM STDIN"
        ).format(t.windows)
    ) as copy:
        for cid, c, ws, vecs in zip(ids, d.chunks, d.windows, d.vectors, strict=True):
            m = c.metadata
            common = (
                _text(m.get("corp_code")), _text(m.get("date")) or "",
                _text(m.get("bsns_year")), _text(m.get("quarter")),
            )  # fmt: skip
            for (h, _), v in zip(ws, vecs, strict=True):
                copy.write_row((cid, h, *common, v))


def _update_stats(
    conn: psycopg.Connection, t: Tables, new: _Share, old: _Share, vsum: np.ndarray
) -> None:
    conn.execute(
        sql.SQL(
            "UPDATE {} SET chunks = chunks + %s, terms = terms + %s, windows = windows + %s,"
            " vsum = %s"
        ).format(t.stats),
        [
            new.chunks - old.chunks,
            new.terms - old.terms,
            new.windows - old.windows,
            (vsum - old.vsum + new.vsum).tolist(),
        ],
    )


def _upsert_doc(conn: psycopg.Connection, t: Tables, d: PreparedDoc) -> None:
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


def _remove_doc(conn: psycopg.Connection, t: Tables, doc_id: str) -> int:
    """Remove one document in one transaction; how many chunks went with it."""
    dim = _stats_dimension(conn, t)
    with conn.transaction():
        if _lock_doc(conn, t, doc_id) is None:
            return 0
        vsum = _lock_stats(conn, t)
        old = _take_old(conn, t, doc_id, dim)
        _apply_df(conn, t, Counter(), old.df)
        _update_stats(conn, t, _Share.none(dim), old, vsum)
        conn.execute(sql.SQL("DELETE FROM {} WHERE doc_id = %s").format(t.docs), [doc_id])
        resupersede(conn, t, sorted(old.sections))
    return old.chunks


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

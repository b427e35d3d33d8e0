"""``PgIndex``: the document index in PostgreSQL with pgvector, searched as ``DocumentIndex`` is.

The same ranking as the FAISS path, computed in the database:

- dense: the windows' vectors under an HNSW graph (cosine); a chunk scores its best window's
  cosine. Up to ``EXACT_MAX_WINDOWS`` reachable windows the scan is exact, as FAISS's flat
  index is below its HNSW threshold;
- lexical: BM25 as bm25s scores it (Lucene idf, k1 = 1.5, b = 0.75) from term counts stored
  per chunk (tokenised in Python as ``bm25.build_bm25`` tokenises: words, or Korean morphemes),
  document frequencies and corpus statistics kept by the writer; filtered, the chunks holding a
  query term are found through a GIN index; unfiltered, the postings table is read with
  max-score pruning (``pgvector/lexical.py``). PostgreSQL's own ``ts_rank`` has no inverse document
  frequency and no length normalisation against the corpus's mean, so it cannot give BM25's
  ranking;
- then ``fusion.py``'s convex combination (dense weight from the corpus's homogeneity, the
  query's length and the lists' decisiveness) and ``mmr.py``'s selection, the same code;
- filters (``pgvector/filters.py``) in the ``WHERE`` of both sides, before ranking.

A search runs in one read-only REPEATABLE READ transaction: it sees every document as one
snapshot, whole or absent, while writers commit.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import psycopg
from psycopg import sql
from typing_extensions import Unpack

from refgate.memory.embeddings import embeddings_id
from refgate.retrieval.bm25 import KIWI, query_tokens, stemmer
from refgate.retrieval.dense import normalise
from refgate.retrieval.embedder_choice import reads_corpus
from refgate.retrieval.filters import pin_question_period
from refgate.retrieval.fusion import DECISIVE_DEPTH
from refgate.retrieval.index_files import stored_embedder
from refgate.retrieval.mmr import DEFAULT_LAMBDA
from refgate.retrieval.pgvector.connection import PgIndexError, as_array, connect, describe
from refgate.retrieval.pgvector.filters import SqlFilter, sql_filter
from refgate.retrieval.pgvector.lexical import BM25_B, BM25_K1, QueryTerms, Scored, maxscore_top
from refgate.retrieval.pgvector.schema import (
    SCHEMA_VERSION,
    IndexSpec,
    RegistryRow,
    Tables,
    check_name,
    registry_rows,
    table_prefix,
)
from refgate.retrieval.ranking import (
    Candidates,
    ChunkView,
    Hit,
    IndexSearchOptions,
    SearchPlan,
    pick_hits,
)

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from refgate.config import Settings

#: Reachable windows up to which dense search is an exact scan, not the HNSW graph.
EXACT_MAX_WINDOWS = 50_000
#: The HNSW candidate list per query (pgvector's maximum is 1000), and how many tuples an
#: iterative scan may visit when a filter rejects most of them.
EF_SEARCH = 400
MAX_SCAN_TUPLES = 200_000


class StoredChunk(NamedTuple):
    """A chunk as the chunks table holds it (its vector: the mean of its windows, for MMR)."""

    chunk_id: str
    doc_id: str
    text: str
    vec: np.ndarray
    metadata: dict[str, object]


def rebuild_command(name: str) -> str:
    return f"refgate index --backend pgvector --rebuild (index {name!r})"


def _registered(rows: list[RegistryRow], name: str, wanted: str | None, dsn: str) -> RegistryRow:
    """The table set of embedder ``wanted`` (None: the only one); refused when absent."""
    if not rows:
        raise PgIndexError(
            f"no pgvector index {name!r} in {describe(dsn)} yet; build it with: "
            "refgate index --backend pgvector"
        )
    row = next((r for r in rows if r["embeddings_id"] == wanted), None)
    if row is None and wanted is None and len(rows) == 1:
        row = rows[0]
    if row is None:
        held = ", ".join(sorted(r["embeddings_id"] for r in rows))
        raise PgIndexError(
            f"pgvector index {name!r} was built with {held}, not {wanted}: rebuild it for "
            f"this embedder with {rebuild_command(name)}"
        )
    return row


class PgIndex:
    """The pgvector index ``name`` built with one embedder, opened for reading."""

    backend = "pgvector"

    def __init__(
        self,
        dsn: str,
        *,
        name: str = "documents",
        embeddings: Embeddings | None = None,
        settings: Settings | None = None,
        embeddings_id_wanted: str | None = None,
    ) -> None:
        """Open the index; ``embeddings`` / ``embeddings_id_wanted`` say which embedder's tables
        (default: the only table set of ``name``); another embedder's is refused."""
        self.dsn = dsn
        self.name = check_name(name)
        self.lambda_mult = DEFAULT_LAMBDA
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        conn = self._connection()
        wanted = embeddings_id(embeddings) if embeddings is not None else embeddings_id_wanted
        row = _registered(registry_rows(conn, name), name, wanted, dsn)
        self.tables = Tables(row["prefix"])
        if self.tables.prefix != table_prefix(name, row["embeddings_id"]):
            raise PgIndexError(f"pgvector index {name!r}: registry row does not match its tables")
        self.spec: IndexSpec = row["spec"]
        if int(self.spec.get("schema", 1)) < SCHEMA_VERSION:
            raise PgIndexError(
                f"pgvector index {name!r} was written by an earlier refgate (no report-period "
                "columns or no postings table): run refgate index --backend pgvector once to "
                "bring it up to date"
            )
        self.dimension = int(row["dimension"])
        self.embeddings_id = str(row["embeddings_id"])
        self.embeddings = (
            embeddings
            if embeddings is not None
            else stored_embedder(
                row["embeddings"], settings, index=f"pgvector index {name!r}", error=PgIndexError
            )
        )
        bm25 = self.spec.get("bm25", {})
        if bm25.get("stemmer") and stemmer() is None:
            raise PgIndexError(f"pgvector index {name!r} was stemmed with PyStemmer; install it")
        self._stem = stemmer() if bm25.get("stemmer") else None
        self._tokenizer: str | None = bm25.get("tokenizer")

    # ------------------------------------------------------------------ connection

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.dsn)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ what it holds

    def _stats(self, conn: psycopg.Connection) -> tuple[int, int, int, np.ndarray]:
        row = conn.execute(
            sql.SQL("SELECT chunks, terms, windows, vsum FROM {}").format(self.tables.stats)
        ).fetchone()
        if row is None:
            raise PgIndexError(
                f"pgvector index {self.name!r} is incomplete: {rebuild_command(self.name)}"
            )
        return int(row[0]), int(row[1]), int(row[2]), np.asarray(row[3], dtype=np.float64)

    def __len__(self) -> int:
        with self._lock:
            return self._stats(self._connection())[0]

    @property
    def doc_ids(self) -> list[str]:
        with self._lock:
            rows = self._connection().execute(
                sql.SQL("SELECT doc_id FROM {} ORDER BY doc_id").format(self.tables.docs)
            )
            return [str(r[0]) for r in rows]

    @property
    def manifest(self) -> dict[str, object]:
        """What a FAISS folder's manifest says, for callers that show it."""
        with self._lock:
            row = (
                self._connection()
                .execute(sql.SQL("SELECT max(updated_at) FROM {}").format(self.tables.docs))
                .fetchone()
            )
        updated = row[0].isoformat(timespec="seconds") if row and row[0] else None
        return {
            "backend": self.backend,
            "name": self.name,
            "embeddings_id": self.embeddings_id,
            "dimension": self.dimension,
            "updated_at": updated,
            **self.spec,
        }

    @staticmethod
    def homogeneity_of(chunks: int, vsum: np.ndarray) -> float | None:
        """``fusion.corpus_homogeneity`` over every chunk, from the sum of their unit vectors:
        the mean cosine of two different chunks = (|sum|^2 - n) / (n (n - 1))."""
        if chunks < 2:
            return None
        return float((float(vsum @ vsum) - chunks) / (chunks * (chunks - 1)))

    def embed_query(self, query: str) -> np.ndarray:
        vec = normalise(np.asarray(self.embeddings.embed_query(query), dtype=np.float32))
        if vec.shape[1] != self.dimension:
            raise PgIndexError(
                f"the embedder gives {vec.shape[1]} dimensions, pgvector index {self.name!r} holds "
                f"{self.dimension}: {rebuild_command(self.name)}"
            )
        return vec

    # ------------------------------------------------------------------ search

    def search(self, query: str, **options: Unpack[IndexSearchOptions]) -> list[Hit]:
        """The ``k`` best chunks for ``query``: ``DocumentIndex.search``'s arguments and
        ranking (the question's report period included)."""
        question_period = options.pop("question_period", True)
        as_of = options.pop("as_of", None)
        plan = SearchPlan.of(options, self.lambda_mult)
        if plan.k <= 0 or not query.strip():
            return []
        plan.check()
        qvec = self.embed_query(query)[0] if plan.mode in ("hybrid", "dense") else None
        with self._lock:
            conn = self._live_connection()
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                filters = plan.filters
                if question_period:
                    filters = self._with_question_period(conn, query, filters, as_of)
                return self._search(conn, query, qvec, sql_filter(filters), plan)

    def _live_connection(self) -> psycopg.Connection:
        """The connection, opened again if the server restarted or dropped it."""
        try:
            conn = self._connection()
            conn.execute("SELECT 1")
        except psycopg.OperationalError:
            self.close()
            conn = self._connection()
        return conn

    def _with_question_period(
        self,
        conn: psycopg.Connection,
        query: str,
        filters: Mapping[str, object] | None,
        today: date | None,
    ) -> Mapping[str, object] | None:
        """``filters`` plus the report period the question names (``pin_question_period``)."""

        def has_periods() -> bool:
            row = conn.execute(
                sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE bsns_year IS NOT NULL)").format(
                    self.tables.chunks
                )
            ).fetchone()
            return bool(row and row[0])

        def passes(pinned: Mapping[str, object]) -> bool:
            where = sql_filter(pinned)
            self._resolve_company(conn, where)
            return self._reachable(conn, where, 1) > 0

        return pin_question_period(query, filters, today, has_periods=has_periods, passes=passes)

    def _resolve_company(self, conn: psycopg.Connection, where: SqlFilter) -> None:
        """The corp_codes the filter's company names (by code, stock code or name)."""
        if where.company is None:
            return
        where.corp_codes = [
            str(r[0])
            for r in conn.execute(
                sql.SQL(
                    "SELECT DISTINCT corp_code FROM {} WHERE corp_code IS NOT NULL AND"
                    " (corp_code = ANY(%s) OR stock_code = ANY(%s) OR corp_name = ANY(%s))"
                ).format(self.tables.docs),
                [where.company] * 3,
            )
        ]

    def _search(
        self,
        conn: psycopg.Connection,
        query: str,
        qvec: np.ndarray | None,
        where: SqlFilter,
        plan: SearchPlan,
    ) -> list[Hit]:
        """The hits: both candidate lists, fused as ``plan`` says (``ranking.Candidates``), then
        picked (``ranking.pick_hits``)."""
        chunks, total_terms, windows, vsum = self._stats(conn)
        if chunks == 0:
            return []
        self._resolve_company(conn, where)
        reachable = self._reachable(conn, where, min(chunks, DECISIVE_DEPTH))
        if reachable == 0:
            return []
        avgdl = total_terms / chunks
        dense = [] if qvec is None else self._dense_top(conn, qvec, plan.pool, where, windows)
        terms = self._query_terms(conn, query, chunks) if plan.mode != "dense" else None
        lexical = [] if terms is None else self._bm25_top(conn, terms, where, avgdl, plan.pool)
        candidates = Candidates(dense, lexical)
        alpha = plan.alpha
        if plan.weighs_lists:
            # the reachable chunks' best BM25 scores, the rest 0 (as bm25s scores them)
            best = [s for _, s in lexical[:DECISIVE_DEPTH]]
            best += [0.0] * max(0, min(DECISIVE_DEPTH, reachable) - len(best))
            alpha = plan.dense_weight(
                query,
                self.homogeneity_of(chunks, vsum),
                dense,
                best,
                reads_corpus=reads_corpus(self.embeddings_id, self._tokenizer),
            )
        missing = _PgMissingScores(self, conn, qvec, terms, avgdl)
        ranked = candidates.rank(plan, alpha, missing)
        if not ranked:
            return []
        found = self._chunks(conn, [r for r, _ in ranked])
        return pick_hits(
            plan, ranked, candidates, lambda r: _view(found[r]), lambda r: found[r].vec
        )

    def _reachable(self, conn: psycopg.Connection, where: SqlFilter, cap: int) -> int:
        """How many chunks pass the filter, counted up to ``cap`` (superseded sections left out,
        unless the filter keeps them)."""
        if where.empty and where.keep_superseded:
            return cap
        cond, params = where.chunk_where("c")
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM (SELECT 1 FROM {} c WHERE {} LIMIT %s) x").format(
                self.tables.chunks, cond
            ),
            [*params, cap],
        ).fetchone()
        return int(row[0]) if row else 0

    def _dense_top(
        self, conn: psycopg.Connection, q: np.ndarray, n: int, where: SqlFilter, windows: int
    ) -> list[tuple[int, float]]:
        """The ``n`` best chunks by their best window's cosine, as ``(chunk id, cosine)``."""
        wcond, wparams, needs_chunk = where.window_where("w")
        if needs_chunk:
            ccond, cparams = where.chunk_where("c")
            wcond = sql.SQL("{} AND w.chunk IN (SELECT c.id FROM {} c WHERE {})").format(
                wcond, self.tables.chunks, ccond
            )
            wparams = [*wparams, *cparams]
        exact = windows <= EXACT_MAX_WINDOWS
        # "+ 0" keeps the planner off the HNSW graph: an exact scan, as FAISS's flat index
        # ties (the same text in two documents) in insertion order, as FAISS's flat index
        order = sql.SQL("(w.vec <=> %s) + 0, w.id") if exact else sql.SQL("w.vec <=> %s")
        if not exact:
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(EF_SEARCH)))
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(
                sql.SQL("SET LOCAL hnsw.max_scan_tuples = {}").format(sql.Literal(MAX_SCAN_TUPLES))
            )
        want = max(4 * n, n + 16)
        while True:
            rows = conn.execute(
                sql.SQL(
                    "SELECT w.chunk, w.vec, w.id FROM {} w WHERE {} ORDER BY {} LIMIT %s"
                ).format(self.tables.windows, wcond, order),
                [*wparams, q, want],
            ).fetchall()
            best: dict[int, float] = {}
            if rows:
                # the cosine as FAISS computes it: float32 inner product of unit vectors
                cos = np.stack([as_array(v) for _, v, _ in rows]) @ q.astype(np.float32)
                # best first; equal scores in insertion order (FAISS: in row order)
                for i in np.lexsort((np.array([int(r[2]) for r in rows]), -cos)):
                    best.setdefault(int(rows[i][0]), float(cos[i]))
            if len(best) >= n or len(rows) < want:
                return list(best.items())[:n]
            want *= 4

    def _dense_of(
        self, conn: psycopg.Connection, q: np.ndarray, ids: list[int]
    ) -> dict[int, float]:
        out: dict[int, float] = {}
        rows = conn.execute(
            sql.SQL("SELECT chunk, vec FROM {} WHERE chunk = ANY(%s)").format(self.tables.windows),
            [ids],
        )
        for chunk, vec in rows:
            cos = float(as_array(vec) @ q.astype(np.float32))
            out[int(chunk)] = max(cos, out.get(int(chunk), -np.inf))
        return out

    def _query_terms(self, conn: psycopg.Connection, query: str, chunks: int) -> QueryTerms | None:
        """The query's terms held by the index, each with its count in the query and its idf."""
        tokens = query_tokens(query, self._stem, self._tokenizer)
        if self._tokenizer == KIWI:
            tokens = list(dict.fromkeys(tokens))
        counts: dict[str, int] = {}
        for tok in tokens:
            counts[tok] = counts.get(tok, 0) + 1
        if not counts:
            return None
        df: dict[str, int] = dict(
            conn.execute(
                sql.SQL("SELECT term, df FROM {} WHERE term = ANY(%s)").format(self.tables.df),
                [list(counts)],
            ).fetchall()
        )
        held = [t for t in counts if df.get(t, 0) > 0]
        if not held:
            return None
        idf = [math.log(1 + (chunks - df[t] + 0.5) / (df[t] + 0.5)) for t in held]
        return held, [counts[t] for t in held], idf

    def _bm25_top(
        self,
        conn: psycopg.Connection,
        terms: QueryTerms,
        where: SqlFilter,
        avgdl: float,
        n: int,
    ) -> Scored:
        """The ``n`` best BM25 scores, exactly. Unfiltered, from the postings by max-score
        pruning (``lexical.maxscore_top``); filtered, or when pruning proves nothing, from the
        filtered chunks holding a term (the filter's btrees and the GIN on terms)."""
        if where.empty:

            def complete(ids: list[int]) -> Scored:
                return self._bm25(conn, terms, where, avgdl, top=len(ids), ids=ids)

            top = maxscore_top(conn, self.tables.postings, terms, avgdl, n, complete)
            if top is not None:
                return top
        return self._bm25(conn, terms, where, avgdl, top=n)

    def _bm25(
        self,
        conn: psycopg.Connection,
        terms: QueryTerms,
        where: SqlFilter,
        avgdl: float,
        *,
        top: int | None = None,
        ids: list[int] | None = None,
    ) -> Scored:
        """BM25 scores (bm25s's Lucene variant) of the filtered chunks holding a query term:
        the ``top`` best, or those of chunks ``ids``; best first."""
        names, qtf, idf = terms
        cond, params = where.chunk_where("c")
        if ids is not None:
            cond = sql.SQL("{} AND c.id = ANY(%s)").format(cond)
            params = [*params, ids]
        limit = sql.SQL("LIMIT %s") if top is not None else sql.SQL("")
        rows = conn.execute(
            sql.SQL(
                "WITH q(term, qtf, idf) AS (SELECT * FROM unnest(%s::text[], %s::int[],"
                " %s::float8[]))"
                " SELECT c.id, sum(q.qtf * q.idf * u.tf"
                " / (u.tf + %s * ((1 - %s) + %s * c.dl / %s))) AS s"
                " FROM {} c CROSS JOIN LATERAL unnest(c.terms, c.tfs) AS u(term, tf)"
                " JOIN q ON q.term = u.term"
                " WHERE c.terms && %s::text[] AND {}"
                " GROUP BY c.id ORDER BY s DESC, c.id {}"
            ).format(self.tables.chunks, cond, limit),
            [
                names,
                qtf,
                idf,
                BM25_K1,
                BM25_B,
                BM25_B,
                max(avgdl, 1e-9),
                names,
                *params,
                *([top] if top is not None else []),
            ],  # fmt: skip
        ).fetchall()
        return [(int(r), float(s)) for r, s in rows if s > 0]

    def _chunks(self, conn: psycopg.Connection, ids: list[int]) -> dict[int, StoredChunk]:
        rows = conn.execute(
            sql.SQL(
                "SELECT id, chunk_id, doc_id, text, vec, metadata FROM {} WHERE id = ANY(%s)"
            ).format(self.tables.chunks),
            [ids],
        )
        return {
            int(i): StoredChunk(str(cid), str(did), str(text), as_array(vec), dict(meta))
            for i, cid, did, text, vec, meta in rows
        }


def _view(chunk: StoredChunk) -> ChunkView:
    return chunk.doc_id, chunk.chunk_id, chunk.text, dict(chunk.metadata)


class _PgMissingScores:
    """The scores of fusion candidates only one list found, read from the database
    (``ranking.MissingScores``): the cosine of BM25-only ones, the BM25 score (possibly 0) of
    dense-only ones, superseded sections included (a candidate is scored, not filtered)."""

    def __init__(
        self,
        index: PgIndex,
        conn: psycopg.Connection,
        qvec: np.ndarray | None,
        terms: QueryTerms | None,
        avgdl: float,
    ) -> None:
        self.index, self.conn, self.qvec, self.terms, self.avgdl = (
            index, conn, qvec, terms, avgdl
        )  # fmt: skip

    def dense_of(self, rows: list[int]) -> dict[int, float]:
        if self.qvec is None:
            return {}
        return self.index._dense_of(self.conn, self.qvec, rows)

    def bm25_of(self, rows: list[int]) -> dict[int, float]:
        if self.terms is None:
            return {}
        keep_all = SqlFilter(keep_superseded=True)
        return dict(self.index._bm25(self.conn, self.terms, keep_all, self.avgdl, ids=rows))

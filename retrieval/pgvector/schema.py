"""The pgvector index's tables: one set per (index name, embedder), listed in a registry.

For an index ``name`` and an embedder ``E`` the tables are ``<prefix>_docs``, ``_chunks``,
``_windows``, ``_postings``, ``_df`` and ``_stats`` (``prefix`` derived from both, at most 50
characters)::

    docs     doc_id, content hash, company keys: one row per indexed document
    chunks   one row per chunk: text, metadata (jsonb), the filter columns (company keys, date,
             source, doc_id, file_id, rcept_no, report period, superseded), its BM25 terms
             and term counts (GIN on terms), its length in terms, its mean vector (MMR's
             redundancy term)
    windows  one row per window (the dense side): the chunk, corp_code and date, report
             period, superseded (the common filters, btree), vector (HNSW, cosine)
    postings term, chunk id, term count, chunk length: BM25's postings, narrow (primary key
             (term, chunk) including the counts, read by index-only scans), so unfiltered
             BM25 scores a term's postings without reading the wide chunk rows
    df       term -> document frequency (the BM25 idf)
    stats    one row: chunks, total terms, windows, the sum of chunk vectors (the corpus's
             homogeneity: fusion.corpus_homogeneity over every chunk, kept up to date)

``refgate_index_registry`` holds per table set the embedder's spec and id, the dimension, and
how chunks were cut and tokenised (what ``manifest.json`` holds for a FAISS folder).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from psycopg import sql

from refgate.memory.embeddings import EmbeddingsSpec
from refgate.retrieval.pgvector.connection import PgIndexError

if TYPE_CHECKING:
    import psycopg

REGISTRY = "refgate_index_registry"
#: HNSW graph parameters (pgvector's defaults are m=16, ef_construction=64).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
_SCHEMA_LOCK = 0x7265_6667  # "refg": serialises creating and dropping table sets


@dataclass(frozen=True)
class Tables:
    """The table names of one index (name, embedder)."""

    prefix: str

    def __getattr__(self, part: str) -> sql.Identifier:
        if part.startswith("_"):
            raise AttributeError(part)
        return sql.Identifier(f"{self.prefix}_{part}")

    def name(self, part: str) -> str:
        return f"{self.prefix}_{part}"


def table_prefix(name: str, embeddings_id: str) -> str:
    """``rgx_<name>_<embedder>_<hash>``: readable, unique per pair, a valid identifier."""
    slug = re.sub(r"[^a-z0-9]+", "_", f"{name}_{embeddings_id}".lower()).strip("_")[:32]
    digest = hashlib.sha256(f"{name}\0{embeddings_id}".encode()).hexdigest()[:10]
    return f"rgx_{slug}_{digest}"


def check_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", name or ""):
        raise PgIndexError(
            f"index name {name!r}: use 1-40 letters, digits, '_' or '-' ([index] name)"
        )
    return name


def ensure_registry(conn: psycopg.Connection) -> None:
    conn.execute(
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (prefix text PRIMARY KEY, name text NOT NULL,"
            " embeddings_id text NOT NULL, embeddings jsonb NOT NULL, dimension int NOT NULL,"
            " spec jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
        ).format(sql.Identifier(REGISTRY))
    )


class Bm25Spec(TypedDict, total=False):
    """How the chunks' BM25 terms were made (``bm25.build_bm25``'s tokenisation)."""

    stemmer: str | None
    tokenizer: str | None


class IndexSpec(TypedDict, total=False):
    """What the registry records of how chunks were cut, windowed and tokenised."""

    chunking: dict[str, str | int]
    dense: dict[str, str | int]
    bm25: Bm25Spec
    embeddings_id: str
    #: The tables' layout (``SCHEMA_VERSION``); 1 when absent (no report-period columns), 2
    #: without the postings table.
    schema: int


class RegistryRow(TypedDict):
    """One registered table set."""

    prefix: str
    embeddings_id: str
    embeddings: EmbeddingsSpec
    dimension: int
    spec: IndexSpec


def registry_rows(conn: psycopg.Connection, name: str) -> list[RegistryRow]:
    """The registered table sets of index ``name`` (none if the registry does not exist)."""
    exists = conn.execute("SELECT to_regclass(%s)", [REGISTRY]).fetchone()
    if exists is None or exists[0] is None:
        return []
    rows = conn.execute(
        sql.SQL(
            "SELECT prefix, embeddings_id, embeddings, dimension, spec FROM {} WHERE name = %s"
        ).format(sql.Identifier(REGISTRY)),
        [name],
    ).fetchall()
    return [
        RegistryRow(prefix=p, embeddings_id=e, embeddings=s, dimension=int(d), spec=spec)
        for p, e, s, d, spec in rows
    ]


#: The tables of one set and their plain indexes (HNSW: ``create_hnsw``). ``section_key`` is
#: ``filters.section_key`` (a periodic filing's section), ``superseded`` whether a later filing
#: carries that section again (kept by the writer, ``writer.resupersede``).
TABLES_DDL = (
    "CREATE TABLE {docs} (doc_id text PRIMARY KEY, hash text NOT NULL,"
    " corp_code text, stock_code text, corp_name text, chunks int NOT NULL,"
    " updated_at timestamptz NOT NULL DEFAULT now())",
    "CREATE TABLE {chunks} (id bigserial PRIMARY KEY, chunk_id text NOT NULL UNIQUE,"
    " doc_id text NOT NULL, ord int NOT NULL, text text NOT NULL,"
    " metadata jsonb NOT NULL, file_id text, corp_code text, stock_code text,"
    " corp_name text, date text NOT NULL DEFAULT '', source text, doc_type text,"
    " dl int NOT NULL, terms text[] NOT NULL, tfs int[] NOT NULL, vec {vec} NOT NULL,"
    " window_hashes text[] NOT NULL)",
    "CREATE INDEX ON {chunks} (doc_id)",
    "CREATE INDEX ON {chunks} (corp_code, date)",
    "CREATE INDEX ON {chunks} (date)",
    "CREATE INDEX ON {chunks} (source)",
    "CREATE INDEX ON {chunks} (doc_type)",
    "CREATE INDEX ON {chunks} USING gin (terms)",
    "CREATE TABLE {windows} (id bigserial PRIMARY KEY,"
    " chunk bigint NOT NULL REFERENCES {chunks} (id) ON DELETE CASCADE,"
    " hash text NOT NULL, corp_code text, date text NOT NULL DEFAULT '',"
    " vec {vec} NOT NULL)",
    "CREATE INDEX ON {windows} (chunk)",
    "CREATE INDEX ON {windows} (hash)",
    "CREATE INDEX ON {windows} (corp_code, date)",
    "CREATE TABLE {df} (term text PRIMARY KEY, df bigint NOT NULL)",
    "CREATE TABLE {stats} (one boolean PRIMARY KEY DEFAULT true CHECK (one),"
    " chunks bigint NOT NULL, terms bigint NOT NULL, windows bigint NOT NULL,"
    " vsum float8[] NOT NULL)",
)
#: Layout 2: the report period and the superseded flag as columns (added to a layout-1 set).
PERIOD_DDL = (
    "ALTER TABLE {chunks} ADD COLUMN IF NOT EXISTS rcept_no text,"
    " ADD COLUMN IF NOT EXISTS bsns_year text, ADD COLUMN IF NOT EXISTS quarter text,"
    " ADD COLUMN IF NOT EXISTS section_key text,"
    " ADD COLUMN IF NOT EXISTS superseded boolean NOT NULL DEFAULT false",
    "ALTER TABLE {windows} ADD COLUMN IF NOT EXISTS bsns_year text,"
    " ADD COLUMN IF NOT EXISTS quarter text,"
    " ADD COLUMN IF NOT EXISTS superseded boolean NOT NULL DEFAULT false",
    "CREATE INDEX IF NOT EXISTS {chunks_period} ON {chunks} (bsns_year, quarter)",
    "CREATE INDEX IF NOT EXISTS {chunks_rcept} ON {chunks} (rcept_no)",
    "CREATE INDEX IF NOT EXISTS {chunks_section} ON {chunks} (section_key, rcept_no)"
    " WHERE section_key IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS {windows_period} ON {windows} (bsns_year, quarter)",
)
#: A layout-1 set's new columns filled from the chunks' metadata (``filters.section_key``).
PERIOD_BACKFILL = (
    "UPDATE {chunks} SET rcept_no = nullif(metadata->>'rcept_no', ''),"
    " bsns_year = metadata->>'bsns_year', quarter = metadata->>'quarter',"
    " section_key = CASE WHEN coalesce(metadata->>'rcept_no', '') <> ''"
    " AND metadata->>'bsns_year' IS NOT NULL THEN concat_ws(chr(31),"
    " coalesce(metadata->>'corp_code', ''), metadata->>'bsns_year',"
    " coalesce(metadata->>'quarter', ''), coalesce(metadata->>'report_kind', ''),"
    " coalesce(metadata->>'section_title', '')) END",
    "UPDATE {windows} w SET bsns_year = c.bsns_year, quarter = c.quarter FROM {chunks} c"
    " WHERE w.chunk = c.id",
)
#: Layout 3: the postings table, its primary key added after a backfill (faster in bulk).
POSTINGS_DDL = (
    "CREATE TABLE IF NOT EXISTS {postings} (term text NOT NULL, chunk bigint NOT NULL,"
    " tf int NOT NULL, dl int NOT NULL)",
)
POSTINGS_KEY = (
    "ALTER TABLE {postings} ADD CONSTRAINT {postings_pkey} PRIMARY KEY (term, chunk)"
    " INCLUDE (tf, dl)",
)
#: A layout-2 set's postings, from the chunks' term arrays.
POSTINGS_BACKFILL = (
    "INSERT INTO {postings} (term, chunk, tf, dl) SELECT u.term, c.id, u.tf, c.dl FROM {chunks} c"
    " CROSS JOIN LATERAL unnest(c.terms, c.tfs) AS u(term, tf)",
)
#: The current table layout.
SCHEMA_VERSION = 3
#: The parts of a table set, in the order they are dropped.
PARTS = ("windows", "postings", "chunks", "docs", "df", "stats")


def _ddl(conn: psycopg.Connection, t: Tables, statements: tuple[str, ...], dim: int) -> None:
    names = ("chunks_period", "chunks_rcept", "chunks_section", "windows_period", "postings_pkey")
    parts = {p: getattr(t, p) for p in PARTS}
    parts.update({n: sql.Identifier(t.name(n)) for n in names})
    vec = sql.SQL(f"vector({int(dim)})")
    for ddl in statements:
        conn.execute(sql.SQL(ddl).format(vec=vec, **parts))


def _known_dimension(conn: psycopg.Connection, t: Tables) -> int | None:
    row = conn.execute(
        sql.SQL("SELECT dimension FROM {} WHERE prefix = %s").format(sql.Identifier(REGISTRY)),
        [t.prefix],
    ).fetchone()
    return None if row is None else int(row[0])


def _register(
    conn: psycopg.Connection,
    t: Tables,
    *,
    name: str,
    embeddings_id: str,
    embeddings: EmbeddingsSpec,
    dimension: int,
    spec: IndexSpec,
) -> None:
    conn.execute(
        sql.SQL("INSERT INTO {} VALUES (true, 0, 0, 0, %s)").format(t.stats),
        [[0.0] * int(dimension)],
    )
    conn.execute(
        sql.SQL(
            "INSERT INTO {} (prefix, name, embeddings_id, embeddings, dimension, spec)"
            " VALUES (%s, %s, %s, %s, %s, %s)"
        ).format(sql.Identifier(REGISTRY)),
        [t.prefix, name, embeddings_id, json.dumps(embeddings), dimension, json.dumps(spec)],
    )


def create_tables(
    conn: psycopg.Connection,
    *,
    name: str,
    embeddings_id: str,
    embeddings: EmbeddingsSpec,
    dimension: int,
    spec: IndexSpec,
) -> Tables:
    """Create (if missing) and register the table set of (``name``, embedder), in one
    transaction under a lock so two writers starting at once create it once; a set of an
    earlier layout gets the current one (``upgrade_tables``)."""
    t = Tables(table_prefix(name, embeddings_id))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        ensure_registry(conn)
        known = _known_dimension(conn, t)
        if known is not None and known != dimension:
            raise PgIndexError(
                f"index {name!r} holds {known}-dimensional vectors of {embeddings_id}, "
                f"this embedder gives {dimension}: rebuild it with "
                "refgate index --backend pgvector --rebuild"
            )
        if known is not None:
            upgrade_tables(conn, t, dimension)
            return t
        _ddl(conn, t, TABLES_DDL + PERIOD_DDL + POSTINGS_DDL + POSTINGS_KEY, dimension)
        create_hnsw(conn, t)
        _register(
            conn,
            t,
            name=name,
            embeddings_id=embeddings_id,
            embeddings=embeddings,
            dimension=dimension,
            spec=spec,
        )
    return t


def ensure_layout(conn: psycopg.Connection, t: Tables, dimension: int) -> None:
    """``upgrade_tables`` in its own transaction, under the schema lock."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        upgrade_tables(conn, t, dimension)


def upgrade_tables(conn: psycopg.Connection, t: Tables, dimension: int) -> None:
    """Bring a table set of an earlier layout to ``SCHEMA_VERSION`` (inside the caller's
    transaction): from layout 1 the report-period and superseded columns, filled from the
    chunks' metadata; from layout 2 the postings table, filled from the chunks' terms."""
    row = conn.execute(
        sql.SQL("SELECT spec FROM {} WHERE prefix = %s").format(sql.Identifier(REGISTRY)),
        [t.prefix],
    ).fetchone()
    spec: IndexSpec = row[0] if row else {}
    layout = int(spec.get("schema", 1))
    if layout >= SCHEMA_VERSION:
        return
    if layout < 2:
        _add_periods(conn, t, dimension)
    # a partial table (a set half-upgraded by hand) is made again whole
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(t.postings))
    _ddl(conn, t, POSTINGS_DDL + POSTINGS_BACKFILL + POSTINGS_KEY, dimension)
    conn.execute(sql.SQL("ANALYZE {}").format(t.postings))
    update_spec(conn, t, {**spec, "schema": SCHEMA_VERSION})


def _add_periods(conn: psycopg.Connection, t: Tables, dimension: int) -> None:
    """Layout 1 to 2: the report-period and superseded columns, filled and flagged."""
    _ddl(conn, t, PERIOD_DDL + PERIOD_BACKFILL, dimension)
    keys = conn.execute(
        sql.SQL("SELECT DISTINCT section_key FROM {} WHERE section_key IS NOT NULL").format(
            t.chunks
        )
    ).fetchall()
    resupersede(conn, t, [str(k) for (k,) in keys])


def resupersede(conn: psycopg.Connection, t: Tables, keys: list[str]) -> None:
    """Set the superseded flag of every chunk (and its windows) of the sections ``keys``: a
    chunk is superseded when a filing with a later receipt number carries its section."""
    if not keys:
        return
    changed = conn.execute(
        sql.SQL(
            'UPDATE {0} c SET superseded = s.later FROM (SELECT id, rcept_no COLLATE "C"'
            ' < max(rcept_no COLLATE "C") OVER (PARTITION BY section_key) AS later FROM {0}'
            " WHERE section_key = ANY(%s)) s WHERE c.id = s.id AND c.superseded <> s.later"
            " RETURNING c.id, c.superseded"
        ).format(t.chunks),
        [keys],
    ).fetchall()
    if changed:
        conn.execute(
            sql.SQL(
                "UPDATE {} w SET superseded = x.later FROM unnest(%s::bigint[], %s::boolean[])"
                " AS x(chunk, later) WHERE w.chunk = x.chunk"
            ).format(t.windows),
            [[int(i) for i, _ in changed], [bool(v) for _, v in changed]],
        )


def create_hnsw(conn: psycopg.Connection, t: Tables) -> None:
    conn.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (vec vector_cosine_ops)"
            " WITH (m = {}, ef_construction = {})"
        ).format(
            sql.Identifier(t.name("windows_hnsw")),
            t.windows,
            sql.Literal(HNSW_M),
            sql.Literal(HNSW_EF_CONSTRUCTION),
        )
    )


def update_spec(conn: psycopg.Connection, t: Tables, spec: IndexSpec) -> None:
    conn.execute(
        sql.SQL("UPDATE {} SET spec = %s WHERE prefix = %s").format(sql.Identifier(REGISTRY)),
        [json.dumps(spec), t.prefix],
    )


def drop_tables(conn: psycopg.Connection, name: str, embeddings_id: str) -> None:
    """Drop the table set of (``name``, embedder) and its registry row (``--rebuild``)."""
    t = Tables(table_prefix(name, embeddings_id))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        ensure_registry(conn)
        for part in PARTS:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(getattr(t, part)))
        conn.execute(
            sql.SQL("DELETE FROM {} WHERE prefix = %s").format(sql.Identifier(REGISTRY)),
            [t.prefix],
        )

"""The pgvector index's tables: one set per (index name, embedder), listed in a registry.

For an index ``name`` and an embedder ``E`` the tables are ``<prefix>_docs``, ``_chunks``,
``_windows``, ``_df`` and ``_stats`` (``prefix`` derived from both, at most 50 characters)::

    docs     doc_id, content hash, company keys: one row per indexed document
    chunks   one row per chunk: text, metadata (jsonb), the filter columns (company keys, date,
             source, doc_id, file_id), its BM25 terms and term counts (GIN on terms), its
             length in terms, its mean vector (MMR's redundancy term)
    windows  one row per window (the dense side): the chunk, corp_code and date (the common
             filters, btree), vector (HNSW, cosine)
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
from typing import TYPE_CHECKING, Any

from psycopg import sql

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


def registry_rows(conn: psycopg.Connection, name: str) -> list[dict[str, Any]]:
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
        {"prefix": p, "embeddings_id": e, "embeddings": s, "dimension": d, "spec": spec}
        for p, e, s, d, spec in rows
    ]


def create_tables(
    conn: psycopg.Connection,
    *,
    name: str,
    embeddings_id: str,
    embeddings: dict[str, Any],
    dimension: int,
    spec: dict[str, Any],
) -> Tables:
    """Create (if missing) and register the table set of (``name``, embedder), in one
    transaction under a lock so two writers starting at once create it once."""
    t = Tables(table_prefix(name, embeddings_id))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        ensure_registry(conn)
        known = conn.execute(
            sql.SQL("SELECT dimension FROM {} WHERE prefix = %s").format(sql.Identifier(REGISTRY)),
            [t.prefix],
        ).fetchone()
        if known is not None:
            if int(known[0]) != dimension:
                raise PgIndexError(
                    f"index {name!r} holds {known[0]}-dimensional vectors of {embeddings_id}, "
                    f"this embedder gives {dimension}: rebuild it with "
                    "refgate index --backend pgvector --rebuild"
                )
            return t
        vec = sql.SQL(f"vector({int(dimension)})")
        for ddl in (
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
        ):
            conn.execute(
                sql.SQL(ddl).format(
                    docs=t.docs, chunks=t.chunks, windows=t.windows, df=t.df, stats=t.stats, vec=vec
                )
            )
        create_hnsw(conn, t)
        conn.execute(
            sql.SQL("INSERT INTO {} VALUES (true, 0, 0, 0, %s)").format(t.stats),
            [[0.0] * int(dimension)],
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (prefix, name, embeddings_id, embeddings, dimension, spec)"
                " VALUES (%s, %s, %s, %s, %s, %s)"
            ).format(sql.Identifier(REGISTRY)),
            [
                t.prefix,
                name,
                embeddings_id,
                json.dumps(embeddings),
                dimension,
                json.dumps(spec),
            ],
        )
    return t


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


def update_spec(conn: psycopg.Connection, t: Tables, spec: dict[str, Any]) -> None:
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
        for part in ("windows", "chunks", "docs", "df", "stats"):
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(getattr(t, part)))
        conn.execute(
            sql.SQL("DELETE FROM {} WHERE prefix = %s").format(sql.Identifier(REGISTRY)),
            [t.prefix],
        )

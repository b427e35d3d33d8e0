"""Checks of a pgvector index's tables for the tests: every document whole, statistics true."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from psycopg import sql

from refgate.retrieval.pgvector.schema import PARTS, Tables, registry_rows

#: The PostgreSQL server with pgvector the tests use (``scripts/start_postgres.sh --pgvector``;
#: ``scripts/test.sh`` starts one); "" when none is given.
PGVECTOR_URL = os.environ.get("REFGATE_TEST_PGVECTOR_URL", "")
#: Skips a test when no server with pgvector is given.
requires_pgvector = pytest.mark.skipif(
    not PGVECTOR_URL,
    reason="REFGATE_TEST_PGVECTOR_URL is unset (scripts/start_postgres.sh --pgvector)",
)


def _tables(conn: Any, name: str) -> list[Tables]:
    return [Tables(r["prefix"]) for r in registry_rows(conn, name)]


def index_counts(conn: Any, name: str) -> dict[str, tuple[int, ...]]:
    """Per table set of index ``name``: documents, chunks, windows, df rows."""
    out = {}
    for t in _tables(conn, name):
        out[t.prefix] = tuple(
            int(
                conn.execute(sql.SQL("SELECT count(*) FROM {}").format(getattr(t, p))).fetchone()[0]
            )
            for p in ("docs", "chunks", "windows", "df")
        )
    return out


def index_invariants(conn: Any, name: str) -> list[str]:
    """What is wrong with index ``name`` (empty: nothing). Read in one snapshot: every indexed
    document has exactly its chunks, each chunk its windows, no chunk lacks its document, and
    the statistics, postings and document frequencies equal what the chunks say."""
    problems: list[str] = []
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        for t in _tables(conn, name):

            def q(text: str, t: Tables = t) -> list[Any]:
                parts = {p: getattr(t, p) for p in PARTS}
                return conn.execute(sql.SQL(text).format(**parts)).fetchall()

            for doc_id, want, have in q(
                "SELECT d.doc_id, d.chunks, count(c.id) FROM {docs} d LEFT JOIN {chunks} c"
                " ON c.doc_id = d.doc_id GROUP BY d.doc_id, d.chunks HAVING count(c.id) <> d.chunks"
            ):
                problems.append(f"{doc_id}: {have} of {want} chunks")
            for (doc_id,) in q(
                "SELECT DISTINCT c.doc_id FROM {chunks} c LEFT JOIN {docs} d USING (doc_id)"
                " WHERE d.doc_id IS NULL"
            ):
                problems.append(f"{doc_id}: chunks without their document")
            for chunk_id, want, have in q(
                "SELECT c.chunk_id, array_length(c.window_hashes, 1), count(w.id) FROM {chunks} c"
                " LEFT JOIN {windows} w ON w.chunk = c.id GROUP BY c.id"
                " HAVING count(w.id) <> array_length(c.window_hashes, 1)"
            ):
                problems.append(f"{chunk_id}: {have} of {want} windows")
            ((n, terms, windows),) = q("SELECT chunks, terms, windows FROM {stats}")
            ((cn, cterms),) = q("SELECT count(*), coalesce(sum(dl), 0) FROM {chunks}")
            ((wn,),) = q("SELECT count(*) FROM {windows}")
            if (n, terms, windows) != (cn, cterms, wn):
                problems.append(f"stats {(n, terms, windows)} != chunks {(cn, cterms, wn)}")
            ((stray, lost),) = q(
                "WITH p AS (SELECT term, chunk, tf, dl FROM {postings}), c AS (SELECT u.term,"
                " c.id, u.tf, c.dl FROM {chunks} c, unnest(c.terms, c.tfs) AS u(term, tf))"
                " SELECT (SELECT count(*) FROM (TABLE p EXCEPT ALL TABLE c) x),"
                " (SELECT count(*) FROM (TABLE c EXCEPT ALL TABLE p) y)"
            )
            if stray or lost:
                problems.append(f"postings: {stray} not in the chunks, {lost} missing")
            df = Counter(dict(q("SELECT term, df FROM {df}")))
            true_df: Counter[str] = Counter()
            for (ts,) in q("SELECT terms FROM {chunks}"):
                true_df.update(ts)
            if df != true_df:
                problems.append(
                    f"document frequencies differ on {len(set(df.items()) ^ set(true_df.items()))} terms"
                )
    return problems

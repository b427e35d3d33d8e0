"""Reaching the pgvector index's database: the DSN (never a literal password in refgate.toml),
the connection, and the checks that it can hold the index (the ``vector`` extension).

Every failure is a ``PgIndexError`` whose message names what to do; none writes anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from refgate.retrieval.index_files import DocumentIndexError

if TYPE_CHECKING:
    import psycopg

#: ``dsn = "env:NAME"`` in ``[index]``: the DSN is in the environment variable NAME.
ENV_PREFIX = "env:"
#: The environment variable ``refgate index --backend pgvector`` reads when no DSN is configured.
DEFAULT_DSN_ENV = "REFGATE_INDEX_DSN"
#: Seconds to wait for the server before a DSN counts as wrong.
CONNECT_TIMEOUT_S = 10


class PgIndexError(DocumentIndexError):
    """The pgvector index cannot be reached, is missing, or was built another way."""


def resolve_dsn(value: str | None, env: Mapping[str, str] | None = None) -> str:
    """The DSN itself: ``env:NAME`` read from the environment; None reads ``DEFAULT_DSN_ENV``."""
    env = os.environ if env is None else env
    ref = value if value else ENV_PREFIX + DEFAULT_DSN_ENV
    if ref.startswith(ENV_PREFIX):
        name = ref[len(ENV_PREFIX) :]
        dsn = env.get(name, "").strip()
        if not dsn:
            raise PgIndexError(
                f"the pgvector index's DSN is read from ${name}, which is not set "
                "(e.g. postgresql://user@host:5432/db)"
            )
        return dsn
    return ref


def describe(dsn: str) -> str:
    """``host:port/db`` of a DSN, for messages (never its password)."""
    try:
        # deferred: psycopg is needed only by the pgvector backend
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(dsn)
    except Exception:
        return "(unreadable DSN)"
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    return f"{host}:{port}/{info.get('dbname') or info.get('user') or ''}"


def connect(dsn: str, *, autocommit: bool = True) -> psycopg.Connection:
    """A connection to the index's database, with pgvector's types registered; a wrong DSN or a
    database without the ``vector`` extension is a ``PgIndexError``."""
    try:
        # deferred: psycopg is needed only by the pgvector backend
        import psycopg
    except ImportError as exc:  # the postgres extra is not installed
        raise PgIndexError(
            "the pgvector backend needs psycopg and pgvector: pip install 'refgate[postgres]'"
        ) from exc
    try:
        conn = psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S, autocommit=autocommit)
    except (psycopg.Error, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PgIndexError(
            f"cannot connect to the index database {describe(dsn)}: {first}"
        ) from None
    try:
        require_pgvector(conn)
        # deferred: pgvector's psycopg adapter is needed only here
        from pgvector.psycopg import register_vector

        register_vector(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def require_pgvector(conn: psycopg.Connection) -> str:
    """The installed pgvector version; ``PgIndexError`` naming ``CREATE EXTENSION vector``."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is not None:
        return str(row[0])
    available = conn.execute(
        "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if available is None:
        raise PgIndexError(
            "the index database's server has no pgvector extension (pg_available_extensions "
            "lists no 'vector'): install pgvector on the server (managed services offer it), "
            "then run CREATE EXTENSION vector; in the database"
        )
    raise PgIndexError(
        f"pgvector {available[0]} is available on the server but not enabled in this database: "
        "run CREATE EXTENSION vector; as a role allowed to (the database owner, or a superuser)"
    )


def as_array(value: object) -> np.ndarray:
    """A vector read from the database (pgvector's ``Vector``, or a list) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, dtype=np.float32)

"""Where runs are checkpointed and decisions remembered, selected by ``settings.database_url``.

- No URL (default): SQLite under the workspace's ``.refgate/`` (``./.refgate/`` without a
  workspace): checkpoints in ``checkpoints.sqlite`` (``SqliteSaver``), the store in
  ``refgate.sqlite`` (``SqliteStore`` with the sqlite-vec embedding index of ``refgate.memory.store``;
  the same file and index ``refgate.memory.decisions.open_store`` opens).
- ``sqlite:///path/to/x.sqlite``: the checkpoints there, the store in ``x.store.sqlite``.
- ``postgresql://...`` (or ``postgres://``): ``PostgresSaver`` and ``PostgresStore`` over one
  connection pool (``refgate[postgres]``). The store gets the embedding index when the server
  offers the pgvector extension; without it decisions are stored and listed, and recall ranks
  them by word overlap (``store.index_config`` is then ``None``).

Tables are created on first use (``setup()`` is idempotent). Connections close when the context
exits::

    with open_persistence(settings, workspace) as (checkpointer, store):
        graph = build_graph(checkpointer=checkpointer, store=store, workspace=workspace)
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, TypeAlias

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.store.base import BaseStore

from refgate.config import ConfigError, Settings
from refgate.memory.store import index_config
from refgate.redaction import redact_exception

if TYPE_CHECKING:
    from langgraph.store.sqlite import SqliteStore

    from refgate.workspace import Workspace

#: A run's persistence: the checkpointer (threads' state) and the store (memory).
Persistence: TypeAlias = "tuple[BaseCheckpointSaver[str], BaseStore]"
#: Where a workspace keeps its state: a ``Workspace``, its folder, or None (``./.refgate``).
StatePlace: TypeAlias = "Workspace | str | Path | None"

CHECKPOINTS_FILE = "checkpoints.sqlite"
STORE_FILE = "refgate.sqlite"
#: Types that checkpoints written by earlier refgate versions hold (refs were stored as ``Ref``
#: objects; state now holds plain data only, see ``refgate.graph.state``). Allowed when refgate's
#: savers read old threads, so resuming one logs nothing and loses nothing.
LEGACY_STATE_TYPES = [("refgate.refs", "Ref")]
_PG_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class PersistenceTarget:
    """Which backend a settings/workspace pair selects, and where (password redacted)."""

    backend: str  # "sqlite" or "postgres"
    location: str  # the checkpoint file, or the URL without its password
    url: str  # what is opened: the checkpoint file path, or the full URL


class RedactingSerializer(JsonPlusSerializer):
    """``JsonPlusSerializer`` that masks secrets in an exception before it is stored (a failed
    node's error write): the last guard, behind the graphs' ``redacting`` nodes."""

    def dumps_typed(self, obj: object) -> tuple[str, bytes]:
        if isinstance(obj, BaseException):
            redact_exception(obj)
        return super().dumps_typed(obj)


def checkpoint_serde() -> JsonPlusSerializer:
    """The serializer of refgate's checkpointers: strict msgpack (LangGraph's safe types only, what
    ``LANGGRAPH_STRICT_MSGPACK=true`` and the servers use) plus ``LEGACY_STATE_TYPES`` for threads
    checkpointed by earlier versions (new checkpoints hold plain data and need no allowlist);
    secrets in stored errors masked (``refgate.redaction``)."""
    return RedactingSerializer(allowed_msgpack_modules=list(LEGACY_STATE_TYPES))


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def _state_dir(workspace: StatePlace) -> Path:
    if workspace is None:
        return Path.cwd() / ".refgate"
    if isinstance(workspace, str | Path):
        return Path(workspace).expanduser().resolve() / ".refgate"
    return Path(workspace.state_dir)


def persistence_target(settings: Settings, workspace: StatePlace = None) -> PersistenceTarget:
    """Resolve the backend without opening anything."""
    url = (settings.database_url or "").strip()
    if not url:
        path = _state_dir(workspace) / CHECKPOINTS_FILE
        return PersistenceTarget("sqlite", str(path), str(path))
    if url.startswith(_PG_SCHEMES):
        return PersistenceTarget("postgres", redact(url), url)
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :]).expanduser()
        return PersistenceTarget("sqlite", str(path), str(path))
    raise ConfigError(
        "REFGATE_DATABASE_URL must start with postgresql:// (or sqlite:/// for a file), "
        f"got {redact(url)!r}"
    )


def sqlite_module() -> tuple[ModuleType, bool]:
    """The DB-API module for the store's SQLite file, and whether it can load sqlite-vec.

    Some Python builds (pyenv's default among them) lack ``enable_load_extension``; then
    ``pysqlite3`` (PyPI ``pysqlite3-binary``) opens the store when installed. The checkpoints stay
    on the standard module (``SqliteSaver`` catches its exception classes) in a separate file, so
    two SQLite libraries never share one file's locks.
    """
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3, True
    try:
        # optional: pysqlite3 (SQLite with extensions) is used only when the standard module lacks them
        from pysqlite3 import dbapi2 as pysqlite3
    except ImportError:
        return sqlite3, False
    return pysqlite3, True


def _store_file(checkpoints: Path) -> Path:
    """The store beside the checkpoints: ``refgate.sqlite`` in the default folder (the file
    ``refgate.memory.decisions.open_store`` opens too), else ``<name>.store.sqlite``."""
    if checkpoints.name == CHECKPOINTS_FILE:
        return checkpoints.parent / STORE_FILE
    return checkpoints.with_name(checkpoints.stem + ".store.sqlite")


def default_store_file(settings: Settings, workspace: StatePlace = None) -> Path:
    """The SQLite store file ``open_persistence`` uses for ``settings`` and ``workspace``.

    Other code opening the same memory (e.g. ``refgate.memory.decisions``) should open this file, with
    ``refgate.memory.store.index_config(settings)`` as its index.
    """
    target = persistence_target(settings, workspace)
    if target.backend != "sqlite":
        raise ValueError("the store is in PostgreSQL, not in a file")
    return _store_file(Path(target.url))


@contextlib.contextmanager
def open_sqlite_store(
    store_file: str | Path, *, index: dict | None = None
) -> Iterator[SqliteStore]:
    """A ``SqliteStore`` on ``store_file``, indexed when this Python's SQLite loads sqlite-vec."""
    # deferred: the backend is imported when it is opened
    from langgraph.store.sqlite import SqliteStore

    db, can_index = sqlite_module()
    store_file = Path(store_file)
    store_file.parent.mkdir(parents=True, exist_ok=True)
    conn = db.connect(str(store_file), check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=10000")
        store = SqliteStore(conn, index=index if can_index else None)  # type: ignore[arg-type]
        store.setup()
        yield store
    finally:
        conn.close()


@contextlib.contextmanager
def open_sqlite(
    checkpoints: str | Path, *, index: dict | None = None, store_file: str | Path | None = None
) -> Iterator[Persistence]:
    """``(SqliteSaver, SqliteStore)``; both connections close on exit.

    The store lives in ``store_file`` (default: beside the checkpoints, see the module doc).
    Without a SQLite that loads extensions it is opened without its index.
    """
    # deferred: the backend is imported when it is opened
    from langgraph.checkpoint.sqlite import SqliteSaver

    checkpoints = Path(checkpoints)
    checkpoints.parent.mkdir(parents=True, exist_ok=True)
    store_file = Path(store_file) if store_file else _store_file(checkpoints)
    saver_conn = sqlite3.connect(str(checkpoints), check_same_thread=False)
    try:
        saver_conn.execute("PRAGMA journal_mode=WAL")
        saver_conn.execute("PRAGMA busy_timeout=10000")
        checkpointer = SqliteSaver(saver_conn, serde=checkpoint_serde())
        checkpointer.setup()
        with open_sqlite_store(store_file, index=index) as store:
            yield checkpointer, store
    finally:
        saver_conn.close()


_PGVECTOR_SQL = "SELECT 1 AS ok FROM pg_available_extensions WHERE name = 'vector'"


class _Rows(Protocol):
    def fetchone(self) -> object: ...


class _Connection(Protocol):
    """What ``pgvector_available`` needs of a database connection (psycopg's)."""

    def execute(self, query: str) -> _Rows: ...


def pgvector_available(conn: _Connection) -> bool:
    """True when the PostgreSQL server can ``CREATE EXTENSION vector`` (or already has it)."""
    return conn.execute(_PGVECTOR_SQL).fetchone() is not None


def _pg_imports() -> None:
    try:
        import langgraph.checkpoint.postgres  # noqa: F401
        import langgraph.store.postgres  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError(
            "a postgresql:// database URL needs the postgres extra: pip install 'refgate[postgres]'"
        ) from exc


@contextlib.contextmanager
def open_postgres(
    url: str, *, index: dict | None = None, max_size: int = 10
) -> Iterator[Persistence]:
    """``(PostgresSaver, PostgresStore)`` over one pool; ``index`` is dropped without pgvector."""
    _pg_imports()
    # deferred: optional dependency (the postgres extra)
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    try:  # one direct attempt first: a wrong URL fails at once with the server's own words
        psycopg.connect(url, connect_timeout=10).close()
    except Exception as exc:
        raise ConfigError(f"cannot connect to PostgreSQL at {redact(url)}: {exc}") from exc
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pool = ConnectionPool(url, min_size=1, max_size=max_size, kwargs=kwargs, open=False)
    pool.open(wait=True, timeout=30)
    try:
        with pool.connection() as conn:
            semantic = index is not None and pgvector_available(conn)
        # the pool's connections return dict rows (row_factory above); psycopg cannot type it
        checkpointer = PostgresSaver(pool, serde=checkpoint_serde())  # type: ignore[arg-type]
        checkpointer.setup()
        store = PostgresStore(pool, index=index if semantic else None)  # type: ignore[arg-type]
        store.setup()
        yield checkpointer, store
    finally:
        pool.close()


@contextlib.contextmanager
def open_persistence(
    settings: Settings, workspace: StatePlace = None, *, semantic: bool = True
) -> Iterator[Persistence]:
    """Open the checkpointer and store that ``settings.database_url`` selects.

    ``workspace`` is a ``Workspace``, a folder path or ``None`` (SQLite files then live in
    ``./.refgate/``). ``semantic=False`` opens the store without an embedding index.
    """
    target = persistence_target(settings, workspace)
    index = None
    if semantic:
        index = index_config(settings)
    if target.backend == "postgres":
        with open_postgres(target.url, index=index) as pair:
            yield pair
    else:
        with open_sqlite(target.url, index=index) as pair:
            yield pair


@contextlib.asynccontextmanager
async def open_async_postgres(
    url: str, *, index: dict | None = None, max_size: int = 10
) -> AsyncIterator[Persistence]:
    """``(AsyncPostgresSaver, AsyncPostgresStore)`` over one async pool."""
    _pg_imports()
    # deferred: optional dependency (the postgres extra)
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    try:
        await (await psycopg.AsyncConnection.connect(url, connect_timeout=10)).close()
    except Exception as exc:
        raise ConfigError(f"cannot connect to PostgreSQL at {redact(url)}: {exc}") from exc
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pool = AsyncConnectionPool(url, min_size=1, max_size=max_size, kwargs=kwargs, open=False)
    await pool.open(wait=True, timeout=30)
    try:
        async with pool.connection() as conn:
            semantic = index is not None and (await (await conn.execute(_PGVECTOR_SQL)).fetchone())
        checkpointer = AsyncPostgresSaver(pool, serde=checkpoint_serde())  # type: ignore[arg-type]
        await checkpointer.setup()
        store = AsyncPostgresStore(pool, index=index if semantic else None)  # type: ignore[arg-type]
        await store.setup()
        yield checkpointer, store
    finally:
        await pool.close()


@contextlib.asynccontextmanager
async def open_async_persistence(
    settings: Settings, workspace: StatePlace = None, *, semantic: bool = True
) -> AsyncIterator[Persistence]:
    """The async twin of ``open_persistence``, for apps that run graphs with ``ainvoke``/``astream``.

    Open it inside the serving event loop (e.g. a FastAPI lifespan): the async savers bind to
    the running loop. SQLite: ``AsyncSqliteSaver`` for checkpoints and the same ``SqliteStore``
    as the sync path (refgate's nodes are sync and call the store from worker threads).
    Postgres: ``AsyncPostgresSaver`` and ``AsyncPostgresStore``.
    """
    target = persistence_target(settings, workspace)
    index = None
    if semantic:
        index = index_config(settings)
    if target.backend == "postgres":
        async with open_async_postgres(target.url, index=index) as pair:
            yield pair
        return
    # deferred: optional dependency (aiosqlite)
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    checkpoints = Path(target.url)
    checkpoints.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(str(checkpoints)) as conn:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA busy_timeout=10000")
        checkpointer = AsyncSqliteSaver(conn, serde=checkpoint_serde())
        await checkpointer.setup()
        with open_sqlite_store(_store_file(checkpoints), index=index) as store:
            yield checkpointer, store


def prune_thread(checkpointer: BaseCheckpointSaver[str], thread_id: str) -> bool:
    """Keep only ``thread_id``'s latest checkpoint (with its pending writes): what a finished
    turn needs to be resumed or followed up. Without this a thread's checkpoints grow with the
    square of its turns (every checkpoint holds the whole state); with it, linearly.

    SQLite: the other checkpoints and their writes are deleted here (the saver has no ``prune``);
    Postgres: ``PostgresSaver.prune(strategy="keep_latest")``. False when the backend cannot
    prune (nothing is deleted then)."""
    # deferred: the backend is imported when it is opened
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(checkpointer, SqliteSaver):
        with checkpointer.lock, checkpointer.conn:
            checkpointer.conn.execute(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id NOT IN "
                "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? "
                "GROUP BY checkpoint_ns)",
                (thread_id, thread_id),
            )
            checkpointer.conn.execute(
                "DELETE FROM writes WHERE thread_id = ? AND NOT EXISTS (SELECT 1 FROM "
                "checkpoints c WHERE c.thread_id = writes.thread_id AND c.checkpoint_ns = "
                "writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)",
                (thread_id,),
            )
        return True
    try:
        checkpointer.prune([thread_id], strategy="keep_latest")
    except NotImplementedError:
        return False
    return True


#: The deep-research graph's checkpoints, in a workspace's state folder.
RESEARCH_CHECKPOINTS = "research.sqlite"


def stored_research_report(state_dir: Path, thread: str) -> dict[str, object] | None:
    """The deep-research report checkpointed for ``thread`` under ``state_dir`` (opened
    read-only), or None when there is none; ``sqlite3.Error`` when the file cannot be read."""
    # deferred: the backend is imported when it is opened
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = state_dir / RESEARCH_CHECKPOINTS
    if not path.is_file():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        tup = SqliteSaver(conn, serde=checkpoint_serde()).get_tuple(
            {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        )
    finally:
        conn.close()
    values = (tup.checkpoint or {}).get("channel_values", {}) if tup else {}
    report = values.get("report")
    return report if isinstance(report, dict) else None

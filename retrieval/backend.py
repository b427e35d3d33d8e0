"""Which document index a workspace reads and writes: FAISS files under ``.refgate/index`` (the
default, one machine) or a PostgreSQL database with pgvector (``[index] backend = "pgvector"``,
shared by every process and machine that reaches it).

    [index]
    backend = "pgvector"
    dsn = "env:REFGATE_INDEX_DSN"   # the DSN is read from this variable; never a password here
    name = "documents"              # one index per name and embedder in the database

Every reader (``search_documents``, hence WORK, the research graph, served graphs, the MCP
server, the Python API) and ``refgate search`` open the index through ``open_pg_index`` or
``capability.open_index``; ``refgate index`` writes through ``pgvector.writer.write_index``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from refgate.memory.embeddings import document_embeddings, embeddings_id
from refgate.retrieval.pgvector.connection import PgIndexError, resolve_dsn

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.retrieval.pgvector.index import PgIndex
    from refgate.workspace import Workspace

Backend = Literal["faiss", "pgvector"]
DEFAULT_NAME = "documents"

_lock = threading.Lock()
_open: dict[tuple[str, str, str], PgIndex] = {}


@dataclass(frozen=True)
class IndexTarget:
    """A workspace's index: its backend, the DSN reference (``env:NAME`` or a DSN) and name."""

    backend: Backend
    dsn_ref: str | None = None
    name: str = DEFAULT_NAME

    def dsn(self) -> str:
        """The DSN itself (read from the environment for ``env:NAME``)."""
        return resolve_dsn(self.dsn_ref)


def index_target(workspace: Workspace, backend: str | None = None) -> IndexTarget:
    """The workspace's ``[index]``, with ``backend`` (a command-line choice) overriding it."""
    opts = getattr(workspace, "index_options", None) or {}
    chosen = backend or opts.get("backend") or "faiss"
    if chosen not in ("faiss", "pgvector"):
        raise PgIndexError(f"unknown index backend {chosen!r} (faiss or pgvector)")
    kind: Backend = "pgvector" if chosen == "pgvector" else "faiss"
    return IndexTarget(kind, opts.get("dsn"), opts.get("name") or DEFAULT_NAME)


def open_pg_index(target: IndexTarget, settings: Settings | None = None) -> PgIndex:
    """The pgvector index for the settings' document embedder (kept open per process)."""
    # deferred: the pgvector backend imports psycopg; FAISS workspaces never need it
    from refgate.retrieval.pgvector.index import PgIndex

    dsn = target.dsn()
    wanted = embeddings_id(document_embeddings(settings))
    key = (dsn, target.name, wanted)
    with _lock:
        index = _open.get(key)
        if index is None:
            index = PgIndex(dsn, name=target.name, settings=settings, embeddings_id_wanted=wanted)
            _open[key] = index
        return index

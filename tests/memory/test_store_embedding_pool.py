"""The server's store embeds on refgate's own threads, never on the event loop's default executor.

Under ``langgraph dev`` sync nodes run on the loop's default executor and a node's sync
``store.put`` waits for the loop to embed the value. If the embedding were queued on that same
executor, a burst of runs that fills it (6 workers on 2 cores, 20 concurrent runs) would hang
every HARVEST. This reproduces the shape with a 2-worker default executor and 4 blocked "nodes".
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from langgraph.store.base.batch import AsyncBatchedBaseStore
from langgraph.store.memory import InMemoryStore

from refgate.memory.store import STORE_DIMS, StoreEmbeddings


class _BatchedStore(AsyncBatchedBaseStore):
    """The server's shape: sync calls hop onto the loop, which batches them."""

    def __init__(self, store):
        super().__init__()
        self._store = store

    def batch(self, ops):
        return self._store.batch(ops)

    async def abatch(self, ops):
        return await self._store.abatch(ops)


def test_sync_store_calls_from_every_default_worker_do_not_deadlock():
    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=2))
        index = {"dims": STORE_DIMS, "embed": StoreEmbeddings("hashing"), "fields": ["decision"]}
        store = _BatchedStore(InMemoryStore(index=index))

        def node(i: int):  # a sync node, as the server runs it
            store.put(("refgate", "ws"), f"k{i}", {"decision": f"use column unemp {i}"})
            hits = store.search(("refgate", "ws"), query="unemp column", limit=10)
            return store.get(("refgate", "ws"), f"k{i}").value, len(hits)

        runs = [loop.run_in_executor(None, node, i) for i in range(4)]
        return await asyncio.wait_for(asyncio.gather(*runs), timeout=30)

    results = asyncio.run(main())
    assert [value["decision"] for value, _ in results] == [
        f"use column unemp {i}" for i in range(4)
    ]
    assert all(hits >= 1 for _, hits in results)

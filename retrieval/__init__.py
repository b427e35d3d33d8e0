"""Document retrieval: chunk -> embed -> retrieve -> cite (the retrieval pipeline).

``DocumentIndex.build(documents, path)`` / ``DocumentIndex.load(path)`` / ``.update(documents)`` /
``.search(query, k=10, filters=None, mmr=True) -> list[Hit]``; ``refgate.retrieval.citations``
turns hits into external docRefs. WORK reaches it through the ``search_documents`` capability
(``refgate.retrieval.capability``); ``refgate index`` builds a workspace's index.
"""

from refgate.memory.embeddings import (
    HashingEmbeddings,
    MiniLMEmbeddings,
    default_embeddings,
    document_embeddings,
)
from refgate.retrieval.chunking import Chunk, chunk_documents, chunk_text, count_tokens
from refgate.retrieval.documents import index_dir, load_documents, workspace_documents
from refgate.retrieval.index import DocumentIndex, Hit
from refgate.retrieval.index_files import DocumentIndexError
from refgate.retrieval.refresh import UpdateResult

__all__ = [
    "Chunk",
    "DocumentIndex",
    "DocumentIndexError",
    "HashingEmbeddings",
    "Hit",
    "MiniLMEmbeddings",
    "UpdateResult",
    "chunk_documents",
    "chunk_text",
    "count_tokens",
    "default_embeddings",
    "document_embeddings",
    "index_dir",
    "load_documents",
    "workspace_documents",
]

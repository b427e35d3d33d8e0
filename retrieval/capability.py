"""The ``search_documents`` engine capability: hybrid search over the workspace's documents.

Reached by ``EngineCall`` and by ``engine.search_documents`` inside RunPython. It reads the index
under ``<workspace>/.refgate/index`` and never builds one: building embeds every document (about a
minute for the sample workspace on two cores) and writes to the workspace, which a read-only
search must not do silently; without an index it fails with a message telling to run
``refgate index``. Loaded indexes are kept per process and reloaded when the index changes.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from refgate.retrieval.citations import dedupe_hits, doc_ref_title, hits_to_refspecs
from refgate.retrieval.documents import index_dir
from refgate.retrieval.index import MANIFEST, DocumentIndex, DocumentIndexError
from refgate.tools.engine import EngineEnv, Evidence, capability

#: Document-derived paths in the capability's data (section titles come from the text too).
UNTRUSTED_FIELDS = ["hits[].text", "hits[].section"]
MAX_K = 50

_lock = threading.Lock()
_loaded: dict[Path, tuple[tuple[int, int], DocumentIndex]] = {}


class NoDocumentIndex(DocumentIndexError):
    """The workspace has no document index yet."""


def open_index(workspace: Any, settings: Any = None) -> DocumentIndex:
    """The workspace's loaded index (cached per process; reloaded when its manifest changes)."""
    path = index_dir(workspace).resolve()
    manifest = path / MANIFEST
    if not manifest.is_file():
        where = workspace.root
        if workspace.documents_path is None:
            raise NoDocumentIndex(
                f"workspace {workspace.name!r} has no [documents] table, so there is nothing to "
                "search"
            )
        raise NoDocumentIndex(
            f"no document index for workspace {workspace.name!r} yet ({path} is missing); "
            f"build it with: refgate index --workspace {where}"
        )
    stat = manifest.stat()
    mtime = (stat.st_mtime_ns, stat.st_size)
    with _lock:
        cached = _loaded.get(path)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        index = DocumentIndex.load(path, settings=settings)
        _loaded[path] = (mtime, index)
        return index


def _as_list(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else [str(v) for v in value]


@capability
def search_documents(
    query: str,
    k: int = 10,
    doc_id: str | list[str] | None = None,
    entity: str | list[str] | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    mmr: bool = True,
    *,
    env: EngineEnv,
) -> Evidence:
    """Search the workspace's documents (hybrid FAISS + BM25, fused by reciprocal rank, then MMR).

    Args:
        query: what to look for, in words.
        k: how many chunks to return (1-50, default 10).
        doc_id: only these documents (an id or a list; ids are file names without suffix,
            e.g. "20081216").
        entity: only documents of this entity (e.g. "FOMC").
        date_from: only documents dated on or after this ISO date ("2008-01-01").
        date_to: only documents dated on or before this ISO date.
        mmr: pick diverse chunks by maximal marginal relevance (default true).

    Returns data ``{"query", "k", "filters", "hits": [{"doc_id", "chunk_id", "score", "date",
    "entity", "section", "start", "end", "ref_title", "text"}], "index": {...}}`` and one docRef
    per distinct chunk (source_type external: the text is untrusted document content). Cite the
    docRef, not the text. ``start``/``end`` are character offsets of the chunk in its document.
    """
    workspace = env.workspace
    if workspace is None:
        raise ValueError("search_documents needs a workspace")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty string")
    k = int(k)
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
    index = open_index(workspace, env.settings)
    filters: dict[str, Any] = {}
    if doc_id is not None:
        filters["doc_id"] = _as_list(doc_id)
    if entity is not None:
        filters["entity"] = _as_list(entity)
    if date_from:
        filters["date_from"] = str(date_from)
    if date_to:
        filters["date_to"] = str(date_to)
    hits = dedupe_hits(index.search(query, k=k, filters=filters or None, mmr=bool(mmr)))
    data = {
        "query": query,
        "k": k,
        "filters": filters,
        "hits": [
            {
                "doc_id": h.doc_id,
                "chunk_id": h.chunk_id,
                "score": round(h.score, 6),
                "date": h.metadata.get("date"),
                "entity": h.metadata.get("entity"),
                "section": h.metadata.get("section") or None,
                "start": h.start,
                "end": h.end,
                "ref_title": doc_ref_title(h),
                "text": h.text,
            }
            for h in hits
        ],
        "index": {
            "documents": len(index.doc_ids),
            "chunks": len(index),
            "updated_at": index.manifest.get("updated_at"),
        },
    }
    return Evidence(data=data, refs=hits_to_refspecs(hits), untrusted_fields=list(UNTRUSTED_FIELDS))

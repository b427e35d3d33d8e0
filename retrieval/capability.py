"""The ``search_documents`` engine capability: hybrid search over the workspace's documents.

Reached by ``EngineCall`` and by ``engine.search_documents`` inside RunPython. It reads the index
under ``<workspace>/.refgate/index`` and never builds one: building embeds every document (about a
minute for the sample workspace on two cores) and writes to the workspace, which a read-only
search must not do silently; without an index it fails with a message telling to run
``refgate index``. Loaded indexes are kept per process and reloaded when the index changes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path

from refgate.catalog.capabilities import EngineEnv, Evidence, capability
from refgate.config import Settings
from refgate.paths import PathEscape, confine
from refgate.retrieval.backend import index_target, open_pg_index
from refgate.retrieval.chunking import count_tokens
from refgate.retrieval.citations import (
    FILING_FIELDS,
    CitationStyle,
    dedupe_hits,
    doc_ref_title,
    hit_tables,
    hits_to_refspecs,
    table_refspecs,
)
from refgate.retrieval.documents import index_dir
from refgate.retrieval.index import DocumentIndex, Hit, SearchIndex
from refgate.retrieval.index_files import MANIFEST, DocumentIndexError
from refgate.retrieval.loaders.base import TableRecord
from refgate.retrieval.loaders.pdf import page_tables
from refgate.retrieval.mmr import DIVERSE_LAMBDA
from refgate.workspace import Workspace

#: Document-derived paths in the capability's data (section titles come from the text too).
UNTRUSTED_FIELDS = ["hits[].text", "hits[].section"]
#: A DART filing's citation names its section and the filer's names, which come from the filing.
FILING_UNTRUSTED_FIELDS = [
    "hits[].section_title",
    "hits[].corp_name",
    "hits[].report_nm",
    "hits[].cite_as",
    "hits[].ref_title",
]
MAX_K = 50
#: Tokens of hit text WORK sees from one search by default: whole hits in rank order until the
#: budget is spent (the first hit always), the rest left out and counted (``left_out``). A chunk
#: is at most 1,024 tokens, so the default shows 3-5 whole chunks; the JSON stays under
#: EngineCall's preview limit, which would otherwise cut hits in the middle.
HIT_TOKEN_BUDGET = 2400
MAX_TOKEN_BUDGET = 8000

_lock = threading.Lock()
_loaded: dict[Path, tuple[tuple[int, int], DocumentIndex]] = {}


class NoDocumentIndex(DocumentIndexError):
    """The workspace has no document index yet."""


def open_index(workspace: Workspace, settings: Settings | None = None) -> SearchIndex:
    """The workspace's loaded index (cached per process; reloaded when its manifest changes), or
    its pgvector index (``[index] backend = "pgvector"``, ``retrieval/backend.py``)."""
    target = index_target(workspace)
    if target.backend == "pgvector":
        return open_pg_index(target, settings)
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


@functools.lru_cache(maxsize=256)
def _pdf_tables(path: str, mtime_ns: int, page: int) -> tuple[TableRecord, ...]:
    return tuple(page_tables(Path(path), page))


def tables_of(workspace: Workspace) -> Callable[[Hit], list[TableRecord]]:
    """``hit -> tables of its page``: kept in the index for DOCX/XLSX, read on demand (and
    cached) for a PDF page from the workspace's file, which must still resolve inside the
    workspace and still hold the hit's text (an edited file gives no tables until re-indexed)."""
    root = Path(workspace.root)
    roots = list(getattr(workspace, "roots", None) or [root])

    def tables(hit: Hit) -> list[TableRecord]:
        kept = hit_tables(hit)
        meta = hit.metadata
        if kept or meta.get("format") != "pdf" or not meta.get("page") or not meta.get("source"):
            return kept
        try:
            path = confine(root / str(meta["source"]), roots, what="document")
            stat = path.stat()
        except (PathEscape, OSError):
            return []
        if stat.st_mtime_ns > _indexed_at_ns(hit):
            return []
        return [t.copy() for t in _pdf_tables(str(path), stat.st_mtime_ns, int(meta["page"]))]

    return tables


def _indexed_at_ns(hit: Hit) -> int:
    value = hit.metadata.get("file_mtime_ns")
    return int(value) if isinstance(value, int) else 2**63


def _tokens(hit: Hit) -> int:
    n = hit.metadata.get("tokens")
    return int(n) if isinstance(n, int) and n > 0 else count_tokens(hit.text)


def within_budget(hits: list[Hit], budget: int) -> tuple[list[Hit], list[Hit]]:
    """Whole hits in rank order while their tokens fit ``budget`` (the first always)."""
    kept: list[Hit] = []
    used = 0
    for n, hit in enumerate(hits):
        t = _tokens(hit)
        if kept and used + t > budget:
            return kept, hits[n:]
        kept.append(hit)
        used += t
    return kept, []


@capability
def search_documents(
    query: str,
    k: int = 10,
    doc_id: str | list[str] | None = None,
    entity: str | list[str] | None = None,
    company: str | list[str] | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    mmr: bool = False,
    max_tokens: int = HIT_TOKEN_BUDGET,
    *,
    env: EngineEnv,
) -> Evidence:
    """Search the workspace's documents: FAISS (MiniLM, one vector per 254-word-piece window, a
    chunk scored by its best window) and BM25 candidates fused by a convex combination of
    normalised scores (dense weight 0.85 in a varied corpus down to 0.6 in one whose chunks all
    look alike to the embedder, rising to 0.95 for queries of 15 to 30 words, then moved toward
    whichever list singles out its best chunk; the rest BM25), best first.

    Args:
        query: what to look for, in words.
        k: how many chunks to rank (1-50, default 10).
        doc_id: only these documents (an id or a list; ids are file names without suffix,
            e.g. "20081216" or "annual-report-2023"; a PDF's id selects all its pages).
        entity: only documents of this entity (e.g. "FOMC").
        company: only DART filings of this company or these companies: corp_code
            ("00126380"), stock code ("005930") or name ("삼성전자").
        date_from: only documents dated on or after this ISO date ("2008-01-01"); a DART
            filing's date is its receipt date (rcept_dt).
        date_to: only documents dated on or before this ISO date.
        mmr: pick diverse chunks by maximal marginal relevance, lambda 0.9 (default false:
            best first; set it when near-identical chunks crowd the hits).
        max_tokens: tokens of hit text to return (default 2400, at most 8000): the best hits are
            returned whole until the budget is spent; ``left_out`` counts the ranked hits that
            did not fit (search again with a narrower query or filter to see others).

    Returns data ``{"query", "k", "filters", "hits": [{"doc_id", "chunk_id", "source", "page",
    "cite_as", "score", "date", "entity", "section", "start", "end", "ref_title", "text", and for
    a DART filing "rcept_no", "corp_code", "corp_name", "rcept_dt", "report_nm",
    "section_title"}], "left_out", "left_out_chunk_ids", "index": {...}}``, one docRef per returned chunk
    (source_type external: untrusted document text, primary evidence of what the document says)
    and one tableRef per table on a returned page (PDF tables, DOCX tables, XLSX sheets; cite it
    for a number in a cell). The same chunk found again in a later search keeps its docRef id.
    ``cite_as`` is how the citation reads ("report.pdf p. 37"); cite the ref id, not the text.
    """
    workspace = env.workspace
    if workspace is None:
        raise ValueError("search_documents needs a workspace")
    k, budget = _checked_sizes(query, k, max_tokens)
    index = open_index(workspace, env.settings)
    style = env.settings.filing_citation if env.settings is not None else "analyst"
    filters = _filters(doc_id, entity, company, date_from, date_to)
    lam = DIVERSE_LAMBDA if mmr else None
    found = index.search(query, k=k, filters=filters or None, mmr=mmr, lambda_mult=lam)
    hits, rest = within_budget(dedupe_hits(found), budget)
    data = {
        "query": query,
        "k": k,
        "filters": filters,
        "hits": [_hit_row(h, style) for h in hits],
        "left_out": len(rest),
        "left_out_chunk_ids": [h.chunk_id for h in rest],
        "index": {
            "documents": len(index.doc_ids),
            "chunks": len(index),
            "updated_at": index.manifest.get("updated_at"),
        },
    }
    refs = hits_to_refspecs(hits, style=style) + table_refspecs(hits, tables_of(workspace), style)
    untrusted = list(UNTRUSTED_FIELDS)
    if any(h.metadata.get("rcept_no") for h in hits):
        untrusted += FILING_UNTRUSTED_FIELDS
    return Evidence(data=data, refs=refs, untrusted_fields=untrusted)


def _checked_sizes(query: str, k: int, max_tokens: int) -> tuple[int, int]:
    """``(k, token budget)`` of a search, each within its bounds (a ``ValueError`` otherwise)."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty string")
    k = int(k)
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
    budget = int(max_tokens)
    if not 1 <= budget <= MAX_TOKEN_BUDGET:
        raise ValueError(f"max_tokens must be between 1 and {MAX_TOKEN_BUDGET}, got {budget}")
    return k, budget


def _filters(
    doc_id: str | list[str] | None,
    entity: str | list[str] | None,
    company: str | list[str] | None,
    date_from: str | None,
    date_to: str | None,
) -> dict[str, str | list[str] | None]:
    """The index filters the search's arguments ask for (``DocumentIndex.filter_mask``)."""
    filters: dict[str, str | list[str] | None] = {}
    if doc_id is not None:
        filters["doc_id"] = _as_list(doc_id)
    if entity is not None:
        filters["entity"] = _as_list(entity)
    if company is not None:
        filters["company"] = _as_list(company)
    if date_from:
        filters["date_from"] = str(date_from)
    if date_to:
        filters["date_to"] = str(date_to)
    return filters


def _hit_row(hit: Hit, style: CitationStyle) -> dict[str, object]:
    """One hit as ``search_documents`` returns it."""
    meta = hit.metadata
    return {
        "doc_id": hit.doc_id,
        "chunk_id": hit.chunk_id,
        "source": meta.get("source"),
        "page": meta.get("page"),
        "cite_as": doc_ref_title(hit, style),
        "score": round(hit.score, 6),
        "date": meta.get("date"),
        "entity": meta.get("entity"),
        "section": meta.get("section") or None,
        "start": hit.start,
        "end": hit.end,
        "ref_title": doc_ref_title(hit, style),
        "text": hit.text,
        **{f: meta[f] for f in FILING_FIELDS if meta.get(f)},
    }


#: The document capabilities, registered by ``refgate.graph`` (the retrieval layer's list).
CAPABILITIES = (search_documents,)

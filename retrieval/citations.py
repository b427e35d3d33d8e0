"""Turning search hits into docRefs.

Document text is untrusted: every docRef has ``source_type="external"``. Its payload holds
``doc_id``, ``chunk_id``, the character offsets (``start``, ``end``) of the chunk in its document,
the ``excerpt`` (the chunk text, or its first ``max_chars``), plus ``date``, ``entity``,
``section``, ``source`` and ``content_hash``. A chunk hit several times (in one result list, or
across searches of one run) is cited once: the same chunk content maps to the same ref.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from refgate.refs import Ref, RefLedger
from refgate.retrieval.index import Hit
from refgate.tools.engine import RefSpec


def chunk_key(hit: Hit) -> tuple[str, str, str]:
    """What makes two hits the same citation: document, chunk and chunk content."""
    return (hit.doc_id, hit.chunk_id, str(hit.metadata.get("content_hash", "")))


def dedupe_hits(hits: Iterable[Hit]) -> list[Hit]:
    """Hits with repeated chunks dropped (the first, best-ranked occurrence is kept)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Hit] = []
    for hit in hits:
        key = chunk_key(hit)
        if key not in seen:
            seen.add(key)
            out.append(hit)
    return out


def doc_ref_payload(hit: Hit, *, max_chars: int | None = None) -> dict[str, Any]:
    """The docRef payload for one hit."""
    meta = hit.metadata
    excerpt = hit.text if max_chars is None else hit.text[:max_chars]
    payload: dict[str, Any] = {
        "doc_id": hit.doc_id,
        "chunk_id": hit.chunk_id,
        "start": int(meta.get("start", 0)),
        "end": int(meta.get("end", 0)),
        "excerpt": excerpt,
        "date": meta.get("date"),
        "entity": meta.get("entity"),
        "section": meta.get("section") or None,
        "source": meta.get("source"),
        "content_hash": meta.get("content_hash"),
    }
    if excerpt != hit.text:
        payload["excerpt_truncated"] = True
    return payload


def doc_ref_title(hit: Hit) -> str:
    """A short title built from ids and dates only (never from document text)."""
    date = hit.metadata.get("date")
    return f"{hit.chunk_id}" + (f" ({date})" if date else "")


def hits_to_refspecs(hits: Iterable[Hit], *, max_chars: int | None = None) -> list[RefSpec]:
    """One external docRef spec per distinct chunk, in hit order (for an ``Evidence``)."""
    return [
        RefSpec(
            kind="docRef",
            payload=doc_ref_payload(h, max_chars=max_chars),
            title=doc_ref_title(h),
            source=str(h.metadata.get("source") or h.doc_id),
            source_type="external",
        )
        for h in dedupe_hits(hits)
    ]


def find_doc_ref(ledger: RefLedger, hit: Hit) -> Ref | None:
    """A docRef already in ``ledger`` for this hit's chunk (same doc, chunk and content)."""
    key = chunk_key(hit)
    for ref in ledger.all().values():
        if ref.kind != "docRef":
            continue
        p = ref.payload
        if (p.get("doc_id"), p.get("chunk_id"), str(p.get("content_hash") or "")) == key:
            return ref
    return None


def cite_hits(
    hits: Iterable[Hit],
    ledger: RefLedger,
    *,
    created_by: str = "search_documents",
    max_chars: int | None = None,
) -> list[Ref]:
    """Issue docRefs for ``hits`` into ``ledger``, reusing a ref already issued for the same
    chunk; returns one ref per distinct chunk, in hit order."""
    refs: list[Ref] = []
    for hit in dedupe_hits(hits):
        ref = find_doc_ref(ledger, hit)
        if ref is None:
            ref = ledger.issue(
                "docRef",
                doc_ref_payload(hit, max_chars=max_chars),
                title=doc_ref_title(hit),
                source=str(hit.metadata.get("source") or hit.doc_id),
                source_type="external",
                created_by=created_by,
            )
        refs.append(ref)
    return refs


def citation_marker(ref: Ref) -> str:
    """How an answer cites the ref inline: ``[doc_...]``."""
    return f"[{ref.id}]"

"""The pgvector backend beside the FAISS one on a benchmark's own indexes and questions
(``retrieval_quality.py --backend pgvector``, ``long_documents.py --backend pgvector``).

Each FAISS index the benchmark built is copied into PostgreSQL (``refgate index --migrate``'s
code: the same chunks and vectors, nothing embedded) and every question is asked of both;
recall@10 and MRR@10 are printed side by side per split and method, with the largest gap. The
DSN is ``REFGATE_INDEX_DSN``; unset, the script starts (or reuses) the loopback server of
``scripts/start_postgres.sh --pgvector`` and uses the URL it prints.
"""

from __future__ import annotations

import functools
import os
import subprocess
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from refgate.retrieval.index import DocumentIndex, Hit, SearchIndex
from refgate.retrieval.pgvector.connection import connect
from refgate.retrieval.pgvector.index import PgIndex
from refgate.retrieval.pgvector.migrate import migrate_faiss
from refgate.retrieval.pgvector.schema import drop_tables

K = 10
#: The methods compared: the shipped default and the two single lists.
METHODS: dict[str, dict[str, Any]] = {
    "default": {},
    "hybrid": {"mmr": False},
    "dense": {"mode": "dense", "mmr": False},
    "BM25": {"mode": "bm25", "mmr": False},
}
#: The gap the issue allows between the backends (recall@10 and MRR@10, every split).
TOLERANCE = 0.005


REPO = Path(__file__).resolve().parents[1]


@functools.cache
def dsn() -> str:
    """``REFGATE_INDEX_DSN`` (or the tests' URL), else the URL of the loopback pgvector server
    ``scripts/start_postgres.sh --pgvector`` starts (or finds running)."""
    value = os.environ.get("REFGATE_INDEX_DSN") or os.environ.get("REFGATE_TEST_PGVECTOR_URL")
    if value:
        return value
    started = subprocess.run(
        ["bash", str(REPO / "scripts/start_postgres.sh"), "--pgvector"],
        capture_output=True,
        text=True,
        check=False,
    )
    url = started.stdout.strip()
    if started.returncode != 0 or not url:
        raise SystemExit(
            "--backend pgvector: set REFGATE_INDEX_DSN, or install the postgres extra so that "
            f"scripts/start_postgres.sh --pgvector can start a server: {started.stderr.strip()}"
        )
    print(f"pgvector server: {url} (scripts/start_postgres.sh --pgvector)", flush=True)
    return url


class SameEmbedder(Embeddings):
    """The benchmark's embedder (a query memo around MiniLM) under the index's embedder id."""

    def __init__(self, inner: Embeddings, embeddings_id: str) -> None:
        self.inner = inner
        self.embeddings_id = embeddings_id

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def pg_copy(index: DocumentIndex, folder: Path) -> PgIndex:
    """The FAISS index at ``folder`` copied into a fresh pgvector index, opened."""
    name = "bench" + uuid.uuid4().hex[:10]
    emb = SameEmbedder(index.embeddings, index.manifest["embeddings_id"])
    migrate_faiss(folder, dsn(), name=name, embeddings=emb)
    pg = PgIndex(dsn(), name=name, embeddings=emb)
    pg.lambda_mult = index.lambda_mult
    return pg


def drop(pg: PgIndex) -> None:
    pg.close()
    with connect(dsn()) as conn:
        drop_tables(conn, pg.name, pg.embeddings_id)


def scores(
    index: SearchIndex, questions: Sequence[tuple], unit: Callable[[Hit], str], **kw: Any
) -> np.ndarray:
    """Per question (``(query, gold units, [filters])``): recall@10 and reciprocal rank."""
    out = []
    for q, rel, *scope in questions:
        ranked = [unit(h) for h in index.search(q, k=K, filters=scope[0] if scope else None, **kw)]
        first = next((i for i, u in enumerate(ranked, start=1) if u in rel), None)
        out.append((len(set(ranked) & set(rel)) / min(len(rel), K), 1.0 / first if first else 0.0))
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def compare(
    splits: dict[str, tuple[SearchIndex, SearchIndex, Sequence[tuple], Callable[[Hit], str]]],
) -> float:
    """Print the side-by-side table; return the largest gap over splits, methods and metrics."""
    print(f"\nFAISS vs pgvector (same chunks and vectors): recall@{K} / MRR@{K}\n")
    print(
        "| split | questions | method | FAISS recall | pgvector recall | FAISS MRR | pgvector MRR |"
    )
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for split, (faiss, pg, questions, unit) in splits.items():
        for label, kw in METHODS.items():
            a = scores(faiss, questions, unit, **kw).mean(axis=0)
            b = scores(pg, questions, unit, **kw).mean(axis=0)
            worst = max(worst, float(np.abs(a - b).max()))
            print(
                f"| {split} | {len(questions)} | {label} | {a[0]:.4f} | {b[0]:.4f} | "
                f"{a[1]:.4f} | {b[1]:.4f} |",
                flush=True,
            )
    verdict = "within" if worst <= TOLERANCE else "OUTSIDE"
    print(f"\nlargest gap {worst:.4f}: {verdict} {TOLERANCE} on every split and method")
    return worst

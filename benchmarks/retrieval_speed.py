"""Retrieval speed: FOMC index build time; incremental re-index after 10% of the documents change
(share of chunks reused, time vs a full build); query latency p50/p95 at 1k and 100k chunks.

The 1k / 100k indexes use synthetic data (random unit vectors, 384 dimensions like MiniLM; texts
of 60 words drawn from the FOMC vocabulary for BM25) and a precomputed query vector, so the
latency is the index's (FAISS + BM25 + RRF + MMR), not the model's; the MiniLM query embedding
time is printed beside it. Run: ``python benchmarks/retrieval_speed.py`` (about 3 minutes).
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import numpy as np
from langchain_core.documents import Document

from refgate.retrieval import DocumentIndex, MiniLMEmbeddings, load_documents
from refgate.retrieval.bm25 import build_bm25, stemmer
from refgate.retrieval.chunking import Chunk, content_hash
from refgate.retrieval.mmr import DEFAULT_LAMBDA

REPO = Path(__file__).resolve().parents[1]
DIM = 384
QUERIES = 200


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, q))


def synthetic_index(n: int, vocab: list[str], rng: np.random.Generator, tmp: Path) -> DocumentIndex:
    import faiss

    texts = [" ".join(rng.choice(vocab, size=60)) for _ in range(n)]
    chunks = []
    for i, t in enumerate(texts):
        meta = {
            "doc_id": f"s{i // 4}",
            "chunk_id": f"s{i // 4}#{i % 4}",
            "start": 0,
            "end": len(t),
            "content_hash": content_hash(t),
            "date": f"{2000 + i % 20}-01-01",
        }
        chunks.append(Chunk(meta["chunk_id"], meta["doc_id"], t, 0, len(t), meta))
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(DIM)
    index.add(vecs)
    manifest = {"bm25": {"stopwords": "en", "stemmer": "english"}, "documents": {}}
    di = DocumentIndex(tmp, chunks, index, None, MiniLMEmbeddings(), manifest)
    di.bm25 = build_bm25(texts, stemmer())
    di.lambda_mult = DEFAULT_LAMBDA
    return di


def query_latency(
    di: DocumentIndex, vocab: list[str], rng: np.random.Generator, **kw
) -> list[float]:
    qvecs = rng.standard_normal((QUERIES, DIM)).astype(np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    queries = [" ".join(rng.choice(vocab, size=6)) for _ in range(QUERIES)]
    times = []
    for q, v in zip(queries, qvecs, strict=True):
        di.embed_query = lambda _q, v=v: v[None, :]  # precomputed: time the index, not the model
        t0 = time.perf_counter()
        di.search(q, k=10, **kw)
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    rng = np.random.default_rng(0)
    emb = MiniLMEmbeddings()
    emb.embed_query("warm up")
    docs = load_documents(REPO / "examples/us-macro/documents", date_from_filename="%Y%m%d")
    vocab = sorted({w.lower() for d in docs for w in re.findall(r"[A-Za-z]{3,}", d.page_content)})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        index = DocumentIndex.build(docs, tmp / "fomc", embeddings=emb)
        full = time.perf_counter() - t0
        full_chunks = len(index)
        t0 = time.perf_counter()
        DocumentIndex.load(tmp / "fomc")
        load_s = time.perf_counter() - t0

        # 10% of the documents change: a sentence appended to 16 statements
        changed = list(docs)
        picks = rng.choice(len(docs), size=round(len(docs) * 0.1), replace=False)
        for i in picks:
            d = changed[i]
            changed[i] = Document(
                page_content=d.page_content.rstrip() + " The Committee will "
                "continue to monitor developments closely.",
                metadata=d.metadata,
            )
        res = index.update(changed)

        q_emb = []
        for q in [
            "target range for the federal funds rate",
            "inflation expectations",
            "labor market conditions improved",
            "asset purchases",
        ] * 5:
            t0 = time.perf_counter()
            emb.embed_query(q)
            q_emb.append(time.perf_counter() - t0)

        lat = {}
        for n in (1_000, 100_000):
            t0 = time.perf_counter()
            di = synthetic_index(n, vocab, rng, tmp / f"s{n}")
            setup = time.perf_counter() - t0
            lat[n] = (
                setup,
                query_latency(di, vocab, rng),
                query_latency(di, vocab, rng, mmr=False),
                query_latency(di, vocab, rng, mode="bm25", mmr=False),
                query_latency(di, vocab, rng, mode="dense", mmr=False),
            )

    print(f"FOMC statements: {len(docs)} documents, {full_chunks} chunks (MiniLM, 2 cores)")
    print(f"  full build: {full:.1f} s; load: {load_s * 1000:.0f} ms (no embedding)")
    print(
        f"  after 10% of documents changed ({len(picks)} docs): {res.embedded} chunks embedded, "
        f"{res.reused} reused -> reuse {res.reuse_rate:.1%} (target >= 90%)"
    )
    print(
        f"  re-index time {res.seconds:.2f} s = {res.seconds / full:.1%} of a full build "
        f"(target <= 20%)"
    )
    print(f"  MiniLM query embedding: p50 {pct(q_emb, 50):.1f} ms, p95 {pct(q_emb, 95):.1f} ms")
    print("\nquery latency, k=10, synthetic 384-d vectors (index only, ms):\n")
    print(
        "| chunks | index setup (s) | hybrid+MMR p50 / p95 | hybrid p50 / p95 | BM25 p50 / p95 "
        "| dense p50 / p95 |"
    )
    print("|---|---|---|---|---|---|")
    for n, (setup, mmr, hyb, bm, de) in lat.items():
        cells = " | ".join(f"{pct(t, 50):.1f} / {pct(t, 95):.1f}" for t in (mmr, hyb, bm, de))
        print(f"| {n:,} | {setup:.1f} | {cells} |")
    r = lat[100_000][1]
    s = lat[1_000][1]
    print(f"\nhybrid+MMR p50 at 100k / at 1k = {np.median(r) / np.median(s):.1f}x")


if __name__ == "__main__":
    main()

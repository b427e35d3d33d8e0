"""The document index at a desk's scale: pgvector beside FAISS, on synthetic chunks.

For each size (default 10^5; ``--sizes 100000,1000000``) it makes synthetic filings: chunks of
``--words`` words drawn from a Zipf vocabulary, each filing a company (of 2,500) and a receipt
date (ten years), and embeds them with the hashing embedder (``--dim``, default 384, MiniLM's
size). Then it measures, in the same run and on the same chunks and vectors:

- pgvector: the real write path (``pgvector/writer.py``: one transaction per filing, chunk,
  posting and window rows by COPY, BM25 term counts and statistics), then the HNSW graph built
  once (the writer's bulk path); FAISS: ``faiss_index_for`` (flat up to 250,000 vectors, HNSW above) and
  the bm25s index. Throughput in chunks per second, the index's size on disk;
- hybrid search (k = 10, dense + BM25, convex fusion, as ``refgate search``), p50 / p95 over
  ``--queries`` queries, unfiltered and filtered by one company and a one-year date range
  (``--full-scan-bm25``: pgvector's unfiltered BM25 without the postings' max-score pruning).

Chunking and embedding are left out (``benchmarks/document_scale.py`` measures them).

    REFGATE_INDEX_DSN=$(scripts/start_postgres.sh --pgvector) python benchmarks/index_scale.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings
from psycopg import sql
from psycopg.types.json import Jsonb

from refgate.memory.embeddings import HashingEmbeddings, embeddings_id, embeddings_spec
from refgate.retrieval.bm25 import build_bm25, query_tokens, stemmer
from refgate.retrieval.chunking import Chunk, content_hash
from refgate.retrieval.dense import faiss_index_for, normalise
from refgate.retrieval.index import DocumentIndex
from refgate.retrieval.index_files import StoredIndex, new_manifest, write_files
from refgate.retrieval.pgvector.connection import connect
from refgate.retrieval.pgvector.index import PgIndex
from refgate.retrieval.pgvector.schema import (
    PARTS,
    POSTINGS_KEY,
    Tables,
    create_hnsw,
    create_tables,
    drop_tables,
    ensure_layout,
    table_prefix,
)
from refgate.retrieval.pgvector.writer import PreparedDoc, chunk_terms, index_spec, write_doc

COMPANIES = 2500
CHUNKS_PER_FILING = 100
VOCAB = 50_000


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def synthetic(n: int, words: int, seed: int) -> Iterator[tuple[int, str, str, list[str]]]:
    """``n`` chunks as (filing, corp_code, date, texts of the filing's chunks), filing by filing."""
    rng = np.random.default_rng(seed)
    # Zipf ranks from 11: the ten commonest words are what stop-word removal takes out
    ranks = np.arange(11, VOCAB + 11, dtype=np.float64)
    p = 1.0 / ranks**1.1
    p /= p.sum()
    vocab = np.array([f"w{i}" for i in range(VOCAB)], dtype=object)
    for f in range(n // CHUNKS_PER_FILING):
        corp = f"{rng.integers(COMPANIES):08d}"
        year = 2015 + int(rng.integers(10))
        date = f"{year}-{1 + int(rng.integers(12)):02d}-{1 + int(rng.integers(28)):02d}"
        ids = rng.choice(VOCAB, size=(CHUNKS_PER_FILING, words), p=p)
        texts = [f"company c{corp} " + " ".join(vocab[row]) for row in ids]
        yield f, corp, date, texts


def percentiles(xs: list[float]) -> str:
    xs = sorted(xs)
    p50 = statistics.median(xs)
    p95 = xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]
    return f"p50 {1000 * p50:7.1f} ms  p95 {1000 * p95:7.1f} ms"


def timed(search, queries: list[tuple[str, dict | None]]) -> list[float]:
    out = []
    for q, f in queries:
        t = time.perf_counter()
        search(q, k=10, filters=f, mmr=False)
        out.append(time.perf_counter() - t)
    return out


def du(path: Path) -> int:
    return int(
        subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True).stdout.split()[0]
    )


def run(size: int, args: argparse.Namespace, dsn: str) -> None:
    emb = HashingEmbeddings(args.dim)
    name = f"scale{size}"
    stem = stemmer()
    print(
        f"\n== {size:,} chunks ({args.dim}-d {args.vectors} vectors, {args.words} words a chunk) "
        f"load {load()}",
        flush=True,
    )
    # ---------------------------------------------------------------- make the chunks
    t = time.perf_counter()
    filings: list[tuple[str, str, list[Chunk], np.ndarray]] = []
    all_texts: list[str] = []
    if args.vectors == "random":
        emb = LookupEmbeddings(args.dim)
    centres: dict[str, np.ndarray] = {}
    vrng = np.random.default_rng(size + 1)
    for f, corp, date, texts in synthetic(size, args.words, seed=size):
        if args.vectors == "random":  # clustered by company: a filing's chunks lie near it
            centre = centres.setdefault(corp, vrng.standard_normal(args.dim))
            vecs = normalise(centre + 1.5 * vrng.standard_normal((len(texts), args.dim)))
        else:
            vecs = normalise(np.asarray(emb.embed_documents(texts)))
        chunks = [
            Chunk(f"f{f}#{i}", f"f{f}", text, 0, len(text),
                  {"doc_id": f"f{f}", "chunk_id": f"f{f}#{i}", "chunk_index": i,
                   "corp_code": corp, "date": date, "rcept_dt": date.replace("-", ""),
                   "source": f"f{f}.xml", "start": 0, "end": len(text),
                   "content_hash": content_hash(text)})
            for i, text in enumerate(texts)
        ]  # fmt: skip
        filings.append((f"f{f}", corp, chunks, vecs))
        all_texts += texts
    print(f"made chunks and vectors in {time.perf_counter() - t:.0f} s", flush=True)
    rng = np.random.default_rng(1)
    queries: list[tuple[str, dict | None]] = []
    filtered: list[tuple[str, dict | None]] = []
    for _ in range(args.queries):
        doc, corp, chunks, _ = filings[int(rng.integers(len(filings)))]
        row = int(rng.integers(len(chunks)))
        words = chunks[row].text.split()[2:]
        q = " ".join(rng.choice(words, size=5, replace=False))
        if isinstance(emb, LookupEmbeddings):  # the query's vector: near its chunk's
            vecs = next(v for d, _, _, v in filings if d == doc)
            emb.queries[q] = vecs[row] + 0.5 * rng.standard_normal(args.dim) / args.dim**0.5
        queries.append((q, None))
        year = int(chunks[0].metadata["date"][:4])
        filtered.append(
            (q, {"company": corp, "date_from": f"{year}-01-01", "date_to": f"{year}-12-31"})
        )

    # ---------------------------------------------------------------- pgvector
    if args.faiss_only:
        faiss_side(size, args, dsn, name, filings, all_texts, emb, stem, queries, filtered)
        return
    if args.reuse:
        print("pgvector build: reusing the tables kept by an earlier --keep run", flush=True)
        upgrade(dsn, name, emb, args.dim)
    elif args.bulk:
        bulk_pg(size, args, dsn, name, filings, emb, stem)
    else:
        build_pg(size, args, dsn, name, filings, emb, stem)
    pg = PgIndex(dsn, name=name, embeddings=emb)
    for label, qs in (("unfiltered", queries), ("company+year", filtered)):
        timed(pg.search, qs[:3])  # warm the connection and caches
        print(
            f"pgvector search {label:13s} {percentiles(timed(pg.search, qs))}  load {load()}",
            flush=True,
        )
    pg.close()
    if args.pg_only:
        return
    faiss_side(size, args, dsn, name, filings, all_texts, emb, stem, queries, filtered)


def full_scan_bm25(self: PgIndex, conn, terms, where, avgdl: float, n: int) -> list:
    """BM25 over every chunk holding a query term (``--full-scan-bm25``)."""
    return self._bm25(conn, terms, where, avgdl, top=n)


def upgrade(dsn: str, name: str, emb: Embeddings, dim: int) -> None:
    """Kept tables of an earlier layout brought up to date (as ``refgate index`` does)."""
    with connect(dsn) as conn:
        t = time.perf_counter()
        ensure_layout(conn, Tables(table_prefix(name, embeddings_id(emb))), dim)
        conn.execute(
            "VACUUM ANALYZE "
            + ", ".join(f'"{table_prefix(name, embeddings_id(emb))}_{p}"' for p in PARTS)
        )
    print(
        f"pgvector layout checked (upgraded if older) and analysed in {time.perf_counter() - t:.0f} s"
        f"  load {load()}",
        flush=True,
    )


class LookupEmbeddings(Embeddings):
    """Synthetic vectors: a query's vector is looked up (set beside the query's text)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.embeddings_id = f"synthetic:{dim}"
        self.queries: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError("synthetic vectors are made, not embedded")

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.queries[text]]


def bulk_pg(size, args, dsn, name, filings, emb, stem) -> None:
    """The same tables filled by one COPY per table (rows, windows, document frequencies,
    statistics), then the HNSW graph: how fast a first fill of a desk's index can go."""
    with connect(dsn) as conn:
        drop_tables(conn, name, embeddings_id(emb))
        tables = create_tables(
            conn, name=name, embeddings_id=embeddings_id(emb),
            embeddings={"kind": "class", "class": "index_scale:LookupEmbeddings"},
            dimension=args.dim,
            spec=index_spec(emb, tokenizer=None, stem=stem, window_tokens=254),
        )  # fmt: skip
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(tables.name("windows_hnsw"))))
        # the postings' primary key built once after the rows, as the graph is
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                tables.postings, sql.Identifier(tables.name("postings_pkey"))
            )
        )
        t = time.perf_counter()
        df: Counter[str] = Counter()
        n_terms = 0
        vsum = np.zeros(args.dim, dtype=np.float64)
        with conn.transaction():
            cur = conn.cursor()
            cid = 0
            with cur.copy(
                sql.SQL(
                    "COPY {} (id, chunk_id, doc_id, ord, text, metadata, corp_code, date, source,"
                    " dl, terms, tfs, vec, window_hashes) FROM STDIN"
                ).format(tables.chunks)
            ) as copy:
                # the synthetic words are single tokens: tokenise each distinct word once, as
                # bm25s would (``query_tokens``), instead of every text
                known: dict[str, list[str]] = {}

                def words(text: str) -> Counter[str]:
                    out: Counter[str] = Counter()
                    for w in text.split():
                        if w not in known:
                            known[w] = query_tokens(w, stem, None)
                        out.update(known[w])
                    return out

                for doc_id, corp, chunks, vecs in filings:
                    terms = [words(c.text) for c in chunks]
                    for c, v, tc in zip(chunks, vecs, terms, strict=True):
                        cid += 1
                        names = sorted(tc)
                        dl = sum(tc.values())
                        df.update(names)
                        n_terms += dl
                        vsum += v
                        m = c.metadata
                        copy.write_row((
                            cid, c.chunk_id, doc_id, m["chunk_index"], c.text, Jsonb(m), corp,
                            m["date"], m["source"], dl, names, [tc[k] for k in names], v,
                            [c.chunk_id],
                        ))  # fmt: skip
            cid = 0
            with cur.copy(
                sql.SQL("COPY {} (term, chunk, tf, dl) FROM STDIN").format(tables.postings)
            ) as copy:
                for _doc_id, _corp, chunks, _vecs in filings:
                    for c in chunks:
                        cid += 1
                        tc = words(c.text)
                        dl = sum(tc.values())
                        for term, tf in tc.items():
                            copy.write_row((term, cid, tf, dl))
            cid = 0
            with cur.copy(
                sql.SQL("COPY {} (chunk, hash, corp_code, date, vec) FROM STDIN").format(
                    tables.windows
                )
            ) as copy:
                for _doc_id, corp, chunks, vecs in filings:
                    for c, v in zip(chunks, vecs, strict=True):
                        cid += 1
                        copy.write_row((cid, c.chunk_id, corp, c.metadata["date"], v))
            with cur.copy(sql.SQL("COPY {} (term, df) FROM STDIN").format(tables.df)) as copy:
                for term, n in df.items():
                    copy.write_row((term, n))
            with cur.copy(
                sql.SQL("COPY {} (doc_id, hash, corp_code, chunks) FROM STDIN").format(tables.docs)
            ) as copy:
                for doc_id, corp, chunks, _ in filings:
                    copy.write_row((doc_id, doc_id, corp, len(chunks)))
            conn.execute(
                sql.SQL("UPDATE {} SET chunks = %s, terms = %s, windows = %s, vsum = %s").format(
                    tables.stats
                ),
                [cid, n_terms, cid, vsum.tolist()],
            )
            conn.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [tables.name("chunks"), cid]
            )
        t_key = time.perf_counter()
        conn.execute(sql.SQL(POSTINGS_KEY[0]).format(
            postings=tables.postings, postings_pkey=sql.Identifier(tables.name("postings_pkey"))))  # fmt: skip
        rows_s = time.perf_counter() - t
        print(f"postings primary key: {time.perf_counter() - t_key:.0f} s", flush=True)
        hnsw_s, pg_bytes = finish_pg(conn, tables, args)
    print(
        f"pgvector bulk fill: rows {rows_s:.0f} s ({size / rows_s:,.0f} chunks/s, one COPY per "
        f"table), HNSW graph {hnsw_s:.0f} s; total {size / (rows_s + hnsw_s):,.0f} chunks/s; "
        f"size {pg_bytes / 2**20:,.0f} MiB  load {load()}",
        flush=True,
    )


def finish_pg(conn, tables, args) -> tuple[float, int]:
    """After the rows: the HNSW graph built once, statistics analysed; (graph seconds, bytes)."""
    conn.execute(f"SET maintenance_work_mem = '{args.maintenance_mem}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    t = time.perf_counter()
    create_hnsw(conn, tables)
    hnsw_s = time.perf_counter() - t
    conn.execute("VACUUM ANALYZE " + ", ".join(
        f'"{tables.name(p)}"' for p in PARTS if p != "stats"))  # fmt: skip
    pg_bytes = sum(
        int(conn.execute("SELECT pg_total_relation_size(%s)", [tables.name(p)]).fetchone()[0])
        for p in PARTS
    )
    return hnsw_s, pg_bytes


def build_pg(size, args, dsn, name, filings, emb, stem) -> None:
    """The real write path, one transaction per filing, then the HNSW graph built once."""
    with connect(dsn) as conn:
        drop_tables(conn, name, embeddings_id(emb))
        tables = create_tables(
            conn, name=name, embeddings_id=embeddings_id(emb),
            embeddings=dict(embeddings_spec(emb)), dimension=args.dim,
            spec=index_spec(emb, tokenizer=None, stem=stem, window_tokens=254),
        )  # fmt: skip
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(tables.name("windows_hnsw"))))
        t = time.perf_counter()
        for doc_id, corp, chunks, vecs in filings:
            d = PreparedDoc(doc_id, doc_id, {"doc_id": doc_id, "corp_code": corp}, chunks,
                            [[(f"{c.chunk_id}", "")] for c in chunks])  # fmt: skip
            d.vectors = [[v] for v in vecs]
            d.terms = chunk_terms([c.text for c in chunks], stem, None)
            write_doc(conn, tables, d, dimension=args.dim)
        rows_s = time.perf_counter() - t
        hnsw_s, pg_bytes = finish_pg(conn, tables, args)
    print(
        f"pgvector build: rows {rows_s:.0f} s ({size / rows_s:,.0f} chunks/s, one transaction "
        f"per filing of {CHUNKS_PER_FILING}), HNSW graph {hnsw_s:.0f} s; total "
        f"{size / (rows_s + hnsw_s):,.0f} chunks/s; size {pg_bytes / 2**20:,.0f} MiB  "
        f"load {load()}",
        flush=True,
    )


def faiss_side(size, args, dsn, name, filings, all_texts, emb, stem, queries, filtered) -> None:
    """The FAISS path on the same chunks and vectors, and the top-10 overlap of the two."""
    t = time.perf_counter()
    chunks_all = [c for _, _, cs, _ in filings for c in cs]
    mat = np.concatenate([v for *_, v in filings])
    index = faiss_index_for(mat)
    faiss_s = time.perf_counter() - t
    t = time.perf_counter()
    bm25 = build_bm25(all_texts, stem)
    bm25_s = time.perf_counter() - t
    folder = Path(tempfile.mkdtemp(prefix="index_scale_"))
    manifest = new_manifest(emb, min_tokens=512, max_tokens=1024, overlap_tokens=50,
                            dense="chunk", window_tokens=254)  # fmt: skip
    write_files(folder, StoredIndex(chunks_all, index, bm25), manifest)
    faiss_bytes = du(folder)
    print(
        f"FAISS build: {type(index).__name__} {faiss_s:.0f} s + bm25s {bm25_s:.0f} s "
        f"({size / (faiss_s + bm25_s):,.0f} chunks/s); size {faiss_bytes / 2**20:,.0f} MiB  "
        f"load {load()}",
        flush=True,
    )
    di = DocumentIndex(folder, chunks_all, index, bm25, emb, manifest)
    for label, qs in (("unfiltered", queries), ("company+year", filtered)):
        timed(di.search, qs[:3])
        print(
            f"FAISS search    {label:13s} {percentiles(timed(di.search, qs))}  load {load()}",
            flush=True,
        )
    # the same hits? (top 10 overlap, exact FAISS below its HNSW threshold)
    if args.faiss_only:
        shutil.rmtree(folder, ignore_errors=True)
        return
    pg = PgIndex(dsn, name=name, embeddings=emb)
    overlap = []
    for q, f in (queries + filtered)[:40]:
        a = {h.chunk_id for h in pg.search(q, k=10, filters=f, mmr=False)}
        b = {h.chunk_id for h in di.search(q, k=10, filters=f, mmr=False)}
        overlap.append(len(a & b) / max(1, len(b)))
    pg.close()
    print(f"top-10 overlap pgvector vs FAISS: {np.mean(overlap):.3f} over {len(overlap)} queries")
    shutil.rmtree(folder, ignore_errors=True)
    if not args.keep:
        with connect(dsn) as conn:
            drop_tables(conn, name, embeddings_id(emb))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="100000", help="chunk counts, comma-separated")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--words", type=int, default=40)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--maintenance-mem", default="2GB", help="maintenance_work_mem for HNSW")
    ap.add_argument("--keep", action="store_true", help="keep the pgvector tables afterwards")
    ap.add_argument("--reuse", action="store_true", help="search the tables a --keep run kept")
    ap.add_argument("--pg-only", action="store_true", help="measure pgvector only")
    ap.add_argument(
        "--full-scan-bm25",
        action="store_true",
        help="pgvector's unfiltered BM25 scores every chunk holding a term (the path before the"
        " postings table), for comparison",
    )
    ap.add_argument("--faiss-only", action="store_true", help="measure FAISS only")
    ap.add_argument(
        "--bulk", action="store_true", help="fill pgvector by one COPY per table, not the writer"
    )
    ap.add_argument(
        "--vectors",
        choices=["hashing", "random"],
        default="hashing",
        help="hashing: embed the synthetic text; random: vectors clustered by company (fast)",
    )
    args = ap.parse_args()
    if args.full_scan_bm25:
        PgIndex._bm25_top = full_scan_bm25  # type: ignore[method-assign]
    dsn = os.environ.get("REFGATE_INDEX_DSN") or os.environ.get("REFGATE_TEST_POSTGRES_URL")
    if not dsn:
        raise SystemExit("set REFGATE_INDEX_DSN (scripts/start_postgres.sh --pgvector prints one)")
    print(f"index_scale: {os.cpu_count()} cores, load {load()}")
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args, dsn)


if __name__ == "__main__":
    main()

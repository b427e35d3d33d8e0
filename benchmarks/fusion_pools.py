"""Dump every long-document question's candidate pool, as ``DocumentIndex.search`` sees it, for
searching fusion rules offline (``fusion_search.py``).

Per question (every set and split of ``long_documents.py``): the chunks the question may reach
(its filter), each chunk's cosine (its best window's), BM25 score and unit (page or document),
the dense list's 100 best (``dense_top``, as search takes them), the BM25 list's 100 best (``bm25_top``), the
gold units, the split, the reachable chunks' homogeneity (mean cosine between two of them) and
the chunks of the 100 best windows
(a chunk once per window), the top 10 that ``search`` itself returns for BM25, dense, RRF and the shipped default. Nothing is embedded but the
questions: the indexes are ``long_documents.py``'s, loaded from its workdir.

Run: ``python benchmarks/fusion_pools.py --financebench DIR --climretrieve DIR --workdir DIR
--out pools.pkl`` (after ``long_documents.py`` built its indexes in that workdir).
"""

from __future__ import annotations

import argparse
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import long_documents as ld
import numpy as np
from retrieval_quality import QueryMemo

from refgate.retrieval import DocumentIndex, MiniLMEmbeddings
from refgate.retrieval.bm25 import bm25_scores, bm25_top
from refgate.retrieval.dense import dense_top
from refgate.retrieval.fusion import corpus_homogeneity
from refgate.retrieval.index_files import read_manifest
from refgate.retrieval.ranking import CANDIDATES

#: The rankings search() itself is asked for (``fusion_search.py`` checks its own against them).
SEARCHED: dict[str, dict[str, Any]] = {**ld.BASELINES, "shipped default": {}}


def pools(index: DocumentIndex, questions: list, unit: Any, split: str) -> list[dict[str, Any]]:
    """One record per question (see the module's docstring)."""
    fi = index.faiss_index
    windows = fi.reconstruct_n(0, fi.ntotal)
    first = index._first_window
    units = [unit(c.metadata) for c in index.chunks]
    chunk_vecs = np.stack([index.chunk_vector(i) for i in range(len(index.chunks))])
    out = []
    for q, rel, *scope in questions:
        mask = index.filter_mask(scope[0] if scope else None)
        allowed = np.arange(len(index.chunks)) if mask is None else np.flatnonzero(mask)
        qvec = index.embed_query(q)
        ws = windows @ qvec[0]
        cos = np.maximum.reduceat(ws, first) if first is not None else ws
        # the reachable windows' 100 best (window mode), as positions of their chunks
        owner = index._window_chunk
        reach = np.arange(len(ws)) if owner is None else np.flatnonzero(np.isin(owner, allowed))
        best = reach[np.argsort(-ws[reach], kind="stable")[:CANDIDATES]]
        bm = bm25_scores(index.bm25, q, index._stem, mask, index._tokenizer)
        bm = np.zeros(len(index.chunks)) if bm is None else bm
        top = dense_top(fi, qvec, CANDIDATES, mask, len(index.chunks), index._window_chunk)
        where = {int(r): i for i, r in enumerate(allowed)}
        # what search itself returns (top 10, positions into rows), to check the offline rules
        searched = {
            label: [
                where[index._by_id[h.chunk_id]]
                for h in index.search(q, k=ld.K, filters=scope[0] if scope else None, **kw)
            ]
            for label, kw in SEARCHED.items()
        }
        out.append(
            {
                "split": split,
                "q": q,
                "gold": set(rel),
                "rows": allowed,
                "cos": cos[allowed].astype(np.float64),
                "bm25": bm[allowed].astype(np.float64),
                "units": [units[i] for i in allowed],
                # positions (into rows) of the dense list, best first, as search takes it
                "dense_list": np.asarray([where[int(r)] for r, _ in top], dtype=np.int64),
                "bm25_list": np.asarray(
                    [where[r] for r, _ in bm25_top(bm, CANDIDATES)], dtype=np.int64
                ),
                "doc_homogeneity": corpus_homogeneity(chunk_vecs[allowed]),
                "window_list": np.asarray(
                    [where[int(owner[w] if owner is not None else w)] for w in best],
                    dtype=np.int64,
                ),
                "searched": searched,
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--financebench", type=Path)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--climretrieve", type=Path)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    work = args.workdir
    builders: dict[str, Any] = {}
    if args.financebench:
        builders["FinanceBench filings"] = lambda: ld.financebench_set(
            args.financebench, work, args.every
        )
    if args.climretrieve:
        builders["ClimRetrieve reports"] = lambda: ld.climretrieve_set(args.climretrieve, work)
    builders["FOMC minutes (PDF pages)"] = lambda: ld.minutes_set(work)
    builders["FOMC statements"] = ld.statements_set
    for name, value in ld.tatqa_sets().items():
        builders[name] = lambda value=value: value
    data: dict[str, Any] = {}
    memos: dict[str, QueryMemo] = {}
    for name, build in builders.items():
        _, *splits = build()
        path = work / re.sub(r"\W+", "-", name.lower())
        # the questions are embedded by the encoder the index was built with (long_documents.py
        # builds through a QueryMemo, so the manifest's embeddings_id names the inner MiniLM)
        key = read_manifest(path)["embeddings_id"]
        memo = memos.setdefault(key, QueryMemo(MiniLMEmbeddings(int8=key.endswith(":int8"))))
        index = DocumentIndex.load(path, embeddings=memo)
        unit = (
            ld.page_id
            if name.startswith(("FOMC minutes", "FinanceBench", "ClimRetrieve"))
            else ld._doc_unit
        )
        records = []
        for split, qs in zip(ld.SPLITS, splits, strict=True):
            records += pools(index, qs, unit, split)
        data[name] = {"homogeneity": index.homogeneity, "questions": records}
        print(f"{name}: {len(records)} questions", file=sys.stderr, flush=True)
    with args.out.open("wb") as f:
        pickle.dump(data, f)


if __name__ == "__main__":
    main()

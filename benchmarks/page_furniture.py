"""Page furniture and recall: the same pages with their running header and footer dropped (the
loader's default) or kept in the indexed text, searched with the same questions.

Pages: the FOMC minutes (../shared/data/fomc-minutes, public domain) rendered into A4 PDFs as
``long_documents.render_minutes`` does, with the furniture an official PDF carries drawn on every
page: a running header ("Minutes of the Federal Open Market Committee" with the meeting date, and
"Table of Contents") and a footer ("Page n of N" and the publisher's site). Questions and gold
pages: ``long_documents.MINUTES_QUESTIONS`` (tuning: odd, held-out: even) and ``MINUTES_FRESH``,
gold pages decided by each question's regular expression on the page text. Figures: recall@10 and
MRR@10 of BM25 and (``--dense``) MiniLM dense and the default hybrid, furniture dropped against
kept, side by side in one run.

``--financebench DIR``: real filings instead, FinanceBench's (``long_documents.financebench_set``:
each question searching its own filing's sampled pages, split by company). The loader's pages
(furniture dropped) against the same pages with their dropped lines put back at the top of the
page text (BM25 does not see positions; a page split into two chunks gets them in the first).

Run: ``python benchmarks/page_furniture.py [--dense] [--financebench DIR [--every 10]]
[--workdir DIR]``.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from long_documents import (
    MINUTES_FRESH,
    MINUTES_QUESTIONS,
    financebench_set,
    render_minutes,
)

import refgate.retrieval.loaders.pdf as pdf_loader
from refgate.retrieval import DocumentIndex, HashingEmbeddings, load_documents

K = 10


def page_id(meta: dict[str, Any]) -> str:
    return f"{meta['file_id']}#p{meta['page']}"


def gold(docs: list, spec: list) -> list[tuple[str, set[str]]]:
    pages = {page_id(d.metadata): re.sub(r"\s+", " ", d.page_content) for d in docs}
    out = []
    for q, rx, prefix in spec:
        rel = {
            p
            for p, t in pages.items()
            if p.startswith(f"minutes-{prefix}") and re.search(rx, t, re.I)
        }
        if rel:
            out.append((q, rel))
    return out


def scores(index: DocumentIndex, questions: list, mode: str) -> tuple[float, float]:
    recall, mrr = [], []
    for q, rel, *scope in questions:
        filters = scope[0] if scope else None
        hits = index.search(q, k=K, mode=mode, mmr=mode == "hybrid", filters=filters)
        ranked = [f"{h.metadata['file_id']}#p{h.metadata['page']}" for h in hits]
        recall.append(len(set(ranked) & rel) / min(len(rel), K))
        first = next((i for i, p in enumerate(ranked, start=1) if p in rel), None)
        mrr.append(1 / first if first else 0.0)
    return sum(recall) / len(recall), sum(mrr) / len(mrr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dense", action="store_true", help="also MiniLM dense and hybrid")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--financebench", type=Path, help="folder with pdfs/ and the jsonl")
    ap.add_argument("--every", type=int, default=10, help="FinanceBench: every n-th page")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        if args.financebench:
            filings(work, args.financebench, args.every, args.dense)
            return
        folder = render_minutes(work / "minutes_furniture_pdfs", furniture=True)
        dropped = load_documents(folder)
        keep = pdf_loader.furniture_keys
        pdf_loader.furniture_keys = lambda pages: set()  # the loader without furniture removal
        try:
            kept = load_documents(folder)
        finally:
            pdf_loader.furniture_keys = keep
        removed = sum(len(d.metadata.get("furniture", [])) for d in dropped)
        print(f"{len(dropped)} pages; {removed} furniture lines dropped by the loader\n")
        if args.dense:
            from refgate.retrieval import MiniLMEmbeddings

            emb: Any = MiniLMEmbeddings(int8=True)  # the document index's encoder
            modes = ["bm25", "dense", "hybrid"]
        else:
            emb, modes = HashingEmbeddings(64), ["bm25"]
        splits = {
            "tuning": gold(kept, MINUTES_QUESTIONS)[0::2],
            "held-out": gold(kept, MINUTES_QUESTIONS)[1::2],
            "fresh": gold(kept, MINUTES_FRESH),
        }
        indexes = {}
        for name, docs in (("dropped", dropped), ("kept", kept)):
            indexes[name] = DocumentIndex.build(docs, work / f"ix-{name}", embeddings=emb)
        print("| split | questions | method | recall@10 dropped / kept | MRR@10 dropped / kept |")
        print("|---|---|---|---|---|")
        for split, questions in splits.items():
            for mode in modes:
                rd, md = scores(indexes["dropped"], questions, mode)
                rk, mk = scores(indexes["kept"], questions, mode)
                print(
                    f"| {split} | {len(questions)} | {mode} | {rd:.3f} / {rk:.3f} "
                    f"| {md:.3f} / {mk:.3f} |"
                )


def filings(work: Path, folder: Path, every: int, dense: bool) -> None:
    """The FinanceBench comparison (see the module's docstring)."""
    dropped, tuning, held, _ = financebench_set(folder, work, every)
    kept = [
        Document(
            page_content="\n".join([*d.metadata.get("furniture", []), d.page_content]),
            metadata=d.metadata,
        )
        for d in dropped
    ]
    with_lines = sum(bool(d.metadata.get("furniture")) for d in dropped)
    files = {d.metadata["file_id"] for d in dropped}
    files_with = {d.metadata["file_id"] for d in dropped if d.metadata.get("furniture")}
    removed = sum(len(d.metadata.get("furniture", [])) for d in dropped)
    print(
        f"{len(dropped)} pages of {len(files)} filings; {removed} furniture lines dropped on "
        f"{with_lines} pages of {len(files_with)} filings\n"
    )
    if dense:
        from refgate.retrieval import MiniLMEmbeddings

        emb: Any = MiniLMEmbeddings(int8=True)  # the document index's encoder
        modes = ["bm25", "dense", "hybrid"]
    else:
        emb, modes = HashingEmbeddings(64), ["bm25"]
    cache = work / "embeddings.sqlite"
    indexes = {
        name: DocumentIndex.build(docs, work / f"fb-ix-{name}", embeddings=emb, cache_path=cache)
        for name, docs in (("dropped", dropped), ("kept", kept))
    }
    print("| split | questions | method | recall@10 dropped / kept | MRR@10 dropped / kept |")
    print("|---|---|---|---|---|")
    for split, questions in (("tuning", tuning), ("held-out", held)):
        for mode in modes:
            rd, md = scores(indexes["dropped"], questions, mode)
            rk, mk = scores(indexes["kept"], questions, mode)
            print(
                f"| {split} | {len(questions)} | {mode} | {rd:.3f} / {rk:.3f} "
                f"| {md:.3f} / {mk:.3f} |"
            )


if __name__ == "__main__":
    main()

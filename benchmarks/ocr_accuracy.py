"""OCR accuracy and cost: pages that have a text layer, read again by OCR, against that layer.

Pages: the FOMC minutes (../shared/data/fomc-minutes, public domain) rendered into A4 PDFs by
``long_documents.render_minutes`` (Helvetica 10 pt), ``--pages`` of them spread evenly over the
corpus. Each page is rendered to an image at each ``--dpi`` and read by ``ocr.tesseract_words`` in
every installed language (eng+kor); the reference is the page's text layer as the loader reads
it. Figures per resolution: character error rate (Levenshtein distance over the reference's length, white space
folded), word recall (share of the reference's words that OCR read), the mean OCR confidence,
and CPU seconds per page, side by side in one run. Each page is read once per resolution and
its words laid out twice: as the loader does (Korean syllables boxed apart joined across narrow
gaps, ``HANGUL_JOIN_GAP``) and with every box a word of its own ("boxes"). Pages alternate
between a "tuning" part (the join's gap was chosen on it) and a "held-out" part.

``--korean``: Korean pages instead, the section texts of the Korean sample workspace
(examples/kr-filings/documents, synthetic filings written for the sample: real Hangul prose,
figures and tables), rendered by ``render_korean`` in NanumGothic 10 pt (Debian's
``fonts-nanum``, SIL OFL; the benchmark stops with a message when it is not installed).

``--lang`` and ``--psm`` read with other Tesseract languages and page segmentation: the loader
reads a document's first pages with ``--lang kor+eng --psm 6`` at 150 dpi
(``ocr_pages.FIRST_READING``) and later Hangul pages with ``kor`` alone at 120 dpi, its doubtful
words again with ``eng`` (``ocr_pages.READING``, ``ocr_latin``); this script reads one way.

Run: ``python benchmarks/ocr_accuracy.py [--pages 12] [--dpi 150,200,300] [--korean]
[--lang kor+eng] [--psm 6] [--workdir DIR]``.
"""

from __future__ import annotations

import argparse
import html
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from long_documents import render_minutes
from rapidfuzz.distance import Levenshtein

from refgate.retrieval import load_documents
from refgate.retrieval.loaders.ocr import (
    HANGUL_JOIN_GAP,
    installed_languages,
    read_lines,
    tesseract_words,
)
from refgate.retrieval.loaders.pdf import _open, read_pdf


def folded(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def word_recall(reference: str, read: str) -> float:
    ref = Counter(re.findall(r"\w+", reference.lower()))
    got = Counter(re.findall(r"\w+", read.lower()))
    total = sum(ref.values())
    return sum((ref & got).values()) / total if total else 1.0


REPO = Path(__file__).resolve().parents[1]
KOREAN_DOCUMENTS = REPO / "examples/kr-filings/documents"
KOREAN_FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


def render_korean(out: Path) -> Path:
    """The Korean sample's sections as A4 PDFs (reportlab, NanumGothic 10 pt on 14 pt lines),
    one per filing."""
    # deferred: reportlab is a dev dependency, needed only to render the pages
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    if not KOREAN_FONT.is_file():
        sys.exit(f"{KOREAN_FONT} is missing: apt-get install fonts-nanum")
    pdfmetrics.registerFont(TTFont("NanumGothic", str(KOREAN_FONT)))
    style = ParagraphStyle("korean", fontName="NanumGothic", fontSize=10, leading=14)
    out.mkdir(parents=True, exist_ok=True)
    by_file: dict[str, list[str]] = {}
    for doc in load_documents(KOREAN_DOCUMENTS):
        by_file.setdefault(doc.metadata["file_id"], []).append(doc.page_content)
    for name, sections in sorted(by_file.items()):
        target = out / f"{Path(name).name}.pdf"
        if target.is_file():
            continue
        lines = [line for text in sections for line in text.splitlines()]
        story = [
            Paragraph(html.escape(line, quote=False), style) if line.strip() else Spacer(1, 14)
            for line in lines
        ]
        margins = {"leftMargin": 15 * mm, "rightMargin": 15 * mm, "topMargin": 15 * mm}
        SimpleDocTemplate(str(target), pagesize=A4, bottomMargin=15 * mm, **margins).build(story)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--dpi", default="150,200,300")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--korean", action="store_true", help="Korean pages (see the docstring)")
    ap.add_argument("--lang", default=None, help="Tesseract languages (default: all installed)")
    ap.add_argument("--psm", type=int, default=None, help="page segmentation mode (default 3)")
    args = ap.parse_args()
    languages = tuple(args.lang.split("+")) if args.lang else None
    dpis = [int(d) for d in args.dpi.split(",")]
    print(f"Tesseract languages: {'+'.join(installed_languages())}")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        if args.korean:
            folder = render_korean(work / "korean_pdfs")
        else:
            folder = render_minutes(work / "minutes_pdfs")
        pdfs = sorted(folder.glob("*.pdf"))
        pages = [(pdf, part) for pdf in pdfs for part in read_pdf(pdf)]
        step = max(1, len(pages) // args.pages)
        sample = pages[::step][: args.pages]
        rows: dict[tuple[int, str, str], list[tuple[float, ...]]] = {}
        for n, (pdf, part) in enumerate(sample):
            half = "tuning" if n % 2 == 0 else "held-out"
            doc = _open(pdf)
            try:
                page = doc[int(part.meta["page"]) - 1]
                reference = folded(part.text)
                for dpi in dpis:
                    bitmap = page.render(scale=dpi / 72, grayscale=True)
                    image = bitmap.to_pil()
                    start = time.process_time()
                    wall = time.perf_counter()
                    data = tesseract_words(image, timeout_s=300, languages=languages, psm=args.psm)
                    # Tesseract runs as a child process: count its wall time, not our CPU
                    cost = max(time.perf_counter() - wall, time.process_time() - start)
                    bitmap.close()
                    for layout, gap in (("loader", HANGUL_JOIN_GAP), ("boxes", 0.0)):
                        text, confidence = read_lines(data, gap)
                        cer = Levenshtein.distance(reference, folded(text)) / max(1, len(reference))
                        # spacing apart (Tesseract's Korean model splits and joins words)
                        bare = re.sub(r"\s", "", reference)
                        cer_bare = Levenshtein.distance(bare, re.sub(r"\s", "", text)) / max(
                            1, len(bare)
                        )
                        recall = word_recall(reference, text)
                        row = (cer, recall, confidence, cost, cer_bare)
                        for key in ((dpi, layout, half), (dpi, layout, "all")):
                            rows.setdefault(key, []).append(row)
                page.close()
            finally:
                doc.close()
    print(f"{len(sample)} pages of {len(pdfs)} PDFs ({len(pages)} pages in all)")
    print(
        "| dpi | words | pages | CER (mean) | CER (worst page) | CER without spaces | word recall "
        "| confidence | s/page |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (dpi, layout, half), r in sorted(
        rows.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])
    ):
        cers = [x[0] for x in r]
        print(
            f"| {dpi} | {layout} | {half} ({len(r)}) | {statistics.mean(cers):.2%} "
            f"| {max(cers):.2%} | {statistics.mean(x[4] for x in r):.2%} "
            f"| {statistics.mean(x[1] for x in r):.2%} | {statistics.mean(x[2] for x in r):.3f} "
            f"| {statistics.mean(x[3] for x in r):.2f} |"
        )


if __name__ == "__main__":
    main()

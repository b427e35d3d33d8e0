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

Run: ``python benchmarks/page_furniture.py [--dense] [--workdir DIR]``.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_documents import MINUTES, MINUTES_FRESH, MINUTES_QUESTIONS  # noqa: E402

import refgate.retrieval.loaders.pdf as pdf_loader  # noqa: E402
from refgate.retrieval import DocumentIndex, HashingEmbeddings, load_documents  # noqa: E402

K = 10


def render(out: Path) -> Path:
    """The minutes as A4 PDFs with a running header and footer on every page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    style = ParagraphStyle("minutes", fontName="Helvetica", fontSize=10, leading=13)
    out.mkdir(parents=True, exist_ok=True)
    for src in sorted(MINUTES.glob("*.txt")):
        date = re.search(r"MeetingDate=(\d{4}-\d{2}-\d{2})", src.name).group(1)
        target = out / f"minutes-{date}.pdf"
        if target.is_file():
            continue
        text = src.read_text(encoding="utf-8-sig", errors="replace")
        text = text.encode("latin-1", "replace").decode("latin-1")
        story = [
            Paragraph(html.escape(line, quote=False), style) if line.strip() else Spacer(1, 13)
            for line in text.splitlines()
        ]

        def furniture(canvas: Any, doc: Any, date: str = date) -> None:
            canvas.saveState()
            canvas.setFont("Helvetica", 8)
            canvas.drawString(
                10 * mm, A4[1] - 8 * mm, f"Minutes of the Federal Open Market Committee {date}"
            )
            canvas.drawRightString(A4[0] - 10 * mm, A4[1] - 8 * mm, "Table of Contents")
            canvas.drawString(10 * mm, 8 * mm, "www.federalreserve.gov")
            canvas.drawRightString(A4[0] - 10 * mm, 8 * mm, f"Page {doc.page}")
            canvas.restoreState()

        margins = {"leftMargin": 10 * mm, "rightMargin": 10 * mm, "topMargin": 14 * mm}
        SimpleDocTemplate(str(target), pagesize=A4, bottomMargin=16 * mm, **margins).build(
            story, onFirstPage=furniture, onLaterPages=furniture
        )
    return out


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
    for q, rel in questions:
        hits = index.search(q, k=K, mode=mode, mmr=mode == "hybrid")
        ranked = [f"{h.metadata['file_id']}#p{h.metadata['page']}" for h in hits]
        recall.append(len(set(ranked) & rel) / min(len(rel), K))
        first = next((i for i, p in enumerate(ranked, start=1) if p in rel), None)
        mrr.append(1 / first if first else 0.0)
    return sum(recall) / len(recall), sum(mrr) / len(mrr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dense", action="store_true", help="also MiniLM dense and hybrid")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        folder = render(work / "minutes_furniture_pdfs")
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

            emb: Any = MiniLMEmbeddings()
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


if __name__ == "__main__":
    main()

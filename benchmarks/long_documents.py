"""Long documents: recall@10 of pages for BM25, dense, hybrid and hybrid+MMR, with the dense side
representing a chunk by the mean of its windows ("mean", the former default), by its best
254-word-piece window ("window") or by its best 128-word-piece child window ("child").

Sets (each split into a tuning part and a held-out part; only tuning parts choose anything):

- **FinanceBench 10-K pages**: real 10-K PDFs and questions written by FinanceBench's annotators
  (Islam et al. 2023, github.com/patronus-ai/financebench, commit cc39aeb; not redistributed here:
  pass ``--financebench DIR`` holding ``pdfs/`` and ``financebench_open_source.jsonl``). Gold
  pages are the dataset's ``evidence_page_num`` (0-based there; + 1 here, checked against the
  evidence's full-page text). The PDFs are read by refgate's own loader, one Document per page.
  The embedder manages ~3 windows a second on this shared machine, so the corpus is a sample of
  the filings' pages: every gold page, its neighbour on each side (the hardest distractors: the
  other statements and notes) and every 40th page. Split by company (alternating in name
  order): no filing of a held-out company is tuned on.
- **FOMC minutes as PDFs**: the 31 minutes of 2007-2010 (../shared/data/fomc-minutes, public
  domain), rendered into A4 PDFs with fpdf2 and read back by the loader. 20 questions written by
  hand for this benchmark, each with a hand-written regular expression (and meeting-date prefix)
  that decides which pages are gold (printed). Odd questions tune, even ones are held out.
- **FOMC statements** (the sample workspace, short documents): the 16 questions of
  ``retrieval_quality.py`` tune, its 18 held-out questions are held out.
- **TAT-QA paragraphs** (short, from real annual reports, CC BY 4.0): the tuning split of
  ``retrieval_quality.py`` (every third question) tunes; its 314 reported questions are held out.

Run: ``python benchmarks/long_documents.py --financebench DIR [--workdir DIR]`` (embeddings are
cached in the workdir; the first run embeds for tens of minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from refgate.embeddings import embeddings_id
from refgate.retrieval import DocumentIndex, MiniLMEmbeddings, load_documents
from refgate.retrieval.cache import EmbeddingCache
from refgate.retrieval.chunking import content_hash

REPO = Path(__file__).resolve().parents[1]
SHARED = next((p / "shared/data" for p in REPO.parents if (p / "shared/data").is_dir()), REPO)
MINUTES = SHARED / "fomc-minutes/minutes"
STATEMENTS = REPO / "examples/us-macro/documents"
K = 10
#: dense weights tried (None: the shipped query-length rule, 0.7 rising to 0.95)
ALPHAS = (0.7, 0.8, 0.9, 0.95, None)
LAMBDAS = (0.85, 0.9, 1.0)
UNITS = {"mean": ("chunk", 254), "window": ("window", 254), "child": ("window", 128)}

#: (question, regex deciding gold pages, meeting-date prefix of the minutes it may come from)
MINUTES_QUESTIONS = [
    (
        "How does the new Term Auction Facility auction discount window credit to banks?",
        r"Term Auction Facility",
        "2007",
    ),
    (
        "What did the minutes say about JPMorgan Chase's acquisition of Bear Stearns?",
        r"Bear Stearns",
        "",
    ),
    (
        "A lending facility for primary dealers created in March 2008",
        r"Primary Dealer Credit Facility",
        "2008-0",
    ),
    ("How did the bankruptcy of Lehman Brothers affect financial markets?", r"Lehman", ""),
    (
        "Authority to pay interest on the reserve balances banks hold at the Fed",
        r"interest on (?:excess )?reserves",
        "",
    ),
    (
        "Decision to purchase up to $1.25 trillion of agency mortgage-backed securities",
        r"\$1\.25 trillion",
        "2009-03",
    ),
    (
        "Buying up to $300 billion of longer-term Treasury securities over six months",
        r"\$300 billion",
        "2009-03",
    ),
    (
        "Purchasing a further $600 billion of longer-term Treasuries by the middle of 2011",
        r"\$600 billion",
        "",
    ),
    (
        "Offering term deposits to depository institutions as a tool to drain reserves",
        r"term deposit facility",
        "2010",
    ),
    (
        "Results of the supervisory stress tests of the largest banks",
        r"Supervisory Capital Assessment|stress test",
        "",
    ),
    (
        "Government assistance to the insurance company AIG",
        r"\bAIG\b|American International Group",
        "",
    ),
    ("Placing Fannie Mae and Freddie Mac into conservatorship", r"conservatorship", ""),
    ("Strains from rising delinquencies on subprime mortgages in 2007", r"subprime", "2007"),
    (
        "Raising the discount rate (primary credit rate) in early 2010",
        r"primary credit rate|discount rate",
        "2010",
    ),
    (
        "Reinvesting principal payments from agency securities in longer-term Treasuries",
        r"reinvest",
        "2010-08",
    ),
    (
        "Facility lending to banks that buy asset-backed commercial paper from money market funds",
        r"Asset-Backed Commercial Paper Money Market Mutual Fund Liquidity Facility",
        "2008",
    ),
    (
        "Concerns about fiscal problems in Greece and other European countries",
        r"Greece|Greek|European sovereign|peripheral European",
        "2010",
    ),
    ("Possible effects of the H1N1 influenza outbreak", r"H1N1|swine flu|influenza", ""),
    (
        "Effect of the expiring homebuyer tax credit on home sales",
        r"homebuyer tax credit|first-time homebuyer",
        "2010",
    ),
    (
        "Temporary reciprocal currency arrangements with the ECB and the Swiss National Bank",
        r"swap (?:line|arrangement)s?|reciprocal currency",
        "2007-12",
    ),
]


class MeanOfWindows(Embeddings):
    """MiniLM's window-mean chunk vectors ("chunk" mode), computed from cached window vectors.

    Identical to ``MiniLMEmbeddings.embed_documents`` (the same 254-word-piece windows, the same
    length weights), but each window's vector comes from the cache the window-mode index fills,
    so the two modes are compared on the same vectors and the corpus is embedded once.
    """

    embeddings_id = "bench:minilm-window-mean"

    def __init__(self, inner: MiniLMEmbeddings, cache: Path) -> None:
        self.inner = inner
        self.cache_path = cache
        self.model_id = embeddings_id(inner)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        spans = [self.inner.window_spans(t) for t in texts]
        pieces = [[t[a:b] for a, b in sp] for t, sp in zip(texts, spans, strict=True)]
        with EmbeddingCache(self.cache_path) as cache:
            flat = {content_hash(p): p for ps in pieces for p in ps}
            have = cache.get_many(self.model_id, list(flat))
            todo = [(h, p) for h, p in flat.items() if h not in have]
            if todo:
                vecs = self.inner.embed_documents([p for _, p in todo])
                fresh = [
                    (h, np.asarray(v, np.float32)) for (h, _), v in zip(todo, vecs, strict=True)
                ]
                cache.put_many(self.model_id, fresh)
                have.update(fresh)
        out = []
        for ps in pieces:
            w = np.array([max(len(p), 1) for p in ps], np.float32)
            v = (np.stack([have[content_hash(p)] for p in ps]) * w[:, None]).sum(axis=0)
            out.append((v / max(float(np.linalg.norm(v)), 1e-12)).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


class QueryMemo(Embeddings):
    def __init__(self, inner: Embeddings) -> None:
        self.inner, self.memo = inner, {}
        self.embeddings_id = embeddings_id(inner)
        if hasattr(inner, "window_spans"):
            self.window_spans = inner.window_spans

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if text not in self.memo:
            self.memo[text] = self.inner.embed_query(text)
        return self.memo[text]


# --------------------------------------------------------------------------------- corpora


def render_minutes(out: Path) -> Path:
    """The minutes as A4 PDFs (fpdf2, Helvetica 10 pt), one per meeting, named by its date."""
    from fpdf import FPDF

    out.mkdir(parents=True, exist_ok=True)
    for src in sorted(MINUTES.glob("*.txt")):
        date = re.search(r"MeetingDate=(\d{4}-\d{2}-\d{2})", src.name).group(1)
        target = out / f"minutes-{date}.pdf"
        if target.is_file():
            continue
        text = src.read_text(encoding="utf-8", errors="replace")
        text = text.encode("latin-1", "replace").decode("latin-1")
        pdf = FPDF(format="A4")
        pdf.set_auto_page_break(True, margin=15)
        pdf.set_font("Helvetica", size=10)
        pdf.add_page()
        pdf.multi_cell(0, 4.6, text)
        pdf.output(str(target))
    return out


def page_id(meta: dict[str, Any]) -> str:
    return f"{meta['file_id']}#p{meta['page']}"


def minutes_set(workdir: Path) -> tuple[list[Document], list, list]:
    folder = render_minutes(workdir / "minutes_pdfs")
    docs = load_documents(folder)
    pages = {page_id(d.metadata): re.sub(r"\s+", " ", d.page_content) for d in docs}
    tuning, held = [], []
    print(
        f"FOMC minutes: {len(docs)} pages of {len(set(d.metadata['file_id'] for d in docs))} PDFs",
        file=sys.stderr,
    )
    for n, (q, rx, prefix) in enumerate(MINUTES_QUESTIONS, start=1):
        rel = {
            p
            for p, t in pages.items()
            if p.startswith(f"minutes-{prefix}") and re.search(rx, t, re.I)
        }
        print(f"  {len(rel):2d} gold pages  {q}", file=sys.stderr)
        if rel:
            (tuning if n % 2 else held).append((q, rel))
    return docs, tuning, held


def financebench_set(folder: Path) -> tuple[list[Document], list, list]:
    rows = [json.loads(line) for line in (folder / "financebench_open_source.jsonl").open()]
    have = {p.stem for p in (folder / "pdfs").glob("*.pdf") if p.stat().st_size}
    rows = [r for r in rows if r["doc_name"] in have]
    gold: dict[str, set[int]] = {}
    questions = []
    for r in rows:
        pages = {
            int(e["evidence_page_num"]) + 1 for e in r["evidence"] if e["doc_name"] == r["doc_name"]
        }
        if pages:
            questions.append(
                (r["company"], r["question"], {f"{r['doc_name']}#p{p}" for p in pages})
            )
            gold.setdefault(r["doc_name"], set()).update(pages)
    docs = []
    loaded = [
        d for d in load_documents(folder / "pdfs", root=folder) if d.metadata["file_id"] in gold
    ]
    for d in loaded:
        n, name = int(d.metadata["page"]), d.metadata["file_id"]
        near = any(abs(n - g) <= 1 for g in gold[name])
        if near or n % 40 == 0:
            docs.append(d)
    companies = sorted({c for c, _, _ in questions})
    held_companies = set(companies[1::2])
    tuning = [(q, rel) for c, q, rel in questions if c not in held_companies]
    held = [(q, rel) for c, q, rel in questions if c in held_companies]
    print(
        f"FinanceBench: {len(docs)} pages sampled from {len(gold)} 10-K PDFs; "
        f"{len(tuning)} tuning / {len(held)} held-out questions "
        f"(held-out companies: {', '.join(sorted(held_companies))})",
        file=sys.stderr,
    )
    return docs, tuning, held


def tatqa_sets() -> dict[str, tuple[list[Document], list, list]]:
    """TAT-QA paragraphs (short, table-heavy annual-report text): the reported 100 dev contexts
    are held out, the tuning split (the other 178, every third question) tunes."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from retrieval_quality import TATQA_DEV, tatqa_corpus, tatqa_tuning_contexts

    reported, held = tatqa_corpus()
    out = {"TAT-QA paragraphs (reported)": (reported, [], held)}
    dev = SHARED / "tatqa-dev/tatqa_dataset_dev.json"
    dev = dev if dev.is_file() else TATQA_DEV
    if dev.is_file():
        docs, questions = tatqa_corpus(tatqa_tuning_contexts(dev))
        out["TAT-QA paragraphs (tuning split)"] = (docs, questions[::3], [])
    return out


def statements_set() -> tuple[list[Document], list, list]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from retrieval_quality import FOMC_HELDOUT, FOMC_QUESTIONS

    docs = load_documents(STATEMENTS, date_from_filename="%Y%m%d", entity="FOMC")
    texts = {d.metadata["doc_id"]: re.sub(r"\s+", " ", d.page_content) for d in docs}

    def qs(spec):
        return [(q, {d for d, t in texts.items() if re.search(rx, t, re.I)}) for q, rx in spec]

    return docs, qs(FOMC_QUESTIONS), qs(FOMC_HELDOUT)


# --------------------------------------------------------------------------------- measuring


def recall(index: DocumentIndex, questions: list, unit: Callable[[Any], str], **kw: Any) -> float:
    total = 0.0
    for q, rel in questions:
        got = {unit(h.metadata) for h in index.search(q, k=K, **kw)}
        total += len(got & rel) / min(len(rel), K)
    return total / max(len(questions), 1)


def methods(index: DocumentIndex, qs: list, unit: Callable, alpha: float, lam: float) -> dict:
    return {
        "BM25": recall(index, qs, unit, mode="bm25", mmr=False),
        "dense": recall(index, qs, unit, mode="dense", mmr=False),
        "hybrid": recall(index, qs, unit, mmr=False, dense_weight=alpha),
        "hybrid+MMR": recall(index, qs, unit, dense_weight=alpha, lambda_mult=lam),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--financebench", type=Path, help="folder with pdfs/ and the jsonl")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/refgate-longdocs"))
    ap.add_argument("--units", default="window,mean,child", help="dense representations")
    ap.add_argument("--embed-only", action="store_true", help="build the indexes and stop")
    ap.add_argument("--only", default="", help="comma-separated name prefixes of sets to run")
    args = ap.parse_args()
    units = [u for u in args.units.split(",") if u in UNITS]
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    minilm = MiniLMEmbeddings()
    cache = work / "embeddings.sqlite"

    sets: dict[str, tuple] = {}
    if args.financebench:
        sets["FinanceBench 10-K pages"] = (*financebench_set(args.financebench), page_id)
    sets["FOMC minutes (PDF pages)"] = (*minutes_set(work), page_id)
    sets["FOMC statements"] = (*statements_set(), lambda m: m["doc_id"])
    for name, tatqa in tatqa_sets().items():
        sets[name] = (*tatqa, lambda m: m["doc_id"])

    if args.only:
        prefixes = [p.strip() for p in args.only.split(",") if p.strip()]
        sets = {k: v for k, v in sets.items() if any(k.startswith(p) for p in prefixes)}
    indexes: dict[tuple[str, str], DocumentIndex] = {}
    for label in units:  # one representation over every set before the next
        for name, (docs, _, _, _) in sets.items():
            slug = re.sub(r"\W+", "-", name.lower())
            dense, size = UNITS[label]
            emb = QueryMemo(MeanOfWindows(minilm, cache) if label == "mean" else minilm)
            t0 = time.perf_counter()
            path = work / f"{slug}-{label}"
            idx = DocumentIndex.build(
                docs, path, embeddings=emb, dense=dense, window_tokens=size, cache_path=cache
            )
            indexes[(name, label)] = idx
            print(
                f"{name} [{label}]: {len(docs)} documents, {len(idx)} chunks, "
                f"{idx.faiss_index.ntotal} vectors, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    if args.embed_only:
        return

    # 1. the three dense representations at the shipped fusion (0.7 / 0.9), every split
    print("\n## recall@10 by dense representation (fusion 0.7 dense, MMR lambda 0.9)\n")
    print(
        "| set | split | questions | BM25 | dense mean | dense window | dense child | "
        "hybrid+MMR mean | hybrid+MMR window | hybrid+MMR child |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    base: dict[tuple[str, str, str], dict] = {}
    for name, (_, tuning, held, unit) in sets.items():
        for split, qs in (("tuning", tuning), ("held-out", held)):
            if not qs:
                continue
            for label in units:
                base[(name, split, label)] = methods(indexes[(name, label)], qs, unit, 0.7, 0.9)
            r = {label: base[(name, split, label)] for label in units}
            print(
                f"| {name} | {split} | {len(qs)} | {r[units[0]]['BM25']:.3f} | "
                + " | ".join(f"{r[u]['dense']:.3f}" if u in r else "-" for u in UNITS)
                + " | "
                + " | ".join(f"{r[u]['hybrid+MMR']:.3f}" if u in r else "-" for u in UNITS)
                + " |",
                flush=True,
            )

    # 2. choose the representation and the fusion on the tuning splits only
    def margin(label: str, alpha: float, lam: float, split: str) -> tuple[float, float]:
        worst, mean, count = 1.0, 0.0, 0
        for name, (_, tuning, held, unit) in sets.items():
            qs = tuning if split == "tuning" else held
            if not qs:
                continue
            count += 1
            idx = indexes[(name, label)]
            fused = recall(idx, qs, unit, dense_weight=alpha, lambda_mult=lam)
            best_single = max(
                base[(name, split, label)]["BM25"], base[(name, split, label)]["dense"]
            )
            worst = min(worst, fused - best_single)
            mean += fused
        return worst, mean / max(count, 1)

    grid = {}
    for label, alpha, lam in itertools.product(units, ALPHAS, LAMBDAS):
        grid[(label, alpha, lam)] = margin(label, alpha, lam, "tuning")
    choice = max(grid, key=lambda key: (grid[key][0] >= 0, grid[key][1], grid[key][0]))
    print("\n## tuning grid (worst margin over best single method, mean recall), tuning splits\n")
    print("| dense | alpha | " + " | ".join(f"lambda {x}" for x in LAMBDAS) + " |")
    print("|---|---|" + "---|" * len(LAMBDAS))
    for label, alpha in itertools.product(units, ALPHAS):
        cells = [
            f"{grid[(label, alpha, lam)][0]:+.3f} / {grid[(label, alpha, lam)][1]:.3f}"
            for lam in LAMBDAS
        ]
        print(f"| {label} | {alpha} | " + " | ".join(cells) + " |")
    label, alpha, lam = choice
    print(f"\nbest on the tuning splits: dense={label}, dense_weight={alpha}, lambda={lam}")

    # 3. the shipped default (DENSE_UNIT, dense_weight_for, DEFAULT_LAMBDA) on every split
    from refgate.retrieval.index import DENSE_UNIT

    shipped = {"chunk": "mean", "window": "window"}[DENSE_UNIT]
    print(f"\n## the shipped default (dense={DENSE_UNIT}, query-length dense weight, MMR 0.9)\n")
    print(
        "| set | split | questions | BM25 | dense | hybrid | hybrid+MMR (default) | previous default "
        "(mean, 0.7, 0.9) | default / best single |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (_, tuning, held, unit) in sets.items():
        for split, qs in (("tuning", tuning), ("held-out", held)):
            if not qs:
                continue
            r = methods(indexes[(name, shipped)], qs, unit, None, None)
            prev = base[(name, split, "mean")]["hybrid+MMR"] if "mean" in units else float("nan")
            best = max(r["BM25"], r["dense"])
            print(
                f"| {name} | {split} | {len(qs)} | {r['BM25']:.3f} | {r['dense']:.3f} | "
                f"{r['hybrid']:.3f} | **{r['hybrid+MMR']:.3f}** | {prev:.3f} | "
                f"{r['hybrid+MMR'] / best:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

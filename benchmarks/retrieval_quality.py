"""Retrieval quality: recall@10 of hybrid+MMR vs dense only vs BM25 only vs LangChain's FAISS
``max_marginal_relevance_search``, on the same chunks and the same MiniLM embeddings.

Corpora:
- FOMC: the sample workspace's statements (examples/us-macro/documents); questions written for
  this benchmark, each with the statements that answer it fixed by a regular expression over the
  texts (printed), so the evidence criterion is explicit and checkable. Two sets: the original 16
  (``FOMC_QUESTIONS``) and 18 held-out ones (``FOMC_HELDOUT``) written later from the statements'
  own wording (by date and topic, not from retrieval output) to check that the fusion chosen on
  the first set generalises.
- TAT-QA: paragraphs of 100 dev contexts (tests/data/tatqa_paragraphs, CC BY 4.0); every text /
  table-text question with its rel_paragraphs as the evidence.
- TAT-QA tuning split: the other 178 dev contexts (the project's shared copy of the dev set,
  ``--tatqa-dev``), the same kind of questions. It is disjoint from every reported set and is
  where MMR's lambda is tuned (printed separately; skipped when the file is absent).

MMR's lambda: recall@10 of hybrid+MMR for every lambda of ``LAMBDA_GRID`` on every set, and the
tuning protocol's choices: the smallest lambda (most diversity) whose recall is at least the
hybrid's without MMR on the tuning split plus one FOMC set, the other FOMC set being reported
(two folds). "ILS" = mean pairwise cosine of the 10 returned chunks (lower = more diverse).

recall@10 = |relevant in the top 10 documents| / min(|relevant|, 10), averaged over questions.
Methods: hybrid (convex score fusion, the default) with and without MMR (and with MMR at the
first round's previous lambda, 0.7), hybrid with reciprocal rank fusion (``fusion="rrf"``) with and without MMR, dense only, BM25 only, LangChain's FAISS MMR.
Run: ``python benchmarks/retrieval_quality.py [--workdir DIR] [--runtime onnx|torch]`` (about 6-7 minutes on 2 cores, most
of it embedding; with ``--workdir`` the indexes and their embedding caches persist, so a re-run
embeds nothing).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from refgate.memory.embeddings import embeddings_id
from refgate.retrieval import DocumentIndex, MiniLMEmbeddings, load_documents
from refgate.retrieval.mmr import DEFAULT_LAMBDA, LAMBDA_GRID

REPO = Path(__file__).resolve().parents[1]
#: the shared data folder beside the checkout (worktrees sit one level deeper than /work/main)
SHARED = next((p / "shared/data" for p in REPO.parents if (p / "shared/data").is_dir()), REPO)
TATQA_DEV = SHARED / "tatqa-dev/tatqa_dataset_dev.json"
TATQA_SUBSET = REPO / "tests/data/tatqa_paragraphs/tatqa_dev_paragraphs_subset.json"
K = 10
PREVIOUS_LAMBDA = 0.7

#: (question, regex whose matches in a statement's text make it relevant)
FOMC_QUESTIONS = [
    (
        "When did the FOMC establish a 0 to 1/4 percent target range for the federal funds rate?",
        r"establish a target range",
    ),
    (
        "Which statement announced the first tightening of reserve conditions in five years?",
        r"first firming",
    ),
    (
        "When did the Committee first raise the target range to 1/4 to 1/2 percent after years near zero?",
        r"raise the target range for the federal funds rate to 1/4 to 1/2 percent",
    ),
    (
        "What did the Committee say about the economic effects of the hurricanes on the Gulf Coast?",
        r"hurricane",
    ),
    ("How did the Fed respond to the terrorist attacks on September 11?", r"attacks"),
    (
        "Program to lengthen the average maturity of Treasury holdings by selling short-term securities",
        r"average maturity",
    ),
    (
        "Forward guidance tying low rates to an unemployment rate above 6-1/2 percent",
        r"unemployment rate remains above 6-1/2 percent",
    ),
    (
        "When might the Committee slow the pace of its asset purchases?",
        r"reduce the pace of its purchases|modest reduction in the pace",
    ),
    ("Liquidity around the century date change at the end of 1999", r"century date|Y2K|year 2000"),
    (
        "When was the federal funds rate target lowered to 1 percent?",
        r"federal funds rate (by 25 basis points )?to 1 percent",
    ),
    (
        "Term Asset-Backed Securities Loan Facility for households and small businesses",
        r"Term Asset-Backed",
    ),
    ("When did the Committee end its asset purchase program?", r"conclude its asset purchase"),
    (
        "Purchases of agency mortgage-backed securities totaling up to $1.25 trillion",
        r"1\.25 trillion",
    ),
    ("Central bank liquidity swap lines with foreign central banks", r"swap"),
    (
        "Balance of risks symmetric or asymmetric directive toward tightening",
        r"symmetric|asymmetric",
    ),
    ("Gradual normalization of the level of the federal funds rate", r"normalization"),
]

#: Held-out FOMC questions, written after the fusion was chosen, from the statements' own words.
FOMC_HELDOUT = [
    (
        "When did the Federal Reserve say it was providing liquidity so that financial markets keep functioning in an orderly way?",
        r"providing liquidity|provide liquidity",
    ),
    (
        "Concern that inflation, already low, might decline substantially further",
        r"unwelcome substantial fall",
    ),
    (
        "When did the Committee say it could be patient before removing its policy accommodation?",
        r"be patient",
    ),
    (
        "Statements that describe the housing market slowing down gradually",
        r"cooling of the housing",
    ),
    (
        "When did the FOMC note that strains in financial markets had increased?",
        r"Strains in financial markets",
    ),
    ("Term Auction Facility loans of funds to depository institutions", r"Term Auction Facility"),
    ("Weak growth in foreign economies as a reason to ease policy", r"foreign economies"),
    (
        "Guidance that the federal funds rate would stay exceptionally low at least through mid-2013",
        r"mid-2013",
    ),
    (
        "When did the Committee expect exceptionally low rates to last at least through late 2014?",
        r"late 2014",
    ),
    ("Policy accommodation can be kept for a considerable period", r"considerable period"),
    ("Buying up to $300 billion of longer-term Treasury securities", r"\$300 billion"),
    (
        "When did the Committee cut its rate target by three quarters of a percentage point?",
        r"75 basis points",
    ),
    ("Second round of asset purchases: $600 billion of longer-term Treasuries", r"\$600 billion"),
    (
        "Removing policy accommodation at a pace likely to be measured",
        r"at a pace that is likely to be measured",
    ),
    (
        "Buying additional agency mortgage-backed securities at a pace of $40 billion a month",
        r"\$40 billion per month",
    ),
    (
        "Which statements record Esther George voting against the policy action?",
        r"Esther L\. George",
    ),
    (
        "Global economic and financial developments as a risk to the outlook",
        r"global economic and financial developments",
    ),
    (
        "When did the Committee change the degree of pressure on reserve positions?",
        r"pressure on reserve positions",
    ),
]

METHODS = (
    "hybrid+MMR",
    "hybrid+MMR (0.7)",
    "hybrid",
    "RRF+MMR",
    "RRF",
    "dense",
    "BM25",
    "LC FAISS MMR",
)
SINGLE = ("dense", "BM25", "LC FAISS MMR")
#: Methods whose diversity (ILS) is printed.
DIVERSITY = ("hybrid+MMR", "hybrid+MMR (0.7)", "hybrid")
#: Reported FOMC sets; each is reported at the lambda the other one (with the tuning split) chose.
FOMC_FIRST = "FOMC statements"
FOMC_HELD = "FOMC statements, held-out"
TUNING = "TAT-QA dev, tuning split"


class QueryMemo(Embeddings):
    """The embedder with query vectors memoised: each question is embedded once for all methods.
    It keeps the inner embedder's id and window spans, so an index built with it is the inner
    embedder's (``long_documents.py`` builds through it)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.memo: dict[str, list[float]] = {}
        self.embeddings_id = embeddings_id(inner)
        if hasattr(inner, "window_spans"):
            self.window_spans = inner.window_spans

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if text not in self.memo:
            self.memo[text] = self.inner.embed_query(text)
        return self.memo[text]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def ils(index: DocumentIndex, hits: list) -> float:
    """Intra-list similarity: mean pairwise cosine of the hits' chunk vectors."""
    if len(hits) < 2:
        return 0.0
    vecs = np.stack([index.chunk_vector(index._by_id[h.chunk_id]) for h in hits])
    sims = vecs @ vecs.T
    return float(sims[np.triu_indices(len(hits), 1)].mean())


def evaluate(index: DocumentIndex, questions: list[tuple[str, set[str]]]) -> dict:
    """Mean recall@10 per method and per lambda of the sweep, and mean ILS of ``DIVERSITY``."""
    memo = QueryMemo(index.embeddings)
    index.embeddings = memo
    lc_store = langchain_store(index, memo)
    sums = dict.fromkeys(METHODS, 0.0)
    sweep = dict.fromkeys(LAMBDA_GRID, 0.0)
    div = dict.fromkeys(DIVERSITY, 0.0)
    for q, relevant in questions:
        runs = {
            "hybrid+MMR": index.search(q, k=K),
            "hybrid+MMR (0.7)": index.search(q, k=K, lambda_mult=PREVIOUS_LAMBDA),
            "hybrid": index.search(q, k=K, mmr=False),
            "RRF+MMR": index.search(q, k=K, fusion="rrf"),
            "RRF": index.search(q, k=K, mmr=False, fusion="rrf"),
            "dense": index.search(q, k=K, mode="dense", mmr=False),
            "BM25": index.search(q, k=K, mode="bm25", mmr=False),
        }
        got = {m: {h.doc_id for h in hits} for m, hits in runs.items()}
        lc = lc_store.max_marginal_relevance_search(q, k=K, fetch_k=4 * K)
        got["LC FAISS MMR"] = {d.metadata["doc_id"] for d in lc}
        denom = min(len(relevant), K)
        for m in METHODS:
            sums[m] += len(got[m] & relevant) / denom
        for m in DIVERSITY:
            div[m] += ils(index, runs[m])
        for lam in LAMBDA_GRID:
            hits = index.search(q, k=K, lambda_mult=lam)
            sweep[lam] += len({h.doc_id for h in hits} & relevant) / denom
    n = len(questions)
    return {
        "recall": {m: sums[m] / n for m in METHODS},
        "sweep": {lam: v / n for lam, v in sweep.items()},
        "ils": {m: v / n for m, v in div.items()},
    }


def choose_lambda(results: dict, sets: list[str]) -> float | None:
    """The tuning protocol: the smallest lambda of the grid whose hybrid+MMR recall is at least the
    hybrid's without MMR on every set of ``sets`` (None if no lambda qualifies)."""
    for lam in LAMBDA_GRID:
        if all(
            results[s][1]["sweep"][lam] >= results[s][1]["recall"]["hybrid"] - 1e-9 for s in sets
        ):
            return lam
    return None


def langchain_store(index: DocumentIndex, embeddings):
    """LangChain's FAISS vector store over the very same chunks and vectors."""
    from langchain_community.vectorstores import FAISS

    vecs = [index.chunk_vector(i) for i in range(len(index.chunks))]
    pairs = [(c.text, v.tolist()) for c, v in zip(index.chunks, vecs, strict=True)]
    metas = [{"doc_id": c.doc_id} for c in index.chunks]
    return FAISS.from_embeddings(pairs, embeddings, metadatas=metas)


def tatqa_corpus(
    contexts: list[dict] | None = None,
) -> tuple[list[Document], list[tuple[str, set[str]]]]:
    """Paragraphs and text / table-text questions of TAT-QA contexts (default: the reported 100)."""
    if contexts is None:
        contexts = json.loads(TATQA_SUBSET.read_text("utf-8"))
    docs, questions = [], []
    for ctx in contexts:
        by_order = {str(p["order"]): p["uid"] for p in ctx["paragraphs"]}
        for p in ctx["paragraphs"]:
            docs.append(Document(page_content=p["text"], metadata={"doc_id": p["uid"]}))
        for q in ctx["questions"]:
            if q.get("answer_from", "text") not in ("text", "table-text"):
                continue
            rel = {by_order[str(o)] for o in q["rel_paragraphs"] if str(o) in by_order}
            if rel:
                questions.append((q["question"], rel))
    return docs, questions


def tatqa_tuning_contexts(path: Path) -> list[dict]:
    """The dev contexts whose table is not among the reported subset's (disjoint by table uid)."""
    reported = {c["table_uid"] for c in json.loads(TATQA_SUBSET.read_text("utf-8"))}
    data = json.loads(path.read_text("utf-8"))
    return [c for c in data if c["table"]["uid"] not in reported]


def fomc_questions(
    texts: dict[str, str], spec: list[tuple[str, str]]
) -> list[tuple[str, set[str]]]:
    questions = []
    for q, rx in spec:
        rel = {d for d, t in texts.items() if re.search(rx, t, re.I)}
        print(f"  {len(rel):2d} relevant  {q}", file=sys.stderr)
        questions.append((q, rel))
    return questions


def build(docs: list[Document], path: Path, emb: Embeddings, name: str) -> DocumentIndex:
    t0 = time.perf_counter()
    index = DocumentIndex.build(docs, path, embeddings=emb)
    print(
        f"{name}: {len(docs)} documents, {len(index)} chunks, built in "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, help="keep the indexes (and embedding caches) here")
    ap.add_argument(
        "--tatqa-dev", type=Path, default=TATQA_DEV, help="the full TAT-QA dev set (tuning split)"
    )
    ap.add_argument(
        "--runtime",
        choices=("onnx", "torch"),
        default="onnx",
        help="MiniLM on ONNX Runtime (refgate's) or on torch (sentence-transformers; "
        "benchmarks/embeddings_runtime.py)",
    )
    ap.add_argument(
        "--backend",
        choices=("faiss", "pgvector"),
        default="faiss",
        help="pgvector: also copy each index into PostgreSQL (REFGATE_INDEX_DSN) and print both "
        "backends' recall@10 and MRR@10 side by side (benchmarks/backend_compare.py), then stop",
    )
    args = ap.parse_args()
    side_by_side: dict = {}
    # the document index's own embedder (the int8 encoder); torch runs the float model
    emb = MiniLMEmbeddings(int8=args.runtime == "onnx")
    if args.runtime == "torch":
        from embeddings_runtime import TorchMiniLM  # beside this script

        from refgate.model_files import minilm_path

        emb._model = TorchMiniLM(minilm_path())
    results: dict[str, tuple[int, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        fomc = load_documents(REPO / "examples/us-macro/documents", date_from_filename="%Y%m%d")
        texts = {d.metadata["doc_id"]: flat(d.page_content) for d in fomc}
        questions = fomc_questions(texts, FOMC_QUESTIONS)
        heldout = fomc_questions(texts, FOMC_HELDOUT)
        index = build(fomc, work / "fomc", emb, "FOMC")
        if args.backend == "pgvector":
            side_by_side[FOMC_FIRST] = (index, questions)
            side_by_side[FOMC_HELD] = (index, heldout)
        else:  # pgvector: the side-by-side table only
            results[FOMC_FIRST] = (len(questions), evaluate(index, questions))
            results[FOMC_HELD] = (len(heldout), evaluate(index, heldout))
            results["FOMC statements, all"] = (
                len(questions) + len(heldout),
                evaluate(index, questions + heldout),
            )
        docs, tq = tatqa_corpus()
        index = build(docs, work / "tatqa", emb, "TAT-QA")
        if args.backend == "pgvector":
            side_by_side["TAT-QA dev paragraphs"] = (index, tq)
        else:
            results["TAT-QA dev paragraphs"] = (len(tq), evaluate(index, tq))
        if args.tatqa_dev.is_file():
            docs, tq = tatqa_corpus(tatqa_tuning_contexts(args.tatqa_dev))
            index = build(docs, work / "tatqa_tune", emb, "TAT-QA tuning split")
            if args.backend == "pgvector":
                side_by_side[TUNING] = (index, tq)
            else:
                results[TUNING] = (len(tq), evaluate(index, tq))
        else:
            print(f"no {args.tatqa_dev}: the tuning split is skipped", file=sys.stderr)
        if side_by_side:
            import backend_compare  # beside this script

            copies = {id(i): backend_compare.pg_copy(i, i.path) for i, _ in side_by_side.values()}
            backend_compare.compare(
                {
                    split: (index, copies[id(index)], qs, lambda h: h.doc_id)
                    for split, (index, qs) in side_by_side.items()
                }
            )
            for pg in copies.values():
                backend_compare.drop(pg)
            return

    reported = [name for name in results if name != TUNING]
    print(
        f"\nrecall@{K} (all methods on the same chunks and MiniLM vectors; "
        f"hybrid+MMR at lambda {DEFAULT_LAMBDA})\n"
    )
    print("| corpus | questions | " + " | ".join(METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    for name, (n, r) in results.items():
        row = " | ".join(f"{r['recall'][m]:.3f}" for m in METHODS)
        print(f"| {name} | {n} | {row} |")
    print()
    for name in reported:
        scores = results[name][1]["recall"]
        best = max(scores[m] for m in SINGLE)
        print(
            f"{name}: / best single method: hybrid+MMR {scores['hybrid+MMR'] / best:.3f}, "
            f"hybrid+MMR (0.7) {scores['hybrid+MMR (0.7)'] / best:.3f}, "
            f"hybrid {scores['hybrid'] / best:.3f}"
        )

    print(f"\ndiversity: mean pairwise cosine of the top {K} chunks (ILS; lower = more diverse)\n")
    print("| corpus | " + " | ".join(DIVERSITY) + " |")
    print("|---|" + "---|" * len(DIVERSITY))
    for name, (_, r) in results.items():
        print(f"| {name} | " + " | ".join(f"{r['ils'][m]:.3f}" for m in DIVERSITY) + " |")

    print(f"\nrecall@{K} of hybrid+MMR by lambda (1.0 = hybrid without MMR)\n")
    print("| corpus | " + " | ".join(f"{lam:.2f}" for lam in LAMBDA_GRID) + " | 1.0 |")
    print("|---|" + "---|" * (len(LAMBDA_GRID) + 1))
    for name, (_, r) in results.items():
        row = " | ".join(f"{r['sweep'][lam]:.3f}" for lam in LAMBDA_GRID)
        print(f"| {name} | {row} | {r['recall']['hybrid']:.3f} |")

    if TUNING in results:
        print("\ntuning protocol: smallest lambda with hybrid+MMR recall >= hybrid recall on")
        print(f"  {TUNING} alone: {choose_lambda(results, [TUNING])}")
        for tune, report in ((FOMC_FIRST, FOMC_HELD), (FOMC_HELD, FOMC_FIRST)):
            lam = choose_lambda(results, [TUNING, tune])
            line = f"  {TUNING} + {tune}: {lam}"
            if lam is not None:
                r = results[report][1]
                best = max(r["recall"][m] for m in SINGLE)
                line += (
                    f" -> reported {report}: hybrid+MMR {r['sweep'][lam]:.3f}, "
                    f"best single method {best:.3f}"
                )
            print(line)


if __name__ == "__main__":
    main()

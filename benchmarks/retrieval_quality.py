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

recall@10 = |relevant in the top 10 documents| / min(|relevant|, 10), averaged over questions.
Methods: hybrid (convex score fusion, the default) with and without MMR, hybrid with reciprocal
rank fusion (``fusion="rrf"``) with and without MMR, dense only, BM25 only, LangChain's FAISS MMR.
Run: ``python benchmarks/retrieval_quality.py [--workdir DIR]`` (about 3 minutes on 2 cores, most
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

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from refgate.retrieval import DocumentIndex, MiniLMEmbeddings, load_documents

REPO = Path(__file__).resolve().parents[1]
K = 10

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
    "hybrid",
    "RRF+MMR",
    "RRF",
    "dense",
    "BM25",
    "LC FAISS MMR",
)
SINGLE = ("dense", "BM25", "LC FAISS MMR")


class QueryMemo(Embeddings):
    """The embedder with query vectors memoised: each question is embedded once for all methods."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.memo: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if text not in self.memo:
            self.memo[text] = self.inner.embed_query(text)
        return self.memo[text]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def evaluate(index: DocumentIndex, questions: list[tuple[str, set[str]]]) -> dict:
    memo = QueryMemo(index.embeddings)
    index.embeddings = memo
    lc_store = langchain_store(index, memo)
    sums = dict.fromkeys(METHODS, 0.0)
    for q, relevant in questions:
        runs = {
            "hybrid+MMR": index.search(q, k=K),
            "hybrid": index.search(q, k=K, mmr=False),
            "RRF+MMR": index.search(q, k=K, fusion="rrf"),
            "RRF": index.search(q, k=K, mmr=False, fusion="rrf"),
            "dense": index.search(q, k=K, mode="dense", mmr=False),
            "BM25": index.search(q, k=K, mode="bm25", mmr=False),
        }
        got = {m: {h.doc_id for h in hits} for m, hits in runs.items()}
        lc = lc_store.max_marginal_relevance_search(q, k=K, fetch_k=4 * K)
        got["LC FAISS MMR"] = {d.metadata["doc_id"] for d in lc}
        for m in METHODS:
            sums[m] += len(got[m] & relevant) / min(len(relevant), K)
    return {m: sums[m] / len(questions) for m in METHODS}


def langchain_store(index: DocumentIndex, embeddings):
    """LangChain's FAISS vector store over the very same chunks and vectors."""
    from langchain_community.vectorstores import FAISS

    vecs = index.faiss_index.reconstruct_n(0, index.faiss_index.ntotal)
    pairs = [(c.text, v.tolist()) for c, v in zip(index.chunks, vecs, strict=True)]
    metas = [{"doc_id": c.doc_id} for c in index.chunks]
    return FAISS.from_embeddings(pairs, embeddings, metadatas=metas)


def tatqa_corpus() -> tuple[list[Document], list[tuple[str, set[str]]]]:
    data = json.loads(
        (REPO / "tests/data/tatqa_paragraphs/tatqa_dev_paragraphs_subset.json").read_text("utf-8")
    )
    docs, questions = [], []
    for ctx in data:
        by_order = {str(p["order"]): p["uid"] for p in ctx["paragraphs"]}
        for p in ctx["paragraphs"]:
            docs.append(Document(page_content=p["text"], metadata={"doc_id": p["uid"]}))
        for q in ctx["questions"]:
            rel = {by_order[o] for o in q["rel_paragraphs"] if o in by_order}
            if rel:
                questions.append((q["question"], rel))
    return docs, questions


def fomc_questions(
    texts: dict[str, str], spec: list[tuple[str, str]]
) -> list[tuple[str, set[str]]]:
    questions = []
    for q, rx in spec:
        rel = {d for d, t in texts.items() if re.search(rx, t, re.I)}
        print(f"  {len(rel):2d} relevant  {q}", file=sys.stderr)
        questions.append((q, rel))
    return questions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, help="keep the indexes (and embedding caches) here")
    args = ap.parse_args()
    emb = MiniLMEmbeddings()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        fomc = load_documents(REPO / "examples/us-macro/documents", date_from_filename="%Y%m%d")
        texts = {d.metadata["doc_id"]: flat(d.page_content) for d in fomc}
        questions = fomc_questions(texts, FOMC_QUESTIONS)
        heldout = fomc_questions(texts, FOMC_HELDOUT)
        t0 = time.perf_counter()
        index = DocumentIndex.build(fomc, work / "fomc", embeddings=emb)
        print(
            f"FOMC: {len(fomc)} statements, {len(index)} chunks, built in "
            f"{time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
        results["FOMC statements"] = (len(questions), evaluate(index, questions))
        results["FOMC statements, held-out"] = (len(heldout), evaluate(index, heldout))
        results["FOMC statements, all"] = (
            len(questions) + len(heldout),
            evaluate(index, questions + heldout),
        )

        docs, tq = tatqa_corpus()
        t0 = time.perf_counter()
        index = DocumentIndex.build(docs, work / "tatqa", embeddings=emb)
        print(
            f"TAT-QA: {len(docs)} paragraphs, {len(index)} chunks, built in "
            f"{time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
        results["TAT-QA dev paragraphs"] = (len(tq), evaluate(index, tq))

    print(f"\nrecall@{K} (all methods on the same chunks and MiniLM vectors)\n")
    print("| corpus | questions | " + " | ".join(METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    for name, (n, scores) in results.items():
        print(f"| {name} | {n} | " + " | ".join(f"{scores[m]:.3f}" for m in METHODS) + " |")
    for name, (_, scores) in results.items():
        best_single = max(scores[m] for m in SINGLE)
        print(
            f"{name}: hybrid+MMR / best single method = {scores['hybrid+MMR'] / best_single:.3f}, "
            f"hybrid / best single = {scores['hybrid'] / best_single:.3f}"
        )


if __name__ == "__main__":
    main()

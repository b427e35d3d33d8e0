"""Memory relevance threshold (issue 29): which recalled decisions are relevant to a question?

Each sample eval question (``examples/us-macro/eval.jsonl``) leaves the decisions a run makes
for it (as HARVEST stores them: the decision text, ``why = "made for: <question>"``), in one
store with MiniLM embeddings (the default index). Then each question is asked again and the
store searched, as BRIEF recalls:

- **relevant**: the decisions made for the same question (a repeat must recall them);
- **same series** (reported, not tuned on): the decisions made for another eval question on
  the same series (unemployment, GDP, CPI, Treasury bill, inflation, population): recalling
  them helps, missing them costs nothing but the hint;
- **unrelated**: questions about something else (sport, geography, cooking, company rankings
  the workspace does not hold; EN and KO) must recall nothing.

The threshold (``memory_min_score``) is chosen on the tuning half (even lines) as the midpoint
between the highest unrelated score and the lowest relevant one, and reported on the held-out
half (odd lines) with the same unrelated questions' held-out half.

Run: ``python benchmarks/memory_relevance.py``.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from langgraph.store.memory import InMemoryStore

from refgate.memory.embeddings import default_embeddings
from refgate.memory.store import STORE_FIELDS

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "examples" / "us-macro" / "eval.jsonl"
UNRELATED = [
    "Who won the 2018 FIFA World Cup?",
    "What is the capital of Australia?",
    "How long should I boil an egg?",
    "Which company has the largest market capitalisation in Europe?",
    "Summarise the plot of Hamlet.",
    "What is the boiling point of water at altitude?",
    "Translate 'good morning' into French.",
    "How many moons does Jupiter have?",
    "2018 월드컵 우승팀은 어디인가요?",
    "김치찌개 만드는 법을 알려줘.",
    "서울에서 부산까지 기차로 얼마나 걸리나요?",
    "가장 시가총액이 큰 한국 기업은?",
]


def decisions_for(question: str) -> list[str]:
    """The decisions a run leaves for ``question`` (kinds as ``run_decisions`` writes them)."""
    return [
        "follow skill single-value-lookup (single value lens)",
        "inspect dataset macro",
        "compute in RunPython: df = datasets['macro']; emit_result(values={...})",
    ]


SERIES = ("unemployment", "gdp", "cpi", "treasury", "inflation", "population")


def series_of(q: str) -> str | None:
    low = q.lower()
    return next((s for s in SERIES if s in low), None)


def main() -> None:
    questions = [json.loads(x)["question"] for x in EVAL.read_text().splitlines() if x.strip()]
    emb = default_embeddings(None)
    dims = len(emb.embed_query("probe"))
    store = InMemoryStore(index={"dims": dims, "embed": emb, "fields": list(STORE_FIELDS)})
    ns = ("refgate", "bench", "decisions")
    for i, q in enumerate(questions):
        for j, d in enumerate(decisions_for(q)):
            store.put(ns, f"{i}-{j}", {"decision": d, "why": f"made for: {q}"})

    def scores(q: str) -> tuple[list[float], list[str]]:
        hits = store.search(ns, query=q, limit=5)
        return [float(h.score or 0) for h in hits], [h.key for h in hits]

    split = {
        "tuning": (questions[0::2], UNRELATED[0::2]),
        "held-out": (questions[1::2], UNRELATED[1::2]),
    }
    results = {}
    siblings: dict[str, list[float]] = {}
    for name, (qs, unrel) in split.items():
        relevant = []
        for q in qs:
            i = questions.index(q)
            s, keys = scores(q)
            own = [sc for sc, k in zip(s, keys, strict=True) if k.startswith(f"{i}-")]
            relevant.append(max(own) if own else 0.0)
        unrelated = [max(scores(q)[0] or [0.0]) for q in unrel]
        sibling = []
        for q in qs:
            i, ser = questions.index(q), series_of(q)
            s, keys = scores(q)
            near = [
                sc
                for sc, k in zip(s, keys, strict=True)
                if not k.startswith(f"{i}-") and series_of(questions[int(k.split("-")[0])]) == ser
            ]
            if ser and any(series_of(o) == ser for o in questions if o != q):
                sibling.append(max(near) if near else 0.0)
        results[name] = (relevant, unrelated)
        siblings[name] = sibling
    rel, unr = results["tuning"]
    threshold = round((min(rel) + max(unr)) / 2, 2)
    print(f"MiniLM cosine scores of the best decision, {len(questions)} eval questions\n")
    print("| split | relevant min / median | unrelated max / median | recalled at threshold |")
    print("|---|---|---|---|")
    for name, (rel, unr) in results.items():
        kept = sum(r >= threshold for r in rel)
        leaked = sum(u >= threshold for u in unr)
        print(
            f"| {name} | {min(rel):.3f} / {statistics.median(rel):.3f} | "
            f"{max(unr):.3f} / {statistics.median(unr):.3f} | relevant {kept}/{len(rel)}, "
            f"unrelated {leaked}/{len(unr)} |"
        )
        sib = siblings[name]
        print(
            f"| {name}, same series | {min(sib):.3f} / {statistics.median(sib):.3f} | | "
            f"recalled {sum(x >= threshold for x in sib)}/{len(sib)} |"
        )
    print(f"\nthreshold (tuning midpoint): {threshold}")


if __name__ == "__main__":
    main()

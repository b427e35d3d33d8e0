"""Search fusion rules offline over the candidate pools ``fusion_pools.py`` dumped: every rule is
chosen by the benchmark's rule on the tuning splits alone, then reported on the held-out ones.

The rule (as in ``long_documents.py``): per tuning split and metric (recall@10, MRR@10), the
candidate's margin over the best of BM25, dense and RRF on that split; a candidate's score is its
worst margin over both metrics and every tuning split, ties broken by the mean of the two metrics.
The criterion of issue 34 is met where the worst margin is >= 0 on the tuning *and* held-out
splits.

Families searched (each reimplements ``DocumentIndex.search`` on the dumped pool; the script first
checks that its BM25, dense, RRF and shipped default give exactly search's own top 10):

- convex fusion with a fixed dense weight, and the shipped per-query weight (corpus homogeneity,
  query length, moved toward the more decisive list with power p) with the cosine normalised
  from floors other than -1, or with other query-length constants;
- z-score fusion (each list's scores standardised over the pool);
- weighted reciprocal-rank fusion, and RRF with window vectors on the dense side (each of the
  100 best windows counts for its chunk);
- a guard: the convex top 10, but a chunk in the top k of both dense and RRF stays in it;
- RRF's top n re-ordered by the convex score;
- a tiny learned combiner: a linear score over normalised scores and reciprocal ranks, times
  query features (1, log query words, BM25 coverage, reachable chunks' homogeneity, log reachable
  chunks, both lists' decisiveness), fitted by a listwise softmax loss on the tuning splits
  (each split weighted equally), full-batch gradient descent from zero (deterministic);
- a small boosted reranker: scikit-learn's gradient-boosted trees classifying each pool chunk as
  gold or not from the combiner's features, the query's features and both ranks, fitted on the
  tuning splits (each set weighted equally), pools ranked by its probability.

Run: ``python benchmarks/fusion_search.py pools.pkl`` (seconds to a few minutes; prints markdown).
"""

from __future__ import annotations

import argparse
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from long_documents import K, margin

from refgate.retrieval.fusion import (
    RRF_K,
    base_dense_weight,
    decisive_weight,
    decisiveness,
    dense_weight_for,
    normalise_scores,
)

TUNING = ("tuning",)
HELD_OUT = ("held-out (seen)", "fresh")
_WORD = re.compile(r"\w+")

Question = dict[str, Any]
#: A rule: a question's record -> positions (into its reachable rows), best first.
Rule = Callable[[Question], np.ndarray]


# ------------------------------------------------------------------------------ the pool


def prepare(q: Question, homogeneity: float) -> None:
    """Per-question constants every rule uses: the pool (dense list then BM25 list, first
    occurrence), each list's rank of every pool chunk, gold mask, the shipped weight's inputs."""
    pool = np.asarray(
        list(dict.fromkeys([*q["dense_list"].tolist(), *q["bm25_list"].tolist()])), dtype=np.int64
    )
    q["pool"] = pool
    n = len(q["cos"])
    for key, lst in (("rank_dense", q["dense_list"]), ("rank_bm25", q["bm25_list"])):
        rank = np.full(n, np.inf)
        rank[lst] = np.arange(1, len(lst) + 1)
        q[key] = rank[pool]
    q["alpha0"] = dense_weight_for(q["q"], homogeneity)
    q["homogeneity"] = homogeneity


def order(pool: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Pool positions best first; ties by row (positions follow row order), as search breaks them."""
    return pool[np.lexsort((pool, -score))]


def measure(q: Question, ranked: np.ndarray | list[int]) -> tuple[float, float]:
    """recall@10 and reciprocal rank (0 past 10) of the first gold unit."""
    units = [q["units"][int(i)] for i in list(ranked)[:K]]
    gold = q["gold"]
    first = next((i for i, u in enumerate(units, start=1) if u in gold), None)
    return len(set(units) & gold) / min(len(gold), K), 1.0 / first if first else 0.0


# ------------------------------------------------------------------------------ the rules


def bm25_rule(q: Question) -> np.ndarray:
    return q["bm25_list"]


def dense_rule(q: Question) -> np.ndarray:
    return q["dense_list"]


def rrf_scores(q: Question, *, k: float = RRF_K, dense_w: float = 1.0) -> np.ndarray:
    return dense_w / (k + q["rank_dense"]) + 1.0 / (k + q["rank_bm25"])


def convex_scores(q: Question, alpha: float, floor: float = -1.0) -> np.ndarray:
    pool = q["pool"]
    return alpha * normalise_scores(q["cos"][pool], floor=floor) + (1 - alpha) * normalise_scores(
        q["bm25"][pool], floor=0.0
    )


def shipped_alpha(q: Question, power: float) -> float:
    return decisive_weight(q["alpha0"], q["cos"][q["dense_list"]], q["bm25"], power=power)


def z_scores(s: np.ndarray) -> np.ndarray:
    return (s - s.mean()) / (s.std() or 1.0)


def rrf_rule(k: float = RRF_K, dense_w: float = 1.0) -> Rule:
    return lambda q: order(q["pool"], rrf_scores(q, k=k, dense_w=dense_w))


def window_rrf_rule(k: float = RRF_K, dense_w: float = 1.0) -> Rule:
    """RRF with window vectors on the dense side: every one of the 100 best windows adds
    ``dense_w / (k + its rank)`` to its chunk (a chunk with several good windows gains more)."""

    def rule(q: Question) -> np.ndarray:
        pool = q["pool"]
        dense = np.zeros(len(q["cos"]))
        np.add.at(dense, q["window_list"], dense_w / (k + np.arange(1, len(q["window_list"]) + 1)))
        return order(pool, dense[pool] + 1.0 / (k + q["rank_bm25"]))

    return rule


def convex_rule(alpha: float | None = None, power: float = 0.5, floor: float = -1.0) -> Rule:
    """Fixed ``alpha``, or (None) the shipped per-query weight with decisiveness power ``power``."""

    def rule(q: Question) -> np.ndarray:
        a = shipped_alpha(q, power) if alpha is None else alpha
        return order(q["pool"], convex_scores(q, a, floor))

    return rule


def length_rule(short: int, long: int, weight: float, power: float = 0.5) -> Rule:
    """The shipped rule with other query-length constants: the dense weight rises from the
    corpus's base at ``short`` words to ``weight`` at ``long`` words (shipped: 15, 30, 0.95)."""

    def rule(q: Question) -> np.ndarray:
        base = base_dense_weight(q["homogeneity"])
        n = len(_WORD.findall(q["q"]))
        share = min(1.0, max(0.0, (n - short) / (long - short)))
        alpha = base + share * max(0.0, weight - base)
        alpha = decisive_weight(alpha, q["cos"][q["dense_list"]], q["bm25"], power=power)
        return order(q["pool"], convex_scores(q, alpha))

    return rule


def z_rule(alpha: float) -> Rule:
    def rule(q: Question) -> np.ndarray:
        pool = q["pool"]
        return order(
            pool, alpha * z_scores(q["cos"][pool]) + (1 - alpha) * z_scores(q["bm25"][pool])
        )

    return rule


def guard_rule(k: int, power: float = 0.5) -> Rule:
    """The shipped convex top 10, but a chunk in the top ``k`` of both dense and RRF stays in it
    (it replaces the lowest unguarded chunk), the top 10 kept in convex order."""

    def rule(q: Question) -> np.ndarray:
        fused = list(convex_rule(None, power)(q))
        rrf = order(q["pool"], rrf_scores(q))
        rank_rrf = {int(c): i for i, c in enumerate(rrf, start=1)}
        rank_dense = {int(c): i for i, c in enumerate(q["dense_list"], start=1)}
        guarded = {
            c
            for c in fused
            if rank_rrf.get(int(c), 10**9) <= k and rank_dense.get(int(c), 10**9) <= k
        }
        top = fused[:K]
        for c in fused[K:]:
            if c not in guarded:
                continue
            out = next((j for j in range(len(top) - 1, -1, -1) if top[j] not in guarded), None)
            if out is None:
                break
            top.pop(out)
            top.append(c)
        position = {c: i for i, c in enumerate(fused)}
        top.sort(key=position.__getitem__)
        chosen = set(top)
        return np.asarray(top + [c for c in fused if c not in chosen])

    return rule


def rrf_head_rule(n: int, power: float, floor: float) -> Rule:
    """RRF's top ``n``, re-ordered by the convex score (shipped weight, cosine floor), then the
    rest of RRF's order."""

    def rule(q: Question) -> np.ndarray:
        pool = q["pool"]
        rrf = order(pool, rrf_scores(q))
        fused = dict(
            zip(pool.tolist(), convex_scores(q, shipped_alpha(q, power), floor), strict=True)
        )
        head = sorted(rrf[:n].tolist(), key=lambda c: (-fused[c], c))
        return np.asarray(head + rrf[n:].tolist())

    return rule


# ------------------------------------------------------------------------------ learned combiner


def candidate_features(q: Question) -> np.ndarray:
    """Per pool chunk: normalised cosine (floor -1) and BM25 (/ max), both z-scored over the
    pool, and both lists' reciprocal ranks (10 / (10 + rank), 0 when absent)."""
    pool = q["pool"]
    c, b = q["cos"][pool], q["bm25"][pool]
    return np.stack(
        [
            normalise_scores(c, floor=-1.0),
            normalise_scores(b, floor=0.0),
            z_scores(c),
            z_scores(b),
            10.0 / (10.0 + q["rank_dense"]),
            10.0 / (10.0 + q["rank_bm25"]),
        ],
        axis=1,
    )


def query_features(q: Question) -> np.ndarray:
    lex = q["bm25"]
    return np.array(
        [
            1.0,
            np.log(max(1, len(_WORD.findall(q["q"])))),
            float((lex > 0).mean()),
            q["doc_homogeneity"],
            np.log(len(q["rows"])),
            min(decisiveness(q["cos"][q["dense_list"]]), 5.0),
            min(decisiveness(lex), 5.0) if (lex > 0).any() else 0.0,
        ]
    )


def design(q: Question, query_cols: int) -> np.ndarray:
    x = candidate_features(q)
    z = query_features(q)[:query_cols]
    return (x[:, :, None] * z[None, None, :]).reshape(len(x), -1)


def fit_combiner(
    questions: list[tuple[str, Question]], query_cols: int, l2: float, steps: int = 400
) -> np.ndarray:
    """Weights minimising the listwise softmax loss -log P(gold) over each question's pool (each
    set's tuning split weighted equally) plus ``l2`` |w|^2: Adam from zero, fixed steps."""
    data = [(name, design(q, query_cols), q["goldmask"][q["pool"]]) for name, q in questions]
    data = [(n, x, y.astype(np.float64)) for n, x, y in data if y.any()]
    per_set: dict[str, int] = {}
    for n, _, _ in data:
        per_set[n] = per_set.get(n, 0) + 1
    w = np.zeros(data[0][1].shape[1])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        g = 2 * l2 * w
        for n, x, y in data:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            on_gold = p * y / (p @ y)
            g -= (x.T @ (on_gold - p)) / per_set[n]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def combiner_rule(w: np.ndarray, query_cols: int) -> Rule:
    return lambda q: order(q["pool"], design(q, query_cols) @ w)


# ------------------------------------------------------------------------------ boosted reranker


def reranker_features(q: Question) -> np.ndarray:
    """Per pool chunk: the combiner's candidate features beside the query's features (a tree
    finds their interactions itself), and the chunk's ranks in both lists."""
    x = candidate_features(q)
    z = np.broadcast_to(query_features(q)[1:], (len(x), 6))
    ranks = np.minimum(np.stack([q["rank_dense"], q["rank_bm25"]], axis=1), 200.0)
    return np.hstack([x, z, ranks])


def fit_reranker(questions: list[tuple[str, Question]], depth: int, rounds: int) -> Any:
    """A gradient-boosted classifier of "this pool chunk is gold" over ``reranker_features``,
    fitted on the tuning splits with each set's questions weighted equally (deterministic)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    per_set: dict[str, int] = {}
    for name, _ in questions:
        per_set[name] = per_set.get(name, 0) + 1
    xs, ys, ws = [], [], []
    for name, q in questions:
        y = q["goldmask"][q["pool"]]
        if not y.any():
            continue
        xs.append(reranker_features(q))
        ys.append(y)
        ws.append(np.full(len(y), 1.0 / (per_set[name] * len(y))))
    model = HistGradientBoostingClassifier(
        max_depth=depth, max_iter=rounds, learning_rate=0.1, l2_regularization=1.0, random_state=0
    )
    model.fit(np.vstack(xs), np.concatenate(ys), sample_weight=np.concatenate(ws))
    return model


def reranker_rule(model: Any) -> Rule:
    return lambda q: order(q["pool"], model.predict_proba(reranker_features(q))[:, 1])


# ------------------------------------------------------------------------------ measuring


def evaluate(sets: dict[str, Any], rule: Rule) -> dict[tuple[str, str], np.ndarray]:
    out: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for name, data in sets.items():
        for q in data["questions"]:
            out.setdefault((name, q["split"]), []).append(measure(q, rule(q)))
    return {k: np.asarray(v) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pools", type=Path)
    ap.add_argument("--no-combiner", action="store_true", help="skip fitting the combiners")
    args = ap.parse_args()
    with args.pools.open("rb") as f:
        sets = pickle.load(f)
    for data in sets.values():
        for q in data["questions"]:
            prepare(q, data["homogeneity"])
            q["goldmask"] = np.asarray([u in q["gold"] for u in q["units"]])

    baselines: dict[str, Rule] = {"BM25": bm25_rule, "dense": dense_rule, "RRF": rrf_rule()}
    shipped = convex_rule(None, 0.5)
    # the offline rules must be search's own
    mismatched = sum(
        list(rule(q)[:K]) != q["searched"][label]
        for data in sets.values()
        for q in data["questions"]
        for label, rule in (*baselines.items(), ("shipped default", shipped))
    )
    total = 4 * sum(len(d["questions"]) for d in sets.values())
    print(f"Offline rankings equal to search()'s own top 10: {total - mismatched} of {total}\n")

    candidates: dict[str, Rule] = {"shipped default (decisive p0.5)": shipped}
    for a in (0.6, 0.7, 0.8, 0.85, 0.9, 0.95):
        candidates[f"convex {a}"] = convex_rule(a)
    for p in (0.0, 0.25, 0.5, 1.0, 2.0):
        for floor in (-1.0, -0.5, -0.25, 0.0, 0.1):
            if (p, floor) != (0.5, -1.0):
                candidates[f"decisive p{p}, cosine floor {floor}"] = convex_rule(None, p, floor)
    for short in (10, 12, 15):
        for long in (20, 25, 30):
            for weight in (0.95, 0.98, 1.0):
                if (short, long, weight) != (15, 30, 0.95):
                    label = f"query length {short}-{long} words to weight {weight}"
                    candidates[label] = length_rule(short, long, weight)
    for a in (0.4, 0.5, 0.6, 0.7, 0.8):
        candidates[f"z-score {a}"] = z_rule(a)
    for w in (1.0, 1.5, 2.0, 3.0):
        for k in (5, 20, 60):
            if (w, k) != (1.0, 60):
                candidates[f"RRF k{k}, dense weight {w}"] = rrf_rule(k, w)
    for w in (1.0, 1.5, 2.0):
        for k in (5, 20, 60):
            candidates[f"RRF over windows k{k}, dense weight {w}"] = window_rrf_rule(k, w)
    for k in (3, 5, 10, 12, 15):
        candidates[f"shipped + dense-and-RRF top-{k} guard"] = guard_rule(k)
    for n in (10, 11, 12, 13, 15, 20, 30):
        for p in (0.0, 0.5, 1.0):
            for floor in (-1.0, -0.25, 0.0):
                candidates[f"RRF top {n} by convex (p{p}, floor {floor})"] = rrf_head_rule(
                    n, p, floor
                )
    if not args.no_combiner:
        tuning = [(n, q) for n, d in sets.items() for q in d["questions"] if q["split"] in TUNING]
        for cols in (1, 3, 7):
            for l2 in (0.01, 0.1):
                w = fit_combiner(tuning, cols, l2)
                candidates[f"learned combiner ({cols} query features, l2 {l2})"] = combiner_rule(
                    w, cols
                )

        for depth in (2, 3, 5):
            for rounds in (50, 200):
                candidates[f"boosted reranker (depth {depth}, {rounds} rounds)"] = reranker_rule(
                    fit_reranker(tuning, depth, rounds)
                )

    base = {b: evaluate(sets, rule) for b, rule in baselines.items()}
    res = {label: evaluate(sets, rule) for label, rule in candidates.items()}
    keys = sorted(base["BM25"])

    def best(key: tuple[str, str]) -> np.ndarray:
        return np.max([base[b][key].mean(axis=0) for b in base], axis=0)

    def worst(label: str, splits: tuple[str, ...]) -> np.ndarray:
        return np.min([res[label][k].mean(axis=0) - best(k) for k in keys if k[1] in splits], 0)

    def mean(label: str, splits: tuple[str, ...]) -> np.ndarray:
        return np.mean([res[label][k].mean(axis=0) for k in keys if k[1] in splits], axis=0)

    ranked = sorted(
        candidates,
        key=lambda lab: (float(worst(lab, TUNING).min()), float(mean(lab, TUNING).sum())),
        reverse=True,
    )
    chosen = ranked[0]
    print(
        f"## {len(candidates)} candidates on the tuning splits (the best 20, the best of each "
        "family, the shipped default)\n"
    )
    print(
        "| candidate | worst recall@10 margin | worst MRR@10 margin | mean recall@10 | mean "
        "MRR@10 | held-out worst recall / MRR margin |"
    )
    print("|---|---|---|---|---|---|")
    # the best 20, the best of each family (the label up to its first number), the shipped
    families = {re.split(r"\d", label)[0]: label for label in reversed(ranked)}
    shown = list(
        dict.fromkeys([*ranked[:20], *families.values(), "shipped default (decisive p0.5)"])
    )
    for label in shown:
        w, m, h = worst(label, TUNING), mean(label, TUNING), worst(label, HELD_OUT)
        print(
            f"| {label} | {w[0]:+.3f} | {w[1]:+.3f} | {m[0]:.3f} | {m[1]:.3f} "
            f"| {h[0]:+.3f} / {h[1]:+.3f} |"
        )
    print(
        f"\nChosen on the tuning splits: **{chosen}** (held-out columns read after the choice).\n"
    )
    for label in dict.fromkeys([chosen, "shipped default (decisive p0.5)"]):
        print(f"### {label}, per set and split (recall@10 / MRR@10)\n")
        print(
            "| set | split | questions | BM25 | dense | RRF | **rule** | recall margin over the "
            "best [95% CI] (better/worse) | MRR margin over the best [95% CI] (better/worse) |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for key in sorted(keys, key=lambda k: (k[0], k[1] != "tuning")):
            cells = {b: base[b][key].mean(axis=0) for b in base}
            top = {i: max(base, key=lambda b, i=i: cells[b][i]) for i in (0, 1)}
            r = res[label][key]
            m = r.mean(axis=0)
            print(
                f"| {key[0]} | {key[1]} | {len(r)} | "
                + " | ".join(f"{cells[b][0]:.3f} / {cells[b][1]:.3f}" for b in base)
                + f" | **{m[0]:.3f} / {m[1]:.3f}** "
                f"| vs {top[0]}: {margin(r[:, 0], base[top[0]][key][:, 0])} "
                f"| vs {top[1]}: {margin(r[:, 1], base[top[1]][key][:, 1])} |"
            )
        print()


if __name__ == "__main__":
    main()

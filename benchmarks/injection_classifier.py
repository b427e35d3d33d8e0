"""The second layer of inspect_injection (issue 14): refgate's shipped classifier
(refgate/provenance/injection/classifier.json, trained by scripts/train_injection_classifier.py)
per family and language: rules alone, classifier alone, rules OR classifier; false positives on
the near-misses and on real paragraphs (those not trained on marked); and, for the record, the
third-party candidates of the first round.

Detected / flagged: a signal at medium or high, as in benchmarks/injection_families.py (same
embeddings of each attack in FOMC paragraphs). The blind held-out v3 split is evaluated when its
files exist and ``--no-v3`` is not given, in aggregate per family and language only (never item
by item); it is never trained on. With ``--no-v3`` the tuning splits v2 and r3 are reported
instead (training material of both layers since the third round: in-sample figures).

Run: ``python benchmarks/injection_classifier.py`` (the one v3 run, by the lead);
``--no-v3`` (the tuning splits); ``--candidate jailguard|nanoguard`` re-runs a third-party package
on v1 (install it first; neither is a dependency of refgate).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable

from injection_families import (
    DATA,
    FLAG,
    ROOT,
    V3_ATTACKS,
    V3_NEAR,
    embedded,
    load,
    load_optional,
    minutes_chunks,
    pct,
    statement_paragraphs,
    tatqa,
)

import refgate.tools.registry  # noqa: F401  (registers the tool names with the detector)
from refgate.provenance import inspect_injection
from refgate.provenance.injection.layer import classifier_signals


def rules(text: str) -> bool:
    report = inspect_injection(text, classifier=False)
    return any(s.confidence in FLAG for s in report.signals)


def ours(text: str) -> bool:
    return bool(classifier_signals(text))


def candidate(name: str, threshold: float) -> Callable[[str], bool]:
    if name == "jailguard":
        import jailguard  # optional benchmark-only dependency (a compiled model)

        return lambda text: jailguard.detect(text).score >= threshold
    if name == "nanoguard":
        import torch  # optional benchmark-only dependency (nanoguard runs on torch)
        from nanoguard.scanner import NanoGuard

        torch.set_num_threads(1)
        guard = NanoGuard(device="cpu")
        return lambda text: guard.scan(text).injection_score >= threshold
    raise SystemExit(f"unknown candidate {name!r}")


def table(rows: dict, title: str) -> None:
    print(f"| {title} | rules | classifier | rules OR classifier |")
    print("|---|---|---|---|")
    for key, (n, r, c, u) in rows.items():
        print(f"| {key} | {r}/{n} = {pct(r, n)} | {c}/{n} = {pct(c, n)} | {u}/{n} = {pct(u, n)} |")


def count(texts: list[str], clf: Callable[[str], bool]) -> tuple[int, int, int, int]:
    n = r = c = u = 0
    for t in texts:
        hit_r, hit_c = rules(t), clf(t)
        n, r, c, u = n + 1, r + hit_r, c + hit_c, u + (hit_r or hit_c)
    return n, r, c, u


def evaluate(clf: Callable[[str], bool], attacks: list[dict], near: list[dict], name: str) -> None:
    """Per family and language (never per item): rules, classifier, rules OR classifier."""
    hosts = statement_paragraphs()
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for a in attacks:
        for _, text in embedded(a, hosts):
            hit_r, hit_c = rules(text), clf(text)
            for key in (f"{a['family']} {a['lang']}", f"all {a['lang']}", "all"):
                cell = cells[key]
                cell[0] += 1
                cell[1] += hit_r
                cell[2] += hit_c
                cell[3] += hit_r or hit_c
    table(dict(sorted(cells.items())), f"{name} attacks (detected)")
    negatives = {
        f"{name} near-miss {lang}": [x["text"] for x in near if x["lang"] == lang]
        for lang in ("en", "ko")
        if any(x["lang"] == lang for x in near)
    }
    negatives |= {
        "TAT-QA dev 141-278 (never trained on)": tatqa(DATA / "tatqa_dev_heldout_paragraphs.jsonl"),
        "FOMC minutes chunks (threshold only)": minutes_chunks(),
        "FOMC statement paragraphs (trained on)": statement_paragraphs(),
        "TAT-QA dev 1-140 (trained on)": tatqa(
            ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl"
        ),
    }
    table({k: count(v, clf) for k, v in negatives.items()}, "negatives (flagged)")


def v1(clf: Callable[[str], bool], every: int) -> None:
    attacks, near = load("attacks.jsonl"), load("near_miss.jsonl")
    hosts = statement_paragraphs()
    rows = {}
    for split in ("tuning", "heldout"):
        texts = [t for a in attacks if a["split"] == split for _, t in embedded(a, hosts)]
        rows[f"v1 attacks {split}"] = count(texts, clf)
    rows["v1 near-miss"] = count([x["text"] for x in near], clf)
    t0 = time.perf_counter()
    rows["FOMC statements"] = count(statement_paragraphs()[::every], clf)
    print(f"{(time.perf_counter() - t0) * 1000 / len(statement_paragraphs()[::every]):.1f} ms/text")
    table(rows, "v1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate", help="a third-party package instead: jailguard, nanoguard")
    ap.add_argument("--threshold", type=float, default=0.5, help="the candidate's threshold")
    ap.add_argument("--every", type=int, default=1, help="candidate: every Nth FOMC paragraph")
    ap.add_argument(
        "--no-v3", action="store_true", help="leave blind v3 unopened; report the tuning splits"
    )
    args = ap.parse_args()
    if args.candidate:
        v1(candidate(args.candidate, args.threshold), args.every)
    elif not args.no_v3:
        if not (DATA / V3_ATTACKS).exists():
            raise SystemExit(f"{V3_ATTACKS} not found; use --no-v3 for the tuning splits")
        attacks = load_optional(V3_ATTACKS, "heldout_v3")
        evaluate(ours, attacks, load_optional(V3_NEAR, "heldout_v3"), "held-out v3 (blind)")
    else:
        near = load("near_miss_v2.jsonl") + load("near_miss_v2_pages.jsonl")
        evaluate(ours, load("attacks_v2.jsonl"), near, "v2 (trained on)")
        r3 = load_optional("attacks_tuning_r3.jsonl", "tuning_r3")
        if r3:
            evaluate(ours, r3, [], "tuning r3 (trained on)")


if __name__ == "__main__":
    main()

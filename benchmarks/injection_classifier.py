"""A small offline classifier as a second layer after the rules (issue 14): recall per split
alone and together with the rules (rules OR classifier), and false positives on near-miss
negatives and real paragraphs, on the corpus of benchmarks/injection_families.py.

Candidates are PyPI packages that ship their weights inside the wheel (nothing is downloaded
at run time): ``jailguard`` (MIT OR Apache-2.0, Rust extension with an embedded MLP) and
``metatronnanoguard`` (MIT, a 16.8M-parameter transformer as a torch pickle plus a pickled
tokenizer). Neither is a dependency of refgate; install one to run this script, e.g.
``pip install jailguard`` (or ``pip install --target DIR`` and ``PYTHONPATH=DIR``).

Run: ``python benchmarks/injection_classifier.py --classifier jailguard [--threshold 0.5]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from injection_families import (
    DATA,
    FLAG,
    ROOT,
    embedded,
    load,
    minutes_chunks,
    pct,
    statement_paragraphs,
    tatqa,
)

from refgate.provenance import inspect_injection


def classifier(name: str, threshold: float) -> Callable[[str], bool]:
    if name == "jailguard":
        import jailguard  # optional benchmark-only dependency (a compiled model)

        return lambda text: jailguard.detect(text).score >= threshold
    if name == "nanoguard":
        import torch  # optional benchmark-only dependency (nanoguard runs on torch)
        from nanoguard.scanner import NanoGuard

        torch.set_num_threads(1)
        guard = NanoGuard(device="cpu")
        return lambda text: guard.scan(text).injection_score >= threshold
    raise SystemExit(f"unknown classifier {name!r}")


def rules(text: str) -> bool:
    return any(s.confidence in FLAG for s in inspect_injection(text).signals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classifier", default="jailguard")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--every", type=int, default=1, help="use every Nth real paragraph")
    args = ap.parse_args()
    clf = classifier(args.classifier, args.threshold)
    attacks, near = load("attacks.jsonl"), load("near_miss.jsonl")
    hosts = statement_paragraphs()
    print(f"classifier {args.classifier}, threshold {args.threshold}")
    print("| split | rules | classifier | rules OR classifier |")
    print("|---|---|---|---|")
    for split in ("tuning", "heldout"):
        n = r = c = u = 0
        for a in (x for x in attacks if x["split"] == split):
            for _, text in embedded(a, hosts):
                hit_r, hit_c = rules(text), clf(text)
                n += 1
                r += hit_r
                c += hit_c
                u += hit_r or hit_c
        print(f"| attacks {split} | {pct(r, n)} | {pct(c, n)} | {pct(u, n)} |", flush=True)
    negatives = {
        "near-miss (all)": [x["text"] for x in near],
        "FOMC statements": statement_paragraphs()[:: args.every],
        "FOMC minutes chunks": minutes_chunks()[:: args.every],
        "TAT-QA dev 1-140": tatqa(ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl")[
            :: args.every
        ],
        "TAT-QA dev 141-278": tatqa(DATA / "tatqa_dev_heldout_paragraphs.jsonl")[:: args.every],
    }
    for name, texts in negatives.items():
        r = sum(rules(t) for t in texts)
        t0 = time.perf_counter()
        c = sum(clf(t) for t in texts)
        ms = 1000 * (time.perf_counter() - t0) / len(texts)
        u = sum(rules(t) or clf(t) for t in texts)
        print(
            f"| FP {name} ({len(texts)}) | {pct(r, len(texts))} | {pct(c, len(texts))} "
            f"({ms:.1f} ms/text) | {pct(u, len(texts))} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

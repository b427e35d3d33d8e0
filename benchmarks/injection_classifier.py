"""The second layers of inspect_injection (issue 14): refgate's shipped n-gram classifier
(classifier.json, scripts/train_injection_classifier.py) and semantic layer (semantic.json:
frozen MiniLM embeddings + a small head, scripts/train_injection_semantic.py), per family and
language: rules alone, each layer alone, rules OR n-gram, rules OR semantic, rules OR both; false
positives on near-misses and real paragraphs (those not trained on marked); the semantic
layer's cost on text where its prefilter passes; and, for the record, the third-party
candidates of the first round.

Detected / flagged: a signal at medium or high, as in benchmarks/injection_families.py (same
embeddings of each attack in FOMC paragraphs). Every corpus file is training material of both
layers now (v1, r2, v2, r3, v3), so the default run gives in-sample figures; the honest
estimate of transfer is the trainer's leave-source-out comparison (``--oof``, which runs
``scripts/train_injection_semantic.py --compare``). A blind held-out split is named at run time
(``--attacks FILE --near FILE``, no file is named here) and is reported in aggregate only (per
family and language; near-misses per language), never item by item.

Run: ``python benchmarks/injection_classifier.py`` (in-sample, the tuning splits);
``--attacks A.jsonl --near N.jsonl --name NAME`` (a held-out split, once, frozen layers);
``--speed`` (the layers' cost on FOMC files and on refgate's docs, where the prefilter passes);
``--candidate jailguard|nanoguard`` re-runs a third-party package on v1.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from injection_families import (
    DATA,
    FLAG,
    ROOT,
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
from refgate.provenance.injection.layer import ngram_signals, semantic_signals

COLUMNS = (
    "rules",
    "n-gram",
    "semantic",
    "rules OR n-gram",
    "rules OR semantic",
    "rules OR both",
)


def rules(text: str) -> bool:
    report = inspect_injection(text, classifier=False)
    return any(s.confidence in FLAG for s in report.signals)


def ours(text: str) -> bool:
    return bool(ngram_signals(text))


def hits(text: str) -> tuple[bool, ...]:
    r, n, s = rules(text), bool(ngram_signals(text)), bool(semantic_signals(text))
    return r, n, s, r or n, r or s, r or n or s


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


def table(rows: dict, title: str, columns: tuple[str, ...] = COLUMNS) -> None:
    print(f"| {title} | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for key, (n, *counts) in rows.items():
        print(f"| {key} | " + " | ".join(f"{c}/{n} = {pct(c, n)}" for c in counts) + " |")


def count(texts: list[str], clf: Callable[[str], bool]) -> tuple[int, int, int, int]:
    """(texts, rules, ``clf``, rules OR ``clf``) flagged (the third-party candidates)."""
    n = r = c = u = 0
    for t in texts:
        hit_r, hit_c = rules(t), clf(t)
        n, r, c, u = n + 1, r + hit_r, c + hit_c, u + (hit_r or hit_c)
    return n, r, c, u


def count_all(texts: list[str]) -> list[int]:
    out = [0] * (1 + len(COLUMNS))
    for t in texts:
        out[0] += 1
        for i, h in enumerate(hits(t)):
            out[i + 1] += h
    return out


def evaluate(attacks: list[dict], near: list[dict], name: str) -> None:
    """Per family and language (never per item): every column of ``COLUMNS``."""
    hosts = statement_paragraphs()
    cells: dict[str, list[int]] = defaultdict(lambda: [0] * (1 + len(COLUMNS)))
    for a in attacks:
        for _, text in embedded(a, hosts):
            flags = hits(text)
            for key in (f"{a['family']} {a['lang']}", f"all {a['lang']}", "all"):
                cell = cells[key]
                cell[0] += 1
                for i, h in enumerate(flags):
                    cell[i + 1] += h
    order = sorted(cells, key=lambda k: (k == "all", k.startswith("all "), k))
    table({k: cells[k] for k in order}, f"{name} attacks (detected)")
    negatives = {
        f"{name} near-miss {lang}": [x["text"] for x in near if x["lang"] == lang]
        for lang in sorted({x["lang"] for x in near})
    }
    negatives |= {
        "TAT-QA dev 141-278 (never trained on)": tatqa(DATA / "tatqa_dev_heldout_paragraphs.jsonl"),
        "FOMC minutes chunks (threshold only)": minutes_chunks(),
        "FOMC statement paragraphs (trained on)": statement_paragraphs(),
        "TAT-QA dev 1-140 (trained on)": tatqa(
            ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl"
        ),
    }
    table({k: count_all(v) for k, v in negatives.items()}, "negatives (flagged)")


def read_rows(paths: list[Path]) -> list[dict]:
    """The rows of held-out files given at run time (never listed item by item); a row without
    an ``id`` is named by its file and line, one without ``family`` or ``lang`` counts as ``?``."""
    rows = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip():
                row = json.loads(line)
                row.setdefault("id", f"{path.name}:{n}")
                row.setdefault("family", "?")
                row.setdefault("lang", "?")
                rows.append(row)
    return rows


def speed() -> None:
    """CPU time of each layer alone (rules excluded) on the FOMC files and on refgate's docs
    (prose about agents, tools and prompts: the prefilter passes many windows there)."""
    from refgate.provenance.injection import semantic

    semantic.minilm_encode(["warm up"])
    docs = [f.read_text(encoding="utf-8") for f in sorted((ROOT / "docs").glob("*.md"))]
    fomc = sorted((ROOT / "examples/us-macro/documents").glob("*.txt"))
    fomc += sorted((ROOT / "examples/us-macro/web/minutes").glob("*.txt"))
    corpora = {"FOMC corpus": [f.read_text(encoding="utf-8") for f in fomc], "refgate docs": docs}
    for name, texts in corpora.items():
        mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        wins = sum(len(semantic.windows(t, semantic.shipped().window)) for t in texts)
        for label, fn in (("n-gram", ngram_signals), ("semantic", semantic_signals)):
            c0 = time.process_time()
            for t in texts:
                fn(t)
            cpu = time.process_time() - c0
            print(
                f"{name} ({mb:.2f} MB, {wins} windows pass the prefilter): {label} alone "
                f"{mb / cpu:.1f} MB/s CPU ({cpu:.2f} s)"
            )


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
    table(rows, "v1", ("rules", "candidate", "rules OR candidate"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate", help="a third-party package instead: jailguard, nanoguard")
    ap.add_argument("--threshold", type=float, default=0.5, help="the candidate's threshold")
    ap.add_argument("--every", type=int, default=1, help="candidate: every Nth FOMC paragraph")
    ap.add_argument("--attacks", type=Path, nargs="+", help="held-out attack files (aggregates)")
    ap.add_argument("--near", type=Path, nargs="+", default=[], help="its near-miss files")
    ap.add_argument("--name", default="held-out", help="the held-out split's name in tables")
    ap.add_argument("--speed", action="store_true", help="the layers' CPU cost")
    ap.add_argument("--oof", nargs=argparse.REMAINDER, help="run the trainer's comparison")
    args = ap.parse_args()
    if args.candidate:
        v1(candidate(args.candidate, args.threshold), args.every)
    elif args.oof is not None:
        import subprocess
        import sys

        script = ROOT / "scripts" / "train_injection_semantic.py"
        raise SystemExit(subprocess.call([sys.executable, str(script), "--compare", *args.oof]))
    elif args.speed:
        speed()
    elif args.attacks:
        evaluate(read_rows(args.attacks), read_rows(args.near), args.name)
    else:
        near = load("near_miss_v2.jsonl") + load("near_miss_v2_pages.jsonl")
        evaluate(load("attacks_v2.jsonl"), near, "v2 (trained on)")
        for f, split in (("attacks_tuning_r3.jsonl", "tuning_r3"), ("attacks_v3.jsonl", None)):
            rows = load_optional(f, split)
            if rows:
                nm = load_optional(f.replace("attacks_", "near_miss_")) if split is None else []
                evaluate(rows, nm, f"{f.removesuffix('.jsonl')} (trained on)")


if __name__ == "__main__":
    main()

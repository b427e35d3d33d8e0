"""Injection families: recall per attack family and language on the tuning and held-out splits,
false positives on near-miss negatives and on real paragraphs (issue 14).

Corpus (benchmarks/data/injection, sources in SOURCES.md): ``attacks.jsonl`` (v1: attack
phrasings from published benchmarks and their translations, labelled by family, language, style
and split; its held-out part was seen and is tuning material since 2026-12-01),
``attacks_v2.jsonl`` (held-out v2: phrasings from public sets nobody on the team had used,
committed before any rule change), ``near_miss.jsonl`` / ``near_miss_v2.jsonl`` (legitimate text
that quotes, discusses or forbids instructions; v2 is real public text),
``tatqa_dev_heldout_paragraphs.jsonl`` (TAT-QA dev contexts 141-278, never used by tests).
Each attack is embedded in a real FOMC paragraph (examples/us-macro) in four ways (inside the
paragraph, on its own line after it, in an HTML comment, in a markdown quote).

Detected: the report of the host text has a signal of confidence medium or high (withheld:
high). A false positive on a negative: any signal at medium or high ("flagged"); the figures
for any signal at all (low included) are printed beside them. Real paragraphs: any signal.

Run: ``python benchmarks/injection_families.py`` (``--misses tuning`` or ``--misses heldout``
lists the missed items of the v1 tuning or v1 held-out part, both tuning material now, and
``--misses tuning_r2`` those of the second-round tuning file (attacks_tuning_r2.jsonl); held-out
v2 is reported, never listed item by item, so it cannot be tuned on).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "injection"
sys.path.insert(0, str(ROOT / "tests" / "provenance"))

import refgate.tools.registry  # noqa: E402,F401  (registers the tool names with the detector)
from refgate.provenance import inspect_injection  # noqa: E402

FLAG = {"high", "medium"}
# Splits that may be inspected and tuned on ("heldout" is v1's held-out part, seen in aggregate
# and moved to tuning on 2026-12-01); "heldout_v2" is only ever counted.
TUNING = {
    "tuning": "v1 tuning",
    "heldout": "v1 held-out (tuning since 2026-12-01)",
    "tuning_r2": "tuning r2 (pallms)",
}
SPLITS = {**TUNING, "heldout_v2": "held-out v2"}
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def load(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x]


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def statement_paragraphs() -> list[str]:
    out = []
    for f in sorted((ROOT / "examples/us-macro/documents").glob("*.txt")):
        out += [p for p in re.split(r"\n\s*\n", f.read_text(encoding="utf-8")) if len(p) > 200]
    return out


def minutes_chunks(size: int = 5) -> list[str]:
    """The minutes are one line per meeting: chunks of ``size`` sentences."""
    out = []
    for f in sorted((ROOT / "examples/us-macro/web/minutes").glob("*.txt")):
        sents = _SENT.split(f.read_text(encoding="utf-8"))
        out += [" ".join(sents[i : i + size]) for i in range(0, len(sents), size)]
    return out


def tatqa(path: Path) -> list[str]:
    return [json.loads(x)["text"] for x in path.read_text(encoding="utf-8").splitlines() if x]


def _inside(host: str, attack: str) -> str:
    sents = _SENT.split(host)
    k = max(1, len(sents) // 2)
    return " ".join([*sents[:k], attack, *sents[k:]])


WRAPPERS: dict[str, Callable[[str, str], str]] = {
    "inside": _inside,
    "own_line": lambda host, a: f"{host}\n\n{a}\n",
    "html_comment": lambda host, a: f"{host}\n<!-- {a} -->\n",
    "md_quote": lambda host, a: host + "\n\n" + "\n".join("> " + x for x in a.split("\n")),
}


def embedded(attack: dict, hosts: list[str]) -> list[tuple[str, str]]:
    """(wrapper, host text with the attack in it) for each wrapper, host chosen by hash."""
    return [
        (name, wrap(hosts[_h(attack["id"] + name) % len(hosts)], attack["text"]))
        for name, wrap in WRAPPERS.items()
    ]


def recall(attacks: list[dict], hosts: list[str], misses: str | None) -> dict:
    stats: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    origin: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    fired: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in attacks:
        for wrapper, text in embedded(a, hosts):
            report = inspect_injection(text)
            flagged = [s for s in report.signals if s.confidence in FLAG]
            cell = stats[(a["family"], a["lang"], a["split"])]
            cell[0] += 1
            cell[1] += bool(flagged)
            cell[2] += report.highest_confidence == "high"
            kind = {"verbatim": "published", "translated": "translated by refgate"}.get(
                a["style"], "written or encoded by refgate"
            )
            key = (kind, a["split"])
            origin[key][0] += 1
            origin[key][1] += bool(flagged)
            for s in flagged:
                fired[a["family"]][s.family] += 1
            if not flagged and misses == a["split"] and misses in TUNING:
                print(f"MISS {a['id']} [{wrapper}] {a['text'][:150]!r}")
    return {"cells": stats, "fired": fired, "origin": origin}


def false_positives(texts: list[str], *, show: str = "") -> tuple[int, int, int]:
    flagged = anything = 0
    for t in texts:
        report = inspect_injection(t)
        anything += not report.clean
        hit = [s for s in report.signals if s.confidence in FLAG]
        flagged += bool(hit)
        if show and report.signals:
            print(f"FP {show}: {[s.explain() for s in report.signals][:2]}")
    return flagged, anything, len(texts)


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--misses", choices=list(TUNING), help="list missed items of this (tuning) split"
    )
    ap.add_argument(
        "--show-fp", choices=list(TUNING), help="list flagged negatives of this (tuning) split"
    )
    ap.add_argument(
        "--tensor-trust",
        type=Path,
        nargs="*",
        default=[],
        help="Tensor Trust benchmark JSONL files (hijacking/extraction robustness, not shipped: "
        "no licence): recall on every unique attack, never tuned on",
    )
    args = ap.parse_args()
    attacks = load("attacks.jsonl") + load("attacks_tuning_r2.jsonl") + load("attacks_v2.jsonl")
    near = load("near_miss.jsonl") + load("near_miss_v2.jsonl") + load("near_miss_v2_pages.jsonl")
    hosts = statement_paragraphs()
    res = recall(attacks, hosts, args.misses)
    families = sorted({a["family"] for a in attacks})
    print(f"attacks: {len(attacks)} phrasings x {len(WRAPPERS)} embeddings in FOMC paragraphs")
    print(
        "| family | lang | "
        + " | ".join(f"{v}: detected (withheld)" for v in SPLITS.values())
        + " |"
    )
    print("|---|---|" + "---|" * len(SPLITS))
    for fam in families:
        for lang in ("en", "ko"):
            row = []
            for split in SPLITS:
                n, d, w = res["cells"].get((fam, lang, split), (0, 0, 0))
                row.append(f"{d}/{n} = {pct(d, n)} ({pct(w, n)})")
            print(f"| {fam} | {lang} | " + " | ".join(row) + " |")
    for split, name in SPLITS.items():
        n = sum(v[0] for k, v in res["cells"].items() if k[2] == split)
        d = sum(v[1] for k, v in res["cells"].items() if k[2] == split)
        print(f"all {name}: {d}/{n} = {pct(d, n)}")
    for (kind, split), (n, d) in sorted(res["origin"].items()):
        print(f"{SPLITS[split]}, {kind} phrasings: {d}/{n} = {pct(d, n)}")
    print("families that fired, per attack family:")
    for fam in families:
        print(f"  {fam}: {dict(sorted(res['fired'][fam].items()))}")
    print("| negatives | split | flagged (medium/high) | any signal |")
    print("|---|---|---|---|")
    for split, name in SPLITS.items():
        for lang in ("en", "ko"):
            texts = [x["text"] for x in near if x["split"] == split and x["lang"] == lang]
            if not texts:
                continue
            show = f"{lang}" if args.show_fp == split else ""
            f, a, n = false_positives(texts, show=show)
            print(f"| near-miss {lang} | {name} | {f}/{n} = {pct(f, n)} | {a}/{n} = {pct(a, n)} |")
    kinds = sorted({(x["lang"], x["kind"]) for x in near if x["split"] == "heldout_v2"})
    for lang, kind in kinds:
        texts = [
            x["text"]
            for x in near
            if x["split"] == "heldout_v2" and (x["lang"], x["kind"]) == (lang, kind)
        ]
        f, a, n = false_positives(texts)
        print(
            f"| near-miss {lang}, {kind} | held-out v2 | {f}/{n} = {pct(f, n)} | {a}/{n} = {pct(a, n)} |"
        )
    real = {
        "FOMC statement paragraphs": statement_paragraphs(),
        "FOMC minutes, 5-sentence chunks": minutes_chunks(),
        "TAT-QA dev paragraphs (contexts 1-140, tests)": tatqa(
            ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl"
        ),
        "TAT-QA dev paragraphs (contexts 141-278, held out)": tatqa(
            DATA / "tatqa_dev_heldout_paragraphs.jsonl"
        ),
    }
    for name, texts in real.items():
        f, a, n = false_positives(texts)
        print(f"| {name} | real | {f}/{n} = {pct(f, n)} | {a}/{n} = {pct(a, n)} |")
    for path in args.tensor_trust:
        external(path, hosts)


def external(path: Path, hosts: list[str]) -> None:
    """Every unique attack of a Tensor Trust benchmark file after a FOMC paragraph."""
    seen, attacks = set(), []
    for line in path.read_text(encoding="utf-8").splitlines():
        attack = json.loads(line)["attack"]
        key = re.sub(r"\W+", " ", attack.lower())[:80]
        if key not in seen:
            seen.add(key)
            attacks.append(attack)
    detected = withheld = 0
    for i, attack in enumerate(attacks):
        report = inspect_injection(hosts[i % len(hosts)] + "\n\n" + attack)
        detected += any(s.confidence in FLAG for s in report.signals)
        withheld += report.highest_confidence == "high"
    n = len(attacks)
    print(
        f"{path.name}: {n} unique attacks, detected {pct(detected, n)}, withheld {pct(withheld, n)}"
    )


if __name__ == "__main__":
    main()

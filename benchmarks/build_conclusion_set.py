"""Build the ordinary (non-conclusion) side of the conclusion-flagging set from real text in
../shared/data (see benchmarks/conclusion_flagging.py): English sentences from FOMC minutes and
statements and TAT-QA annual-report paragraphs (short sentences, stored with their source), and
Korean sentences of a DART filing's sections (stored as row pointers: the filing text stays in
shared/). Deterministic (a fixed seed); labels start as "ordinary" and are reviewed by hand.

usage: python benchmarks/build_conclusion_set.py [--shared ../shared/data] [--per-source N]
       python benchmarks/build_conclusion_set.py --heldout   (seed 47, disjoint from every tuning
       sample: heldout_ordinary_{en,ko}.jsonl; ordinary_*_round2.jsonl was drawn the same way with
       seed 46 and became tuning after one measurement; the Korean held-out file is the seed-46
       Korean sample, as the filings hold no unused sentences after it)
Re-running rewrites the files with every label "ordinary": the hand-reviewed labels (a real
absence claim such as "담보 및 지급보증은 없습니다") must then be set again.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from shared.conclusion_text import digest, en_sentences, ko_sentences, xml_sentences

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "conclusions"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[2] / "shared/data")
    )
    parser.add_argument("--per-source", type=int, default=150)
    parser.add_argument("--heldout", action="store_true")
    args = parser.parse_args()
    shared = Path(args.shared)
    rng = random.Random(47 if args.heldout else 45)
    prefix = "heldout_" if args.heldout else ""
    taken: set[str] = set()
    if args.heldout:
        for path in sorted(OUT.glob("ordinary_*.jsonl")):  # every tuning sample
            for line in path.read_text().splitlines():
                rec = json.loads(line)
                taken.add(rec.get("text") or rec["sha1"])
    en: list[dict[str, str]] = []
    for folder, pattern in (
        ("fomc-minutes/minutes", "*.txt"),
        ("fomc-statements/statements", "*.txt"),
    ):
        pool = []
        for path in sorted((shared / folder).glob(pattern)):
            for s in en_sentences(path.read_text(encoding="utf-8", errors="replace")):
                if s not in taken:
                    pool.append({"text": s, "source": f"{folder}/{path.name}"})
        en += rng.sample(pool, min(args.per_source, len(pool)))
    tat = json.loads((shared / "tatqa-dev/tatqa_dataset_dev.json").read_text())
    pool = [
        {"text": s, "source": f"tatqa-dev/tatqa_dataset_dev.json#{p['uid']}"}
        for ctx in tat
        for p in ctx["paragraphs"]
        for s in en_sentences(p["text"])
        if s not in taken
    ]
    en += rng.sample(pool, min(args.per_source, len(pool)))
    import pandas as pd

    rel = "dart-real/sections/005930.parquet"
    frame = pd.read_parquet(shared / rel)
    pool_ko = []
    for row, content in enumerate(frame["section_content"]):
        for j, s in enumerate(ko_sentences(str(content))):
            if digest(s) in taken:
                continue
            pool_ko.append({"file": rel, "row": row, "sentence": j, "sha1": digest(s)})
    xml = "dart-real/documents/20220816001711.xml"
    for j, s in enumerate(xml_sentences(shared / xml)):
        if digest(s) in taken:
            continue
        pool_ko.append({"file": xml, "row": -1, "sentence": j, "sha1": digest(s)})
    ko = rng.sample(pool_ko, min(3 * args.per_source, len(pool_ko)))
    ko.sort(key=lambda x: (x["row"], x["sentence"]))
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / f"{prefix}ordinary_en.jsonl").open("w", encoding="utf-8") as fh:
        for item in en:
            fh.write(json.dumps({**item, "label": "ordinary"}, ensure_ascii=False) + "\n")
    with (OUT / f"{prefix}ordinary_ko.jsonl").open("w", encoding="utf-8") as fh:
        for item in ko:
            fh.write(json.dumps({**item, "label": "ordinary"}, ensure_ascii=False) + "\n")
    print(f"{len(en)} English sentences, {len(ko)} Korean pointers -> {OUT}")


if __name__ == "__main__":
    main()

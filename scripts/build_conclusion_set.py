"""Build the ordinary (non-conclusion) side of the conclusion-flagging set from real text in
../shared/data (see benchmarks/conclusion_flagging.py): English sentences from FOMC minutes and
statements and TAT-QA annual-report paragraphs (short sentences, stored with their source), and
Korean sentences of a DART filing's sections (stored as row pointers: the filing text stays in
shared/). Deterministic (a fixed seed); labels start as "ordinary" and are reviewed by hand.

usage: python scripts/build_conclusion_set.py [--shared ../shared/data] [--per-source N]
       python scripts/build_conclusion_set.py --heldout   (seed 47, disjoint from every tuning
       sample: heldout_ordinary_{en,ko}.jsonl; ordinary_*_round2.jsonl was drawn the same way with
       seed 46 and became tuning after one measurement)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "conclusions"
EN_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
KO_SPLIT = re.compile(r"(?<=[다요음함됨임]\.)\s+|(?<=니다)\s+|\n+")


def en_sentences(text: str) -> list[str]:
    out = []
    for s in EN_SPLIT.split(" ".join(text.split())):
        if 40 <= len(s) <= 240 and s[0].isupper() and s.endswith((".", "!")):
            out.append(s)
    return out


def ko_sentences(text: str) -> list[str]:
    out = []
    for s in KO_SPLIT.split(text):
        s = s.strip().lstrip("-•·○ ").strip()
        if (
            15 <= len(s) <= 200
            and not s.startswith(("|", "※", "[", "*"))
            and "|" not in s
            and s.endswith((".", "니다", "습니다"))
            and len(re.findall(r"[가-힣]", s)) >= 8
        ):
            out.append(s)
    return out


def xml_sentences(path: Path) -> list[str]:
    """The sentences of a DART document.xml (EUC-KR or UTF-8), tags removed, in order."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("euc-kr", errors="replace")
    text = re.sub(r"<(?:TABLE|table)\b.*?</(?:TABLE|table)>", "\n", text, flags=re.S)
    text = re.sub(r"<[^>]+>", "\n", text)
    return ko_sentences(text)


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


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

"""Conclusion flagging (issue 45): recall on conclusions and false flags on ordinary analytic
sentences, English and Korean, on the held-out split (the tuning split is printed too).

The set (benchmarks/data/conclusions/):
- ``conclusions_{en,ko}.txt`` and ``conclusions_{en,ko}_round2.txt`` (tuning; round 2 was a
  held-out round measured once, then tuned on) and ``heldout_conclusions_{en,ko}.txt`` (held
  out, written after the rules were frozen): analyst-style conclusion templates
  (recommendation, rating, risk verdict, absence claim) written for refgate, each filled with
  company names.
- ``ordinary_{en,ko}.jsonl`` (seed 45) and ``ordinary_en_round2.jsonl`` (seed 46) for tuning,
  ``heldout_ordinary_{en,ko}.jsonl`` (held out, disjoint; English seed 47; Korean seed 46, as
  the DART text holds no more unused sentences: it was measured in round 2 and no rule was
  changed for it, one label was made consistent with its twin): real sentences (benchmarks/build_conclusion_set.py): English FOMC minutes and
  statements and TAT-QA annual-report paragraphs, stored with their source; Korean sentences of
  DART filings (삼성전자's sections parquet and its 2022 half-year document), stored as pointers
  read at run time (the filings' text stays in ../shared). ``label`` is "ordinary" or, for a
  real sentence that does state a conclusion (a filing's "no guarantees were received"), its
  kind, reviewed by hand.

usage: python benchmarks/conclusion_flagging.py [--shared ../shared/data] [--show-errors]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from shared.conclusion_text import ko_sentences, xml_sentences

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "conclusions"
COMPANIES = {
    "en": ["Samsung Electronics", "NCSoft", "Hyundai Motor", "the issuer"],
    "ko": ["삼성전자", "엔씨소프트", "현대차", "LG화학"],
}


@dataclass(frozen=True)
class Item:
    text: str
    label: str  # "ordinary" or a conclusion kind
    split: str  # "tuning" or "held-out"
    source: str


def _files(kind: str, lang: str, split: str, ext: str) -> list[str]:
    if split == "held-out":
        return [f"heldout_{kind}_{lang}.{ext}"]
    names = [f"{kind}_{lang}.{ext}", f"{kind}_{lang}_round2.{ext}"]
    return [n for n in names if (DATA / n).exists()]


def _templates(lang: str, split: str) -> list[Item]:
    files = _files("conclusions", lang, split, "txt")
    return [i for name in files for i in _template_file(name, lang, split)]


def _template_file(name: str, lang: str, split: str) -> list[Item]:
    items: list[Item] = []
    lines = [
        ln
        for ln in (DATA / name).read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    for n, line in enumerate(lines):
        kind, template = line.split("\t", 1)
        seen = set()
        for co in COMPANIES[lang]:
            text = template.replace("{co}", co)
            if text not in seen:
                seen.add(text)
                items.append(Item(text, kind, split, f"{name}:{n + 1}"))
    return items


def _ordinary(lang: str, shared: Path, split: str) -> list[Item]:
    cache: dict[str, list[list[str]]] = {}
    return [
        i
        for name in _files("ordinary", lang, split, "jsonl")
        for i in _ordinary_file(name, shared, split, cache)
    ]


def _ordinary_file(
    name: str, shared: Path, split: str, cache: dict[str, list[list[str]]]
) -> list[Item]:
    items: list[Item] = []
    for line in (DATA / name).read_text().splitlines():
        rec = json.loads(line)
        if "text" in rec:
            items.append(Item(rec["text"], rec["label"], split, rec["source"]))
            continue
        text = _pointer(rec, shared, cache)
        if hashlib.sha1(text.encode("utf-8")).hexdigest()[:12] != rec["sha1"]:
            raise SystemExit(f"{rec['file']} row {rec['row']} changed: rebuild the pointers")
        items.append(
            Item(text, rec["label"], split, f"{rec['file']}#{rec['row']}.{rec['sentence']}")
        )
    return items


def _pointer(rec: dict, shared: Path, cache: dict[str, list[list[str]]]) -> str:
    file = rec["file"]
    if file not in cache:
        if file.endswith(".parquet"):
            import pandas as pd

            frame = pd.read_parquet(shared / file)
            cache[file] = [ko_sentences(str(c)) for c in frame["section_content"]]
        else:
            cache[file] = [xml_sentences(shared / file)]
    rows = cache[file]
    return rows[rec["row"]][rec["sentence"]] if rec["row"] >= 0 else rows[0][rec["sentence"]]


def load_set(lang: str, shared: Path) -> list[Item]:
    return [
        item
        for split in ("tuning", "held-out")
        for item in _templates(lang, split) + _ordinary(lang, shared, split)
    ]


def measure(items: list[Item]) -> dict[str, float | int]:
    from refgate.gate.conclusions import conclusion_kind

    concl = [i for i in items if i.label != "ordinary"]
    ordinary = [i for i in items if i.label == "ordinary"]
    hit = sum(1 for i in concl if conclusion_kind(i.text))
    false = sum(1 for i in ordinary if conclusion_kind(i.text))
    return {
        "conclusions": len(concl),
        "flagged": hit,
        "recall": hit / len(concl) if concl else 0.0,
        "ordinary": len(ordinary),
        "false_flags": false,
        "false_rate": false / len(ordinary) if ordinary else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--split", default=None, help="errors of this split only")
    args = parser.parse_args()
    from refgate.gate.conclusions import conclusion_kind

    print("| language | split | conclusions flagged (recall) | ordinary sentences flagged |")
    print("| --- | --- | --- | --- |")
    for lang in ("en", "ko"):
        items = load_set(lang, Path(args.shared))
        for split in ("tuning", "held-out"):
            m = measure([i for i in items if i.split == split])
            print(
                f"| {lang} | {split} | {m['flagged']}/{m['conclusions']} ({m['recall']:.1%}) "
                f"| {m['false_flags']}/{m['ordinary']} ({m['false_rate']:.1%}) |"
            )
        if args.show_errors:
            for i in items:
                if args.split and i.split != args.split:
                    continue
                got = conclusion_kind(i.text)
                if (got is None) != (i.label == "ordinary"):
                    print(f"  [{i.split}] {i.label} -> {got}: {i.text[:160]}  ({i.source})")


if __name__ == "__main__":
    main()

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

Run: ``python benchmarks/injection_families.py`` while tuning (``--no-v3`` leaves v3 out).
``--misses SPLIT`` lists the missed items of a tuning split: ``tuning`` / ``heldout`` (v1),
``tuning_r2``, ``v2`` (held out in the second round, measured once, tuning material since the
third round), ``tuning_r3`` and ``v3`` (held out in the third round, run once blind by the lead,
tuning material since the fourth); ``--fold a|b`` runs (and lists) only one leave-source-out
fold of the split given to ``--misses`` / ``--show-fp`` (v2, r3 or v3; see ``V2_FOLD_B``,
``R3_FOLD_B``, ``V3_FOLD_B``). A blind split (``BLIND``: v4, loaded only with ``--v4``, which the
lead runs once) is reported in aggregate only (per family and language; near-misses per language):
never listed item by item, never with ``--misses`` or ``--show-fp``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "injection"

from refgate.provenance import inspect_injection  # noqa: E402

FLAG = {"high", "medium"}
# Splits that may be inspected and tuned on ("heldout" is v1's held-out part, seen in aggregate
# and moved to tuning on 2026-12-01; "heldout_v2" was measured once in the second round and is
# tuning material since the third; "heldout_v3" was run once blind at the end of the third round
# and is tuning material since the fourth). A split in BLIND is only ever counted, per cell.
TUNING = {
    "tuning": "v1 tuning",
    "heldout": "v1 held-out (tuning since 2026-12-01)",
    "tuning_r2": "tuning r2 (pallms)",
    "heldout_v2": "v2 (tuning since round 3)",
    "tuning_r3": "tuning r3",
    "heldout_v3": "v3 (tuning since round 4)",
}
BLIND: dict[str, str] = {"heldout_v4": "held-out v4 (blind)"}
MISS_CHOICES = {"tuning": "tuning", "heldout": "heldout", "tuning_r2": "tuning_r2"}
MISS_CHOICES |= {"v2": "heldout_v2", "tuning_r3": "tuning_r3", "v3": "heldout_v3"}
SHORT = {"heldout_v2": "v2", "tuning_r3": "r3", "heldout_v3": "v3"}
V3_ATTACKS, V3_NEAR = "attacks_v3.jsonl", "near_miss_v3.jsonl"
#: Blind held-out v4 (fourth round): loaded only with ``--v4``, which only the lead runs, once.
V4_ATTACKS, V4_NEAR = "attacks_v4.jsonl", "near_miss_v4.jsonl"
# Leave-source-out estimate of transfer (third round, declared before any v2 item was listed):
# the rules were tuned on the v2 phrasings of fold A (spikee, jangwonii, DoomArena, the bare
# encodings) and on near_miss_v2.jsonl first; fold B (the sources below, with their refgate
# translations, and near_miss_v2_pages.jsonl) was measured before any of its items was listed.
V2_FOLD_B = ("greshake", "garak", "Invariant")
V2_FOLD_B_NEAR = "near_miss_v2_pages.jsonl"
# The same for tuning r3 (declared when it landed, before any r3 item was listed): fold A is
# israelo19/promptguard and its translations and encodings, fold B HackTricks and the two
# injection labs (with theirs).
R3_FOLD_B = ("HackTricks", "r3-hacktricks", "minilab", "r3-lab", "prompt-injection-lab")
# The same for v3 (fourth round, declared before any v3 item was listed): fold A is RaccoonBench
# (EN and skan0779's Korean translation), promptmap and llm-guard, with the refgate encodings of
# their phrasings; fold B is navirocker (EN and its Korean translation), hanhojinx, acuvity,
# hijack-agentic-ai, WASP and promptfoo_ko, with the refgate translations and encodings of their
# phrasings (matched in ``source``, case-insensitively). Near-misses: fold A the DAIR.AI guide
# (EN, KO) and FinanceBench, fold B the ADK docs (EN, KO) and MITRE ATLAS.
V3_FOLD_B = ("navirocker", "hanhojinx", "acuvity", "hijack", "wasp", "promptfoo_ko")
V3_FOLD_B_NEAR = ("adk-docs", "atlas")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def load(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x]


def load_optional(name: str, split: str | None = None) -> list[dict]:
    """The rows of ``name`` if the file exists (``split`` overrides each row's split)."""
    if not (DATA / name).exists():
        return []
    rows = load(name)
    for r in rows:
        r["file"] = name
        if split:
            r["split"] = split
    return rows


def v2_fold(row: dict) -> str:
    """``a`` or ``b`` (held back first) for a v2, r3 or v3 attack or near-miss row; ``""`` for
    the other splits."""
    source = row.get("source", "")
    if row.get("split") == "heldout_v3":
        low = source.lower()
        names = V3_FOLD_B_NEAR if "kind" in row else V3_FOLD_B
        return "b" if any(s in low for s in names) else "a"
    if row.get("split") == "tuning_r3":
        return "b" if any(s in source for s in R3_FOLD_B) else "a"
    if row.get("split") != "heldout_v2":
        return ""
    if row.get("file") == V2_FOLD_B_NEAR or any(s in source for s in V2_FOLD_B):
        return "b"
    return "a"


def corpus(*, v3: bool, v4: bool = False) -> tuple[list[dict], list[dict]]:
    """(attacks, near-misses) of every split; v3 only when ``v3``, the blind v4 only when ``v4``
    (and their files exist)."""
    attacks = [
        *load_optional("attacks.jsonl"),
        *load_optional("attacks_tuning_r2.jsonl"),
        *load_optional("attacks_v2.jsonl"),
        *load_optional("attacks_tuning_r3.jsonl", "tuning_r3"),
    ]
    near = [
        *load_optional("near_miss.jsonl"),
        *load_optional("near_miss_v2.jsonl"),
        *load_optional("near_miss_v2_pages.jsonl"),
    ]
    if v3:
        attacks += load_optional(V3_ATTACKS, "heldout_v3")
        near += load_optional(V3_NEAR, "heldout_v3")
    if v4:
        attacks += load_optional(V4_ATTACKS, "heldout_v4")
        near += load_optional(V4_NEAR, "heldout_v4")
    return attacks, near


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


def source_group(source: str) -> str:
    """A short name of a row's source (the collection it comes from)."""
    for name in ("spikee", "jangwonii", "DoomArena", "greshake", "garak", "Invariant", "encoded"):
        if name in source:
            return name + (" (refgate translation)" if source.startswith("translated") else "")
    return source.split(" (")[0][:40] or "?"


def recall(attacks: list[dict], hosts: list[str], misses: str | None, fold: str = "all") -> dict:
    stats: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    origin: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    sources: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    folds: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    fired: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in attacks:
        blind = a["split"] in BLIND
        for wrapper, text in embedded(a, hosts):
            report = inspect_injection(text)
            flagged = [s for s in report.signals if s.confidence in FLAG]
            cell = stats[(a["family"], a["lang"], a["split"])]
            cell[0] += 1
            cell[1] += bool(flagged)
            cell[2] += report.highest_confidence == "high"
            src = sources[(a["split"], source_group(a.get("source", "")), a["lang"])]
            src[0] += 1
            src[1] += bool(flagged)
            if blind:  # a blind split: counted per cell and per source, nothing else
                kind = "published" if a["style"] in ("verbatim", "published-translation") else ""
                key = (kind or "written, translated or encoded by refgate", a["split"])
                origin[key][0] += 1
                origin[key][1] += bool(flagged)
                continue
            if v2_fold(a):
                f = SHORT[a["split"]] + " " + v2_fold(a)
                for key in ((f, a["lang"], "all"), (f, a["lang"], a["family"])):
                    folds[key][0] += 1
                    folds[key][1] += bool(flagged)
            kind = {"verbatim": "published", "translated": "translated by refgate"}.get(
                a["style"], "written or encoded by refgate"
            )
            key = (kind, a["split"])
            origin[key][0] += 1
            origin[key][1] += bool(flagged)
            for s in flagged:
                fired[a["family"]][s.family] += 1
            listed = fold == "all" or v2_fold(a) in ("", fold)
            if not flagged and misses == a["split"] and misses in TUNING and listed:
                print(f"MISS {a['id']} [{wrapper}] {a['text'][:150]!r}")
    return {"cells": stats, "fired": fired, "origin": origin, "sources": sources, "folds": folds}


def false_positives(texts: list[str], *, show: str = "") -> tuple[int, int, int]:
    flagged = anything = 0
    for t in texts:
        report = inspect_injection(t)
        anything += not report.clean
        hit = [s for s in report.signals if s.confidence in FLAG]
        flagged += bool(hit)
        if show and hit:
            print(f"FP {show}: {[s.explain() for s in hit][:2]} IN {t[:160]!r}")
    return flagged, anything, len(texts)


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--misses", choices=list(MISS_CHOICES), help="list missed items of this (tuning) split"
    )
    ap.add_argument(
        "--show-fp",
        choices=list(MISS_CHOICES),
        help="list flagged negatives of this (tuning) split",
    )
    ap.add_argument(
        "--fold",
        "--v2-fold",
        dest="fold",
        choices=("a", "b", "all"),
        default="all",
        help="with --misses v2|tuning_r3|v3 / --show-fp v2|v3: list only this leave-source-out "
        "fold",
    )
    ap.add_argument(
        "--no-v3",
        action="store_true",
        help="leave the v3 files out (tuning material since the fourth round)",
    )
    ap.add_argument(
        "--v4",
        action="store_true",
        help="also run the blind held-out v4 (counted per cell only; the lead runs it once)",
    )
    ap.add_argument(
        "--tensor-trust",
        type=Path,
        nargs="*",
        default=[],
        help="Tensor Trust benchmark JSONL files (hijacking/extraction robustness, not shipped: "
        "no licence): recall on every unique attack (classifier training material)",
    )
    args = ap.parse_args()
    misses = MISS_CHOICES.get(args.misses or "")
    show_split = MISS_CHOICES.get(args.show_fp or "")
    if args.v4 and (misses or show_split):
        ap.error("--v4 is blind: it cannot be combined with --misses or --show-fp")
    attacks, near = corpus(v3=not args.no_v3, v4=args.v4)
    if args.fold != "all" and (misses or show_split):
        # the other fold of the listed split is not run at all (it stays held back)
        keep = {misses, show_split}
        attacks = [a for a in attacks if a["split"] not in keep or v2_fold(a) == args.fold]
        near = [x for x in near if x["split"] not in keep or v2_fold(x) == args.fold]
    splits = {k: v for k, v in {**TUNING, **BLIND}.items() if any(a["split"] == k for a in attacks)}
    hosts = statement_paragraphs()
    res = recall(attacks, hosts, misses, args.fold)
    families = sorted({a["family"] for a in attacks})
    print(f"attacks: {len(attacks)} phrasings x {len(WRAPPERS)} embeddings in FOMC paragraphs")
    print(
        "| family | lang | "
        + " | ".join(f"{v}: detected (withheld)" for v in splits.values())
        + " |"
    )
    print("|---|---|" + "---|" * len(splits))
    for fam in families:
        for lang in ("en", "ko"):
            row = []
            for split in splits:
                n, d, w = res["cells"].get((fam, lang, split), (0, 0, 0))
                row.append(f"{d}/{n} = {pct(d, n)} ({pct(w, n)})")
            print(f"| {fam} | {lang} | " + " | ".join(row) + " |")
    for split, name in splits.items():
        for lang in ("en", "ko", None):
            cells = [v for k, v in res["cells"].items() if k[2] == split and lang in (None, k[1])]
            n, d = sum(v[0] for v in cells), sum(v[1] for v in cells)
            print(f"all {name}{' ' + lang if lang else ''}: {d}/{n} = {pct(d, n)}")
    for (kind, split), (n, d) in sorted(res["origin"].items()):
        print(f"{splits[split]}, {kind} phrasings: {d}/{n} = {pct(d, n)}")
    print("by source:")
    for (split, src, lang), (n, d) in sorted(res["sources"].items()):
        print(f"  {splits[split]}, {src}, {lang}: {d}/{n} = {pct(d, n)}")
    print(
        "leave-source-out folds (v2 B: "
        + ", ".join(V2_FOLD_B)
        + f", {V2_FOLD_B_NEAR}; r3 B: "
        + ", ".join(R3_FOLD_B)
        + "; v3 B: "
        + ", ".join(V3_FOLD_B + V3_FOLD_B_NEAR)
        + "):"
    )
    for (fold, lang, fam), (n, d) in sorted(res["folds"].items()):
        print(f"  fold {fold}, {lang}, {fam}: {d}/{n} = {pct(d, n)}")
    print("families that fired, per attack family (tuning splits):")
    for fam in families:
        print(f"  {fam}: {dict(sorted(res['fired'][fam].items()))}")
    print("| negatives | split | flagged (medium/high) | any signal |")
    print("|---|---|---|---|")
    for split, name in {**TUNING, **BLIND}.items():
        for lang in ("en", "ko"):
            rows = [x for x in near if x["split"] == split and x["lang"] == lang]
            if not rows:
                continue
            groups = [("", rows)]
            if split in ("heldout_v2", "heldout_v3"):
                groups += [(f", fold {f}", [x for x in rows if v2_fold(x) == f]) for f in "ab"]
            for label, part in groups:
                f, a, n = false_positives([x["text"] for x in part])
                print(
                    f"| near-miss {lang}{label} | {name} | {f}/{n} = {pct(f, n)} "
                    f"| {a}/{n} = {pct(a, n)} |"
                )
    kinds = sorted({(x["lang"], x["kind"]) for x in near if x["split"] == "heldout_v2"})
    for lang, kind in kinds:
        texts = [
            x["text"]
            for x in near
            if x["split"] == "heldout_v2" and (x["lang"], x["kind"]) == (lang, kind)
        ]
        f, a, n = false_positives(texts)
        print(f"| near-miss {lang}, {kind} | v2 | {f}/{n} = {pct(f, n)} | {a}/{n} = {pct(a, n)} |")
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
    if show_split in TUNING:
        for x in near:
            if x["split"] == show_split and args.fold in ("all", v2_fold(x) or args.fold):
                false_positives([x["text"]], show=f"{x['id']} ({x['lang']})")
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

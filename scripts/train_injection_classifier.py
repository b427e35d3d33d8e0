"""Train the injection classifier shipped with refgate (issue 14's second layer), deterministically.

Data (never the blind held-out v4 files: any file with ``v4`` in its name is refused; protocol
in docs/benchmarks.md, "Injection classifier"): positives are every phrasing of
benchmarks/data/injection/attacks.jsonl (v1), attacks_tuning_r2.jsonl, attacks_v2.jsonl (held
out in the second round, training material since the third), attacks_tuning_r3.jsonl,
attacks_v3.jsonl (blind in the third round, training material since the fourth), the BIPIA text attacks (classifier_extra.jsonl) and, when
given, the Tensor Trust robustness benchmark attacks (``--tensor-trust FILE...``, not shipped: no
licence); negatives are the near-misses (near_miss.jsonl, near_miss_v2.jsonl,
near_miss_v2_pages.jsonl, near_miss_v3.jsonl), the FOMC statement paragraphs, TAT-QA dev contexts 1-140, the
``train`` negatives of classifier_extra.jsonl (BIPIA emails, Korean movie reviews of nsmc),
Korean paragraphs of the design documents (``--seeds DIR``) and refgate's own docs. The
threshold is set on negatives held out of training: FOMC minutes chunks, the ``threshold`` part
of classifier_extra.jsonl, and the out-of-fold scores of the near-misses (per language).
Cross-validation folds are grouped by source (the collection a phrasing or negative comes
from; v1's templates).

Run:
  python scripts/train_injection_classifier.py --tensor-trust A.jsonl B.jsonl --seeds DIR --cv
  python scripts/train_injection_classifier.py --tensor-trust ... --seeds DIR --write
(``--cv`` prints the cross-validation grid; ``--write`` trains the chosen configuration on all
training data and writes refgate/provenance/injection/classifier.json). Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "injection"
sys.path.insert(0, str(ROOT / "benchmarks"))

from injection_families import (  # noqa: E402
    embedded,
    minutes_chunks,
    source_group,
    statement_paragraphs,
)
from injection_families import load as _load  # noqa: E402

from refgate.provenance import inspect_injection  # noqa: E402
from refgate.provenance.injection.classifier import (  # noqa: E402
    MODEL_FILE,
    Classifier,
    ngrams,
    normalize,
    units,
)

#: The configuration chosen by cross-validation (``--cv``), used by ``--write`` (third round):
#: the highest macro average over training sources of the out-of-fold recall at the threshold
#: (the micro average is dominated by Tensor Trust's 577 attacks) among the configurations
#: whose written model flags none of the FOMC minutes chunks held out for the threshold.
#: n-grams 1-4 had the highest macro average (26.7% vs 22.6%) but needed 0.9995 on the minutes
#: (5 of 1,830 flagged at its threshold); this one needs 0.52 there.
CHOSEN = {"n_min": 2, "n_max": 5, "C": 3.0, "window": 2, "near_weight": 5.0, "pairs": True}
#: The third round's grid (v2, r3 and every near-miss added; folds grouped by source).
GRID = [
    {"n_min": 2, "n_max": 5, "C": 3.0, "window": 2, "near_weight": 5.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 1.0, "window": 2, "near_weight": 5.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 10.0, "window": 2, "near_weight": 5.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 3.0, "window": 2, "near_weight": 2.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 3.0, "window": 2, "near_weight": 10.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 3.0, "window": 1, "near_weight": 5.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 3.0, "window": 3, "near_weight": 5.0, "pairs": True},
    {"n_min": 1, "n_max": 4, "C": 3.0, "window": 2, "near_weight": 5.0, "pairs": True},
    {"n_min": 2, "n_max": 5, "C": 3.0, "window": 2, "near_weight": 5.0, "pairs": False},
    {
        "n_min": 2,
        "n_max": 5,
        "C": 3.0,
        "window": 2,
        "near_weight": 5.0,
        "pairs": True,
        "gate": True,
    },
]
NEAR_MISS_FP, REAL_FP = 0.01, 0.005
#: Weights smaller than this are dropped (a smaller file; scores change by < 1%).
PRUNE = 0.01
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LETTER = re.compile(r"[^\W\d_]")


#: Attack and near-miss files trained on (v3 since the fourth round; the blind v4 files never).
ATTACK_FILES = ("attacks.jsonl", "attacks_tuning_r2.jsonl", "attacks_v2.jsonl")
OPTIONAL_ATTACK_FILES = ("attacks_tuning_r3.jsonl", "attacks_v3.jsonl")
NEAR_FILES = ("near_miss.jsonl", "near_miss_v2.jsonl", "near_miss_v2_pages.jsonl")
OPTIONAL_NEAR_FILES = ("near_miss_v3.jsonl",)
#: The blind held-out split of the fourth round: any file whose name contains this.
BLIND = "v4"


def load(name: str) -> list[dict]:
    """A corpus file; the blind held-out v4 files (any name with ``v4``) are refused before
    they are opened."""
    if BLIND in name.lower():
        raise SystemExit(f"{name} is blind held-out material: never opened or trained on")
    return _load(name)


def attack_rows() -> list[dict]:
    rows = [r for name in ATTACK_FILES for r in load(name)]
    rows += [r for name in OPTIONAL_ATTACK_FILES if (DATA / name).exists() for r in load(name)]
    return rows


def near_rows() -> list[dict]:
    rows = [x for name in NEAR_FILES for x in load(name)]
    return rows + [x for name in OPTIONAL_NEAR_FILES if (DATA / name).exists() for x in load(name)]


def _group(row: dict) -> str:
    """The CV group of a phrasing: v1's template, else the collection it comes from (a
    refgate translation or encoding goes with its source)."""
    if row.get("split") in ("tuning", "heldout"):
        return "v1:" + row.get("group", row["id"])
    return "src:" + source_group(row.get("source", "")).split(" (")[0]


def _near_group(row: dict) -> str:
    if row.get("split") in ("tuning", "heldout"):
        return "nm:" + row["id"]
    src = row.get("source", "")
    return "nmsrc:" + (src.split(" ")[0] if src else row["id"])


@dataclass
class Sample:
    text: str
    label: int
    group: str
    lang: str
    source: str
    family: str = ""


def _windows(text: str, size: int, cap: int = 6) -> list[str]:
    """Runs of 1 and of ``size`` consecutive units of a paragraph (at most ``cap`` of each)."""
    spans = units(text)
    out = []
    for k in sorted({1, size}):
        runs = [text[spans[i][0] : spans[i + k - 1][1]] for i in range(len(spans) - k + 1)]
        step = max(1, math.ceil(len(runs) / cap))
        out += runs[::step]
    return out or [text]


def korean(text: str) -> bool:
    letters = len(_LETTER.findall(text))
    return letters > 0 and len(_HANGUL.findall(text)) >= letters / 2


def seed_paragraphs(folder: Path | None) -> list[tuple[str, str]]:
    if folder is None:
        return []
    out = []
    for f in sorted(folder.glob("*.txt")):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines()):
            line = line.strip(" |#>-*")
            if len(line) >= 40 and korean(line):
                out.append((f"seeds:{f.name}:{i // 20}", line))
    return out


def doc_paragraphs() -> list[tuple[str, str]]:
    """English prose of refgate's own README and docs (agents, tools, prompts; no code blocks;
    docs/benchmarks.md is left out: it quotes attacks)."""
    out = []
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if f.name == "benchmarks.md":
            continue
        text = re.sub(r"```.*?```", "", f.read_text(encoding="utf-8"), flags=re.S)
        for i, para in enumerate(re.split(r"\n\s*\n", text)):
            para = para.strip()
            if len(para) >= 60 and not para.startswith("|"):
                out.append((f"docs:{f.name}:{i // 10}", para))
    return out


def tensor_trust(paths: list[Path]) -> list[tuple[str, str]]:
    seen, out = set(), []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            attack = json.loads(line)["attack"][:3000]
            key = re.sub(r"\W+", " ", attack.lower())[:80]
            if key not in seen and attack.strip():
                seen.add(key)
                out.append((f"tt:{path.stem}:{key[:30]}", attack))
    return out


def positives(tt: list[Path]) -> list[Sample]:
    out = [
        Sample(a["text"], 1, _group(a), a["lang"], a["split"], a["family"]) for a in attack_rows()
    ]
    extra = load("classifier_extra.jsonl")
    out += [Sample(x["text"], 1, x["group"], x["lang"], "bipia") for x in extra if x["label"]]
    out += [Sample(t, 1, g, "en", "tensor_trust") for g, t in tensor_trust(tt)]
    return out


def negatives(window: int, seeds: Path | None) -> list[Sample]:
    # near-misses as the classifier sees them: windows of up to ``window`` units (the v2
    # near-misses are whole paragraphs)
    out = [
        Sample(w, 0, _near_group(x), x["lang"], "near_miss")
        for x in near_rows()
        for w in _windows(x["text"], window)
    ]
    paragraphs: list[tuple[str, str, str, str]] = []
    paragraphs += [
        (f"fomc:{i // 5}", p, "en", "fomc") for i, p in enumerate(statement_paragraphs())
    ]
    tatqa_file = ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl"
    paragraphs += [
        (f"tatqa:{json.loads(x)['context']}", json.loads(x)["text"], "en", "tatqa")
        for x in tatqa_file.read_text(encoding="utf-8").splitlines()
        if x
    ]
    paragraphs += [
        (x["group"], x["text"], x["lang"], x["source"].split()[0])
        for x in load("classifier_extra.jsonl")
        if not x["label"] and x["part"] == "train"
    ]
    paragraphs += [(g, t, "ko", "seeds") for g, t in seed_paragraphs(seeds)]
    paragraphs += [(g, t, "en", "docs") for g, t in doc_paragraphs()]
    for group, text, lang, source in paragraphs:
        out += [Sample(w, 0, group, lang, source) for w in _windows(text, window)]
    return out


def threshold_negatives() -> dict[str, list[str]]:
    extra = [
        x for x in load("classifier_extra.jsonl") if not x["label"] and x["part"] == "threshold"
    ]
    return {
        "FOMC minutes chunks": minutes_chunks(),
        "BIPIA email contexts (test)": [x["text"] for x in extra if x["lang"] == "en"],
        "nsmc reviews (held out)": [x["text"] for x in extra if x["lang"] == "ko"],
    }


def fit(samples: list[Sample], cfg: dict) -> Classifier:
    lo, hi = cfg["n_min"], cfg["n_max"]
    pairs = cfg.get("pairs", True)
    vec = CountVectorizer(
        analyzer=lambda d: ngrams(normalize(d), lo, hi, pairs), min_df=2, dtype=np.float64
    )
    x = vec.fit_transform([s.text for s in samples])
    counts = np.array([max(1, len(normalize(s.text).split())) for s in samples], dtype=float)
    x = sparse.diags(1.0 / np.sqrt(counts)) @ x
    y = np.array([s.label for s in samples])
    model = LogisticRegression(
        C=cfg["C"], class_weight="balanced", solver="liblinear", random_state=0, max_iter=1000
    )
    weight = np.array(
        [cfg.get("near_weight", 1.0) if s.source == "near_miss" else 1.0 for s in samples]
    )
    model.fit(x, y, sample_weight=weight)
    coef = model.coef_[0]
    names = vec.get_feature_names_out()
    weights = {
        str(n): round(float(w), 4) for n, w in zip(names, coef, strict=True) if abs(w) >= PRUNE
    }
    return Classifier(
        weights,
        round(float(model.intercept_[0]), 5),
        n_min=lo,
        n_max=hi,
        window=cfg["window"],
        pairs=pairs,
    )


def lowest_threshold(scores: list[float], rate: float) -> float:
    """The lowest threshold at which at most ``rate`` of ``scores`` are flagged (score >= t)."""
    if not scores:
        return 0.0
    ranked = sorted(scores, reverse=True)
    allowed = int(rate * len(ranked))
    return min(1.0, ranked[allowed] + 1e-6) if allowed < len(ranked) else 0.0


def gated(clf: Classifier, text: str, cfg: dict) -> float:
    """The classifier's score of ``text``; with ``gate``, 0 where the rules call the best
    window a mention or a negated instruction (a low signal overlapping it)."""
    v = clf.best(text)
    if cfg.get("gate") and any(
        s.confidence == "low" and s.span[0] < v.span[1] and v.span[0] < s.span[1]
        for s in inspect_injection(text).signals
    ):
        return 0.0
    return v.score


def cross_validate(cfg: dict, tt: list[Path], seeds: Path | None, hosts: list[str]) -> dict:
    """Out-of-fold scores: embedded attacks, near-misses and negative paragraphs."""
    pos, neg = positives(tt), negatives(cfg["window"], seeds)
    samples = pos + neg
    folds = GroupKFold(n_splits=5).split(samples, groups=[s.group for s in samples])
    near_by_group: dict[str, list[dict]] = defaultdict(list)
    for x in near_rows():
        near_by_group[_near_group(x)].append(x)
    oof_attack: list[tuple[Sample, float]] = []
    oof_near: dict[str, list[float]] = defaultdict(list)
    oof_real: list[float] = []
    oof_near_items: list[tuple[float, str, str]] = []
    for train_idx, test_idx in folds:
        clf = fit([samples[i] for i in train_idx], cfg)
        groups = {samples[i].group for i in test_idx}
        for i in test_idx:
            s = samples[i]
            if s.label:
                host_texts = embedded({"id": s.group + s.text[:40], "text": s.text}, hosts)
                oof_attack += [(s, gated(clf, t, cfg)) for _, t in host_texts]
        for g in groups & near_by_group.keys():
            for x in near_by_group[g]:
                score = gated(clf, x["text"], cfg)
                oof_near[x["lang"]].append(score)
                oof_near_items.append((score, x["id"], x["text"]))
        oof_real += [
            gated(clf, samples[i].text, cfg)
            for i in test_idx
            if samples[i].source in ("fomc", "tatqa")
        ]
    return {"attacks": oof_attack, "near": oof_near, "real": oof_real, "near_items": oof_near_items}


def report_cv(cfg: dict, res: dict, show: int = 0) -> float:
    t = max(
        [lowest_threshold(v, NEAR_MISS_FP) for v in res["near"].values()]
        + [lowest_threshold(res["real"], REAL_FP)]
    )
    by_source: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s, score in res["attacks"]:
        key = {"tuning": "v1+r2", "heldout": "v1+r2", "tuning_r2": "v1+r2"}.get(s.source, s.source)
        key = f"{key} {s.lang}" if key in ("heldout_v2", "tuning_r3") else key
        by_source[key][0] += 1
        by_source[key][1] += score >= t
    parts = ", ".join(f"{k} {d}/{n}" for k, (n, d) in sorted(by_source.items()))
    total = sum(d for _, d in by_source.values()) / max(1, sum(n for n, _ in by_source.values()))
    macro = sum(d / n for n, d in by_source.values()) / max(1, len(by_source))
    for q in (0.5, 0.8, 0.9, 0.95, 0.98):
        fp = {k: sum(x >= q for x in v) / len(v) for k, v in res["near"].items()}
        fp["real"] = sum(x >= q for x in res["real"]) / max(1, len(res["real"]))
        rec = sum(x >= q for _, x in res["attacks"]) / len(res["attacks"])
        v1 = [x for s, x in res["attacks"] if s.source in ("tuning", "heldout", "tuning_r2")]
        print(
            f"  at {q}: recall {rec:.1%} (v1 {sum(x >= q for x in v1) / len(v1):.1%}), FP "
            + ", ".join(f"{k} {v:.1%}" for k, v in fp.items())
        )
    if show:
        for score, nid, text in sorted(res["near_items"], reverse=True)[:show]:
            print(f"  near-miss {nid} {score:.4f}: {text[:140]!r}")
    print(
        f"{cfg}: threshold {t:.3f}; OOF recall (4 embeddings each) {total:.1%}, macro over "
        f"sources {macro:.1%} ({parts})",
        flush=True,
    )
    return macro


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensor-trust", type=Path, nargs="*", default=[])
    ap.add_argument("--seeds", type=Path, default=None)
    ap.add_argument("--cv", action="store_true", help="print the cross-validation grid")
    ap.add_argument("--config", type=json.loads, default=None, help="cross-validate one config")
    ap.add_argument("--show-near", type=int, default=0, help="list the top v1 near-misses")
    ap.add_argument("--write", action="store_true", help="train CHOSEN on all data and write it")
    ap.add_argument("--out", type=Path, default=MODEL_FILE, help="where --write writes")
    args = ap.parse_args()
    hosts = statement_paragraphs()
    if args.cv or args.config:
        for cfg in [args.config] if args.config else GRID:
            report_cv(
                cfg, cross_validate(cfg, args.tensor_trust, args.seeds, hosts), args.show_near
            )
    if args.write:
        cfg = CHOSEN
        res = cross_validate(cfg, args.tensor_trust, args.seeds, hosts)
        report_cv(cfg, res)
        pos, neg = positives(args.tensor_trust), negatives(cfg["window"], args.seeds)
        clf = fit(pos + neg, cfg)
        levels = {
            f"near-miss {k} (out of fold)": lowest_threshold(v, NEAR_MISS_FP)
            for k, v in res["near"].items()
        }
        for name, texts in threshold_negatives().items():
            levels[name] = lowest_threshold([clf.best(t).score for t in texts], REAL_FP)
        for name, level in levels.items():
            print(f"threshold needed for {name}: {level:.4f}")
        clf.threshold = round(max(levels.values()), 4)
        data = clf.as_dict()
        data["training"] = {
            "config": cfg,
            "positives": dict(Counter(s.source for s in pos)),
            "negatives": dict(Counter(s.source for s in neg)),
            "threshold_levels": {k: round(v, 4) for k, v in levels.items()},
        }
        args.out.write_text(
            json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(
            f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB, {len(clf.weights)} weights), threshold {clf.threshold}"
        )


if __name__ == "__main__":
    main()

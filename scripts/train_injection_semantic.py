"""Train and evaluate the semantic injection layer (issue 14, fourth round), deterministically.

Frozen all-MiniLM-L6-v2 embeddings of text windows (refgate/provenance/injection/semantic.py)
with a small head on top: logistic regression or a one-hidden-layer MLP. Data: the n-gram
trainer's (scripts/train_injection_classifier.py: every tuning attack file v1, r2, v2, r3 and v3,
BIPIA, Tensor Trust when given; every near-miss file; FOMC statements, TAT-QA dev 1-140, nsmc,
BIPIA emails, design documents, refgate's docs). **Never v4**: ``load`` refuses any file with
``v4`` in its name, and no v4 name appears here. Protocol in docs/benchmarks.md, "Injection
classifier", fourth round.

Cross-validation: 5 folds grouped by source (every attack of a collection, its refgate
translations and encodings with it, in one fold; negatives by document or source), the same
folds for every layer. Out of fold, each attack is embedded the benchmark's 4 ways in FOMC
paragraphs and scored by the layer trained without its source; the threshold is the lowest at
which the out-of-fold near-misses are flagged <= 1% per language and the out-of-fold real
paragraphs <= 0.5% (``--write`` also checks the held-out threshold negatives with the final
head). Compared out of fold per family x language: rules alone (in-sample: the rules were tuned
on these splits), rules OR n-gram, rules OR semantic, rules OR both.

Run (Tensor Trust files from HumanCompatibleAI/tensor-trust-data, not shipped):
  python scripts/train_injection_semantic.py --tensor-trust H.jsonl E.jsonl --seeds DIR --cv
  python scripts/train_injection_semantic.py --tensor-trust ... --seeds DIR --compare --write
Embeddings are cached in ``--cache`` (default /tmp/refgate-semantic-cache.npz).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_injection_classifier as ng  # noqa: E402
from injection_families import embedded, statement_paragraphs  # noqa: E402

from refgate.provenance import inspect_injection  # noqa: E402
from refgate.provenance.injection import semantic as sem  # noqa: E402

FOLDS = 5
#: Grid (declared before the first run): head, its regularisation, window size, whether the
#: attack phrasings' own windows are positives too, near-miss weight.
GRID = [
    {"head": "lr", "C": 1.0, "window": 2, "pos_windows": False, "near_weight": 3.0},
    {"head": "lr", "C": 0.3, "window": 2, "pos_windows": False, "near_weight": 3.0},
    {"head": "lr", "C": 3.0, "window": 2, "pos_windows": False, "near_weight": 3.0},
    {"head": "lr", "C": 1.0, "window": 1, "pos_windows": False, "near_weight": 3.0},
    {"head": "lr", "C": 1.0, "window": 2, "pos_windows": True, "near_weight": 3.0},
    {"head": "lr", "C": 1.0, "window": 2, "pos_windows": False, "near_weight": 1.0},
    {"head": "mlp", "alpha": 1e-3, "window": 2, "pos_windows": False, "near_weight": 3.0},
    {"head": "mlp", "alpha": 1e-2, "window": 2, "pos_windows": True, "near_weight": 3.0},
    # added after the first grid run (near-miss weight 3 beat 1): heavier near-miss weights
    {"head": "lr", "C": 1.0, "window": 2, "pos_windows": False, "near_weight": 6.0},
    {"head": "lr", "C": 1.0, "window": 2, "pos_windows": False, "near_weight": 10.0},
]
#: The highest macro average over sources of out-of-fold recall at the threshold (``--cv``).
CHOSEN = {"head": "lr", "C": 1.0, "window": 2, "pos_windows": False, "near_weight": 6.0}
KNOWN_SOURCES = (
    "spikee", "jangwonii", "DoomArena", "greshake", "garak", "Invariant", "AgentDojo",
    "InjecAgent", "PromptInject", "Tensor Trust", "OWASP", "pallms", "promptguard", "HackTricks",
    "minilab", "prompt-injection-lab", "RaccoonBench", "navirocker", "promptmap", "WASP",
    "hanhojinx", "promptfoo_ko", "llm-guard", "acuvity", "hijack-agentic-ai",
)  # fmt: skip


def source_key(row: dict, by_group: dict[str, str]) -> str:
    """The collection an attack comes from: a known name in its source; else its group-mates'
    (a refgate translation or encoding of a published item); else its source's start."""
    text = row.get("source", "")
    for name in KNOWN_SOURCES:
        if name.lower() in text.lower():
            return name
    return by_group.get(row.get("group", ""), text[:30] or row["id"])


@dataclass
class Attack:
    text: str
    source: str  # the leave-source-out key
    split: str
    family: str
    lang: str
    rid: str


def attacks(tt: list[Path]) -> list[Attack]:
    rows = ng.attack_rows()
    by_group: dict[str, str] = {}
    for r in rows:
        key = source_key(r, {})
        if any(key == k for k in KNOWN_SOURCES):
            by_group.setdefault(r.get("group", ""), key)
    out = [
        Attack(r["text"], source_key(r, by_group), r["split"], r["family"], r["lang"], r["id"])
        for r in rows
    ]
    extra = [x for x in ng.load("classifier_extra.jsonl") if x["label"]]
    out += [Attack(x["text"], "BIPIA", "bipia", "", x["lang"], x["group"]) for x in extra]
    out += [Attack(t, "Tensor Trust", "tensor_trust", "", "en", g) for g, t in ng.tensor_trust(tt)]
    return out


@dataclass
class Negative:
    text: str
    group: str
    lang: str
    source: str  # near_miss, fomc, tatqa, ...


def negatives(seeds: Path | None) -> list[Negative]:
    out = [Negative(x["text"], ng._near_group(x), x["lang"], "near_miss") for x in ng.near_rows()]
    out += [
        Negative(p, f"fomc:{i // 5}", "en", "fomc") for i, p in enumerate(statement_paragraphs())
    ]
    tatqa = ng.ROOT / "tests/data/provenance/tatqa_dev_paragraphs.jsonl"
    for line in tatqa.read_text(encoding="utf-8").splitlines():
        if line:
            x = json.loads(line)
            out.append(Negative(x["text"], f"tatqa:{x['context']}", "en", "tatqa"))
    out += [
        Negative(x["text"], x["group"], x["lang"], x["source"].split()[0])
        for x in ng.load("classifier_extra.jsonl")
        if not x["label"] and x["part"] == "train"
    ]
    out += [Negative(t, g, "ko", "seeds") for g, t in ng.seed_paragraphs(seeds)]
    out += [Negative(t, g, "en", "docs") for g, t in ng.doc_paragraphs()]
    return out


def _hash(text: str) -> int:
    return int(hashlib.sha256(("refgate-sem:" + text).encode()).hexdigest()[:12], 16)


def assign_folds(atk: list[Attack], neg: list[Negative]) -> tuple[list[int], list[int]]:
    """Fold of each attack (GroupKFold over sources, balanced by size) and negative (hash of
    its group)."""
    keys = sorted({a.source for a in atk})
    fold_of: dict[str, int] = {}
    groups = [a.source for a in atk]
    for k, (_, test) in enumerate(GroupKFold(n_splits=FOLDS).split(atk, groups=groups)):
        for i in test:
            fold_of[atk[i].source] = k
    assert set(fold_of) == set(keys)
    return [fold_of[a.source] for a in atk], [_hash(n.group) % FOLDS for n in neg]


class Cache:
    """MiniLM embeddings by text, kept on disk between runs (vectors in ``path``, texts in
    ``path`` + ``.json``, in the same order)."""

    def __init__(self, path: Path) -> None:
        self.path, self.keys_path = path, path.with_name(path.name + ".json")
        self.vecs: dict[str, np.ndarray] = {}
        if path.exists() and self.keys_path.exists():
            keys = json.loads(self.keys_path.read_text(encoding="utf-8"))
            self.vecs = dict(zip(keys, np.load(path), strict=True))
        self.new = 0

    def get(self, texts: list[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self.vecs}, key=len)
        for i in range(0, len(missing), 512):
            part = missing[i : i + 512]
            self.vecs.update(zip(part, sem.minilm_encode(part), strict=True))
            self.new += len(part)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self.vecs[t] for t in texts])

    def save(self) -> None:
        if self.new:
            keys = list(self.vecs)
            with self.path.open("wb") as f:
                np.save(f, np.stack([self.vecs[k] for k in keys]))
            self.keys_path.write_text(json.dumps(keys), encoding="utf-8")
            self.new = 0


def _some(spans: list, n: int, salt: str) -> list:
    if len(spans) <= n:
        return spans
    step = len(spans) / n
    off = _hash(salt) % max(1, int(step))
    return [spans[min(len(spans) - 1, int(off + i * step))] for i in range(n)]


def training_texts(
    atk: list[Attack], neg: list[Negative], cfg: dict
) -> tuple[list[str], list[int], list[float], list[int]]:
    """(texts, labels, weights, owner index) of the head's training samples: each attack whole
    (and its prefiltered windows with ``pos_windows``); each negative's prefiltered windows and
    up to two of its other windows. Owners: attack i is i, negative j is len(atk) + j."""
    texts, labels, weights, owners = [], [], [], []
    w = cfg["window"]
    for i, a in enumerate(atk):
        spans = [(0, len(a.text))]
        if cfg.get("pos_windows"):
            spans += _some(sem.windows(a.text, w), 6, a.rid)
        for s, e in dict.fromkeys(spans):
            texts.append(a.text[s:e])
            labels.append(1)
            weights.append(1.0)
            owners.append(i)
    for j, n in enumerate(neg):
        spans = _some(sem.windows(n.text, w), 8, n.group)
        spans += _some(sem.windows(n.text, w, prefilter=False), 2, n.text[:50])
        for s, e in dict.fromkeys(spans):
            texts.append(n.text[s:e])
            labels.append(0)
            weights.append(cfg["near_weight"] if n.source == "near_miss" else 1.0)
            owners.append(len(atk) + j)
    return texts, labels, weights, owners


def fit_head(x: np.ndarray, y: np.ndarray, weight: np.ndarray, cfg: dict) -> sem.Head:
    if cfg["head"] == "lr":
        m = LogisticRegression(C=cfg["C"], class_weight="balanced", max_iter=2000)
        m.fit(x, y, sample_weight=weight)
        return sem.Head(((m.coef_.T.astype(np.float32), m.intercept_.astype(np.float32)),))
    # MLP: no sample weights in scikit-learn's MLP, so near-misses are repeated instead, and
    # the classes balanced by repeating positives
    rep = np.maximum(1, np.round(weight).astype(int))
    pos_rep = max(1, int(round((y == 0).sum() / max(1, (y == 1).sum()))))
    rep = np.where(y == 1, pos_rep, rep)
    idx = np.repeat(np.arange(len(y)), rep)
    m = MLPClassifier(
        hidden_layer_sizes=(64,), alpha=cfg["alpha"], max_iter=60, random_state=0,
        early_stopping=False, batch_size=256,
    )  # fmt: skip
    m.fit(x[idx], y[idx])
    return sem.Head(
        tuple(
            (w.astype(np.float32), b.astype(np.float32))
            for w, b in zip(m.coefs_, m.intercepts_, strict=True)
        )
    )


def layer_score(head: sem.Head, text: str, window: int, cache: Cache, prefilter: bool) -> float:
    spans = sem.windows(text, window, prefilter=prefilter)
    if not spans:
        return 0.0
    return float(head.scores(cache.get([text[a:b] for a, b in spans])).max())


def lowest(scores: list[float], rate: float) -> float:
    return ng.lowest_threshold(scores, rate)


def oof_threshold(near: dict[str, list[float]], real: list[float]) -> float:
    levels = [lowest(v, ng.NEAR_MISS_FP) for v in near.values()] + [lowest(real, ng.REAL_FP)]
    return max(levels)


@dataclass
class OOF:
    """Out-of-fold scores of one layer: per embedded attack text, near-miss and real paragraph."""

    attack: list[float]  # aligned with Setup.embedded
    near: list[float]  # aligned with Setup.near
    real: list[float]  # aligned with Setup.real

    def threshold(self, setup: Setup) -> float:
        by_lang: dict[str, list[float]] = defaultdict(list)
        for (lang, _), s in zip(setup.near, self.near, strict=True):
            by_lang[lang].append(s)
        return oof_threshold(by_lang, self.real)


@dataclass
class Setup:
    atk: list[Attack]
    neg: list[Negative]
    afold: list[int]
    nfold: list[int]
    embedded: list[tuple[int, str]]  # (attack index, host text with the attack in it)
    near: list[tuple[str, str]]  # (lang, text) of near-miss rows, with nfold of their index
    near_fold: list[int]
    real: list[str]
    real_fold: list[int]


def setup(tt: list[Path], seeds: Path | None) -> Setup:
    atk, neg = attacks(tt), negatives(seeds)
    afold, nfold = assign_folds(atk, neg)
    hosts = statement_paragraphs()
    emb = [
        (i, t) for i, a in enumerate(atk) for _, t in embedded({"id": a.rid, "text": a.text}, hosts)
    ]
    near_idx = [j for j, n in enumerate(neg) if n.source == "near_miss"]
    real_idx = [j for j, n in enumerate(neg) if n.source in ("fomc", "tatqa")]
    return Setup(
        atk, neg, afold, nfold, emb,
        [(neg[j].lang, neg[j].text) for j in near_idx], [nfold[j] for j in near_idx],
        [neg[j].text for j in real_idx], [nfold[j] for j in real_idx],
    )  # fmt: skip


def prefetch(st: Setup, window: int, cache: Cache, prefilter: bool) -> None:
    """Embed every window the out-of-fold scoring will ask for, in one batched pass."""
    texts = [t for _, t in st.embedded] + [t for _, t in st.near] + st.real
    cache.get([t[a:b] for t in texts for a, b in sem.windows(t, window, prefilter=prefilter)])
    cache.save()


def cv_semantic(st: Setup, cfg: dict, cache: Cache, prefilter: bool = True) -> OOF:
    texts, labels, weights, owners = training_texts(st.atk, st.neg, cfg)
    x = cache.get(texts)
    cache.save()
    y, wt = np.array(labels), np.array(weights)
    fold = np.array([st.afold[o] if o < len(st.atk) else st.nfold[o - len(st.atk)] for o in owners])
    oof = OOF([0.0] * len(st.embedded), [0.0] * len(st.near), [0.0] * len(st.real))
    w = cfg["window"]
    prefetch(st, w, cache, prefilter)
    for k in range(FOLDS):
        head = fit_head(x[fold != k], y[fold != k], wt[fold != k], cfg)
        for n, (i, text) in enumerate(st.embedded):
            if st.afold[i] == k:
                oof.attack[n] = layer_score(head, text, w, cache, prefilter)
        for n, (_, text) in enumerate(st.near):
            if st.near_fold[n] == k:
                oof.near[n] = layer_score(head, text, w, cache, prefilter)
        for n, text in enumerate(st.real):
            if st.real_fold[n] == k:
                oof.real[n] = layer_score(head, text, w, cache, prefilter)
        cache.save()
    return oof


def cv_ngram(st: Setup, seeds: Path | None) -> OOF:
    """The n-gram classifier (its trainer's chosen configuration) on the same folds."""
    cfg = ng.CHOSEN
    samples: list[ng.Sample] = []
    fold: list[int] = []
    for i, a in enumerate(st.atk):
        samples.append(ng.Sample(a.text, 1, a.source, a.lang, a.split, a.family))
        fold.append(st.afold[i])
    for j, n in enumerate(st.neg):
        for t in ng._windows(n.text, cfg["window"]):
            samples.append(ng.Sample(t, 0, n.group, n.lang, n.source))
            fold.append(st.nfold[j])
    oof = OOF([0.0] * len(st.embedded), [0.0] * len(st.near), [0.0] * len(st.real))
    f = np.array(fold)
    for k in range(FOLDS):
        clf = ng.fit([s for s, g in zip(samples, f, strict=True) if g != k], cfg)
        for n, (i, text) in enumerate(st.embedded):
            if st.afold[i] == k:
                oof.attack[n] = clf.best(text, locate=False).score
        for n, (_, text) in enumerate(st.near):
            if st.near_fold[n] == k:
                oof.near[n] = clf.best(text, locate=False).score
        for n, text in enumerate(st.real):
            if st.real_fold[n] == k:
                oof.real[n] = clf.best(text, locate=False).score
        print(f"  n-gram fold {k} done", flush=True)
    return oof


def rules_flags(st: Setup) -> tuple[list[bool], list[bool], list[bool]]:
    def hit(t: str) -> bool:
        return any(
            s.confidence in ("high", "medium")
            for s in inspect_injection(t, classifier=False).signals
        )

    return (
        [hit(t) for _, t in st.embedded],
        [hit(t) for _, t in st.near],
        [hit(t) for t in st.real],
    )


def summary(st: Setup, oof: OOF, label: str) -> float:
    t = oof.threshold(st)
    by_src: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (i, _), s in zip(st.embedded, oof.attack, strict=True):
        cell = by_src[st.atk[i].source]
        cell[0] += 1
        cell[1] += s >= t
    macro = sum(d / n for n, d in by_src.values()) / len(by_src)
    micro = sum(d for _, d in by_src.values()) / sum(n for n, _ in by_src.values())
    print(
        f"{label}: threshold {t:.4f}; OOF recall micro {micro:.1%}, macro over {len(by_src)} sources {macro:.1%}"
    )
    print("   " + ", ".join(f"{k} {d}/{n}" for k, (n, d) in sorted(by_src.items())), flush=True)
    return macro


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def compare(st: Setup, layers: dict[str, OOF], th: dict[str, float] | None = None) -> None:
    """Markdown tables: OOF recall per family x language and false positives, for rules alone,
    rules OR each layer, rules OR both; at each layer's out-of-fold threshold, or at ``th``."""
    r_att, r_near, r_real = rules_flags(st)
    th = th or {k: v.threshold(st) for k, v in layers.items()}
    fl = {k: [s >= th[k] for s in v.attack] for k, v in layers.items()}
    combos = {
        "rules": lambda n: r_att[n],
        "rules OR n-gram": lambda n: r_att[n] or fl["ngram"][n],
        "rules OR semantic": lambda n: r_att[n] or fl["semantic"][n],
        "rules OR both": lambda n: r_att[n] or fl["ngram"][n] or fl["semantic"][n],
        "semantic alone": lambda n: fl["semantic"][n],
    }
    cells: dict[str, list[int]] = defaultdict(lambda: [0] * (1 + len(combos)))
    for n, (i, _) in enumerate(st.embedded):
        a = st.atk[i]
        keys = [f"{a.family} {a.lang}", f"all {a.lang} (attack files)"] if a.family else [a.source]
        for key in [*keys, "all"]:
            c = cells[key]
            c[0] += 1
            for m, f in enumerate(combos.values()):
                c[m + 1] += bool(f(n))
    print(f"thresholds: {', '.join(f'{k} {v:.4f}' for k, v in th.items())}")
    print("| family | lang | " + " | ".join(combos) + " |")
    print("|---|---|" + "---|" * len(combos))
    order = sorted(cells, key=lambda k: (k == "all", k.startswith("all"), " " not in k, k))
    for key in order:
        c = cells[key]
        fam, _, lang = key.partition(" ")
        row = " | ".join(f"{c[m + 1]}/{c[0]} = {pct(c[m + 1], c[0])}" for m in range(len(combos)))
        print(f"| {fam} | {lang} | {row} |")
    print("| negatives (flagged, out of fold) | " + " | ".join(combos) + " |")
    print("|---|" + "---|" * len(combos))
    ln = {k: [s >= th[k] for s in v.near] for k, v in layers.items()}
    lr = {k: [s >= th[k] for s in v.real] for k, v in layers.items()}
    for lang in ("en", "ko"):
        idx = [n for n, (lg, _) in enumerate(st.near) if lg == lang]
        vals = []
        for name in combos:
            f = sum(_neg(name, n, r_near, ln) for n in idx)
            vals.append(f"{f}/{len(idx)} = {pct(f, len(idx))}")
        print(f"| near-misses {lang} | " + " | ".join(vals) + " |")
    vals = []
    for name in combos:
        f = sum(_neg(name, n, r_real, lr) for n in range(len(st.real)))
        vals.append(f"{f}/{len(st.real)} = {pct(f, len(st.real))}")
    print("| FOMC statements + TAT-QA 1-140 | " + " | ".join(vals) + " |", flush=True)


def _neg(name: str, n: int, rules: list[bool], layer: dict[str, list[bool]]) -> bool:
    if name == "semantic alone":
        return layer["semantic"][n]
    hit = rules[n]
    if "n-gram" in name or "both" in name:
        hit = hit or layer["ngram"][n]
    if "semantic" in name or "both" in name:
        hit = hit or layer["semantic"][n]
    return hit


def write(st: Setup, cfg: dict, oof: OOF, cache: Cache, out: Path) -> None:
    texts, labels, weights, _ = training_texts(st.atk, st.neg, cfg)
    head = fit_head(cache.get(texts), np.array(labels), np.array(weights), cfg)
    levels = {"out-of-fold near-misses and real paragraphs": oof.threshold(st)}
    for name, negs in ng.threshold_negatives().items():
        levels[name] = lowest(
            [layer_score(head, t, cfg["window"], cache, True) for t in negs], ng.REAL_FP
        )
    cache.save()
    for name, level in levels.items():
        print(f"threshold needed for {name}: {level:.4f}")
    layer = sem.SemanticLayer(head, threshold=round(max(levels.values()), 4), window=cfg["window"])
    data = layer.as_dict()
    data["training"] = {
        "config": cfg,
        "positives": dict(Counter(a.split for a in st.atk)),
        "negatives": dict(Counter(n.source for n in st.neg)),
        "samples": dict(Counter(labels)),
        "threshold_levels": {k: round(v, 4) for k, v in levels.items()},
    }
    out.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB), threshold {layer.threshold}")


def _cached(cache: Path, name: str, make) -> OOF:
    """Out-of-fold scores of ``name`` kept next to the embedding cache (keyed by the data:
    the n-gram CV takes minutes)."""
    key = hashlib.sha256(repr(ng.CHOSEN).encode()).hexdigest()[:8]
    path = cache.with_name(f"{cache.name}.oof-{name}-{key}.json")
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        return OOF(data["attack"], data["near"], data["real"])
    oof = make()
    path.write_text(json.dumps(oof.__dict__), encoding="utf-8")
    return oof


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensor-trust", type=Path, nargs="*", default=[])
    ap.add_argument("--seeds", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/refgate-semantic-cache.npz"))
    ap.add_argument("--cv", action="store_true", help="cross-validate the grid")
    ap.add_argument("--config", type=json.loads, default=None, help="cross-validate one config")
    ap.add_argument("--compare", action="store_true", help="rules / n-gram / semantic tables")
    ap.add_argument("--no-prefilter", action="store_true", help="also: CHOSEN without the gate")
    ap.add_argument("--write", action="store_true", help="train CHOSEN on all data, write it")
    ap.add_argument("--out", type=Path, default=sem.MODEL_FILE)
    args = ap.parse_args()
    t0 = time.time()
    st = setup(args.tensor_trust, args.seeds)
    cache = Cache(args.cache)
    print(
        f"attacks {len(st.atk)} ({dict(Counter(a.split for a in st.atk))}), sources "
        f"{len({a.source for a in st.atk})}; negatives {len(st.neg)}; embedded {len(st.embedded)}",
        flush=True,
    )
    if args.cv or args.config:
        for cfg in [args.config] if args.config else GRID:
            summary(st, cv_semantic(st, cfg, cache), f"{cfg} [{time.time() - t0:.0f}s]")
    oof = None
    if args.compare or args.write or args.no_prefilter:
        oof = cv_semantic(st, CHOSEN, cache)
        summary(st, oof, f"chosen {CHOSEN}")
    if args.no_prefilter:
        summary(st, cv_semantic(st, CHOSEN, cache, prefilter=False), "chosen, no prefilter")
    if args.compare:
        ngram = _cached(args.cache, "ngram", lambda: cv_ngram(st, args.seeds))
        summary(st, ngram, "n-gram (its chosen configuration)")
        print("\n## At each layer's out-of-fold threshold")
        compare(st, {"ngram": ngram, "semantic": oof})
        shipped = {
            "ngram": json.loads(ng.MODEL_FILE.read_text(encoding="utf-8"))["threshold"],
            "semantic": json.loads(sem.MODEL_FILE.read_text(encoding="utf-8"))["threshold"],
        }
        print(f"\n## At the shipped thresholds {shipped}")
        compare(st, {"ngram": ngram, "semantic": oof}, shipped)
    if args.write and oof is not None:
        write(st, CHOSEN, oof, cache, args.out)
    print(f"[{time.time() - t0:.0f}s]")


if __name__ == "__main__":
    main()

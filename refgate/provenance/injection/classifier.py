"""A small linear classifier over character n-grams: the second layer after the rules (issue 14).

Features (the same for training and scoring, by construction: the training script calls
``ngrams``): the text is NFKC-normalised and lower-cased, split on whitespace, and every word,
padded with one space on each side, gives its character n-grams (``n_min``..``n_max``; a word
shorter than ``n`` gives itself once), as scikit-learn's ``char_wb`` analyzer does. A window's
vector is the n-gram counts divided by the square root of its word count, so its score is a sum
of per-word scores (memoised) over ``sqrt(words)``, plus a bias. A text is cut into units
(lines, and sentences within lines); every run of up to ``window`` consecutive units is scored
and the best window is reported with its span and its probability.

The weights are trained by ``scripts/train_injection_classifier.py`` and shipped as
``classifier.json`` beside this module (no download, no scikit-learn at run time).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, compress, islice, repeat
from operator import add, sub, truediv
from pathlib import Path
from typing import Any

MODEL_FILE = Path(__file__).with_name("classifier.json")
_BREAK = re.compile(r"\s*\n\s*|(?<=[.!?])\s+")
_MEMO_LIMIT = 200_000
_SENTINEL = "\x00"  # stands for a line break among the words (a text with NUL: slow path)
_WORD = re.compile(r"\S+")


def normalize(text: str) -> str:
    """The text as the features see it: NFKC, lower case (ASCII is already NFKC)."""
    return (text if text.isascii() else unicodedata.normalize("NFKC", text)).lower()


def ngrams(text: str, n_min: int, n_max: int, pairs: bool = True) -> list[str]:
    """The features of ``text`` (already normalised): character n-grams of every
    whitespace-separated word, and (``pairs``) each pair of adjacent words, punctuation stripped
    (``not ignore``, ``never include``: what n-grams inside one word cannot see)."""
    words = text.split()
    out: list[str] = []
    for word in words:
        out += word_ngrams(word, n_min, n_max)
    if pairs:
        bare = [bare_word(w) for w in words]
        out += [PAIR + a + " " + b for a, b in zip(bare, bare[1:], strict=False)]
    return out


PAIR = "\x01"
_PUNCT = "\"'“”‘’()[]{}<>,.;:!?*`"


def bare_word(word: str) -> str:
    return word.strip(_PUNCT)


def word_ngrams(word: str, n_min: int, n_max: int) -> list[str]:
    padded = f" {word} "
    size = len(padded)
    return [padded[i : i + n] for n in range(n_min, n_max + 1) for i in range(max(1, size - n + 1))]


def units(text: str) -> list[tuple[int, int]]:
    """Character spans of the text's lines and sentences (empty ones dropped)."""
    spans, start = [], 0
    for m in _BREAK.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


@dataclass(frozen=True)
class Verdict:
    """The best-scoring window of a text: its probability and character span."""

    score: float
    span: tuple[int, int]


class Classifier:
    """Linear scores of text windows; ``weights`` maps an n-gram to its weight."""

    def __init__(
        self,
        weights: dict[str, float],
        bias: float,
        *,
        n_min: int,
        n_max: int,
        window: int,
        threshold: float = 0.5,
        pairs: bool = True,
    ) -> None:
        self.weights = weights
        self.bias = bias
        self.n_min, self.n_max, self.window = n_min, n_max, window
        self.threshold = threshold
        self.pairs = pairs
        self._memo: dict[str, float] = {}  # raw word -> score of its normalised form
        self._unit_memo: dict[str, float] = {}  # normalised word -> score (reference path)
        # word pairs as integers: a pair's weight is _pair_w[id(first) * base + id(second)],
        # ids of the bare words that occur in a weighted pair (0: none, matches no key)
        ids: dict[str, int] = {}
        split = [k[1:].split(" ", 1) for k in weights if k.startswith(PAIR)]
        for a, b in split:
            ids.setdefault(a, len(ids) + 1)
            ids.setdefault(b, len(ids) + 1)
        self._pair_ids, self._base = ids, len(ids) + 1
        self._pair_w = {ids[a] * self._base + ids[b]: weights[f"{PAIR}{a} {b}"] for a, b in split}
        self._left: dict[str, int] = {}  # raw word -> id of its bare form * base
        self._right: dict[str, int] = {}  # raw word -> id of its bare form
        self._ends: dict[str, bool] = {}  # a unit ends after this word

    def word_score(self, word: str) -> float:
        w = self.weights
        return sum(w.get(g, 0.0) for g in word_ngrams(word, self.n_min, self.n_max))

    def _unit(self, text: str) -> tuple[float, int]:
        """Sum of the features' weights of one (normalised) unit, and its word count."""
        words = text.split()
        memo = self._unit_memo
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        for x in set(words).difference(memo):
            memo[x] = self.word_score(x)
        total = sum(map(memo.__getitem__, words))
        if self.pairs and len(words) > 1:
            bare = [bare_word(x) for x in words]
            keys = map(add, map(f"{PAIR}{{}} ".format, bare), islice(bare, 1, None))
            total += sum(map(self.weights.get, keys, repeat(0.0)))
        return total, len(words)

    def logit(self, text: str) -> float:
        """The score of ``text`` as one window (the training view of a sample)."""
        total, count = self._unit(normalize(text))
        return self.bias + total / math.sqrt(count) if count else self.bias

    def reference_best(self, text: str) -> Verdict:
        """The definition of ``best``, unit by unit (slow; tests compare the two)."""
        spans = units(text)
        parts = [self._unit(normalize(text[a:b])) for a, b in spans]
        best, where = -math.inf, (0, 0)
        for i in range(len(parts)):
            total: float = 0
            count = 0
            for j in range(i, min(len(parts), i + self.window)):
                total += parts[j][0]
                count += parts[j][1]
                if count:
                    s = self.bias + total / math.sqrt(count)
                    if s > best:
                        best, where = s, (spans[i][0], spans[j][1])
        if best == -math.inf:
            return Verdict(0.0, (0, 0))
        return Verdict(_sigmoid(best), where)

    def _word(self, raw: str) -> None:
        """Memoise a raw word: its score, its pair ends, whether a sentence ends after it."""
        norm = normalize(raw)
        self._memo[raw] = self.word_score(norm)
        pid = self._pair_ids.get(bare_word(norm), 0)
        self._right[raw] = pid
        self._left[raw] = pid * self._base
        self._ends[raw] = raw == _SENTINEL or raw[-1] in ".!?"

    def best(self, text: str, *, locate: bool = True) -> Verdict:
        """The best window of up to ``window`` consecutive units (lines, sentences) of
        ``text``: words are scored once (memoised, raw word as key), units summed by prefix
        sums. Same scores as ``reference_best`` (the word, not the unit, is normalised).
        ``locate=False`` skips finding the window's character span (reported as 0-0)."""
        if _SENTINEL in text:
            return self.reference_best(text)
        tokens = text.replace("\n", f" {_SENTINEL} ").split()
        if not tokens:
            return Verdict(0.0, (0, 0))
        memo = self._memo
        if len(memo) > _MEMO_LIMIT:
            for table in (memo, self._left, self._right, self._ends):
                table.clear()
        for x in set(tokens).difference(self._ends):
            self._word(x)
        scores = list(accumulate(map(memo.__getitem__, tokens), initial=0.0))
        if self.pairs:
            keys = map(
                add,
                map(self._left.__getitem__, tokens),
                map(self._right.__getitem__, islice(tokens, 1, None)),
            )
            pairs = list(accumulate(map(self._pair_w.get, keys, repeat(0.0)), initial=0.0))
        else:
            pairs = [0.0] * len(tokens)
        # unit k = tokens[bounds[k] : bounds[k + 1]]: a unit ends after a sentence end or a
        # line break (the sentinel, last in its unit: a word of score 0 that is not counted;
        # its pairs match no weight); units without words are dropped
        ends = compress(range(1, len(tokens) + 1), map(self._ends.__getitem__, tokens))
        bounds = [0, *ends]
        if bounds[-1] != len(tokens):
            bounds.append(len(tokens))
        totals, counts, firsts, lasts = [], [], [], []
        for a, b in zip(bounds, islice(bounds, 1, None), strict=False):
            n = b - a - (tokens[b - 1] == _SENTINEL)
            if n:
                totals.append(scores[b] - scores[a] + pairs[b - 1] - pairs[a])
                counts.append(n)
                firsts.append(a)
                lasts.append(a + n - 1)
        if not totals:
            return Verdict(0.0, (0, 0))
        sum_t = list(accumulate(totals, initial=0.0))
        sum_n = list(accumulate(counts, initial=0))
        best, where = -math.inf, (0, 0)
        for k in range(1, min(self.window, len(totals)) + 1):  # windows of k units
            vals = list(
                map(truediv, map(sub, sum_t[k:], sum_t), map(math.sqrt, map(sub, sum_n[k:], sum_n)))
            )
            top = max(vals)
            if top > best:
                i = vals.index(top)
                best, where = top, (firsts[i], lasts[i + k - 1])
        span = self._span(text, tokens, *where) if locate else (0, 0)
        return Verdict(_sigmoid(self.bias + best), span)

    @staticmethod
    def _span(text: str, tokens: list[str], first: int, last: int) -> tuple[int, int]:
        """Character span of tokens ``first``..``last`` (sentinels are not words of ``text``)."""
        lo = first - tokens[:first].count(_SENTINEL)
        hi = lo + (last - first) - tokens[first : last + 1].count(_SENTINEL)
        words = list(islice(_WORD.finditer(text), lo, hi + 1))
        return words[0].start(), words[-1].end()

    def as_dict(self) -> dict:
        return {
            "format": "refgate-injection-classifier/1",
            "n_min": self.n_min,
            "n_max": self.n_max,
            "window": self.window,
            "threshold": self.threshold,
            "pairs": self.pairs,
            "bias": self.bias,
            "weights": self.weights,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Classifier:
        if data.get("format") != "refgate-injection-classifier/1":
            raise ValueError(f"not an injection classifier file: format {data.get('format')!r}")
        return cls(
            {str(k): float(v) for k, v in data["weights"].items()},
            float(data["bias"]),
            n_min=int(data["n_min"]),
            n_max=int(data["n_max"]),
            window=int(data["window"]),
            threshold=float(data["threshold"]),
            pairs=bool(data.get("pairs", False)),
        )


def _sigmoid(x: float) -> float:
    if x < -60:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def read_model_file(path: Path, what: str) -> dict[str, Any]:
    """A shipped second layer's JSON data (``classifier.json``, ``semantic.json``); a clear
    error naming ``what`` when it is missing or broken."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RuntimeError(f"cannot load {what} {path}: {exc}") from exc


@lru_cache(maxsize=1)
def shipped() -> Classifier:
    """The classifier shipped with refgate (``classifier.json``), loaded once."""
    return Classifier.from_dict(read_model_file(MODEL_FILE, "the injection classifier"))

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
from pathlib import Path

MODEL_FILE = Path(__file__).with_name("classifier.json")
_BREAK = re.compile(r"\s*\n\s*|(?<=[.!?])\s+")
_MEMO_LIMIT = 200_000


def normalize(text: str) -> str:
    """The text as the features see it: NFKC, lower case."""
    return unicodedata.normalize("NFKC", text).lower()


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
        self._memo: dict[str, float] = {}
        self._bare: dict[str, str] = {}

    def word_score(self, word: str) -> float:
        w = self.weights
        return sum(w.get(g, 0.0) for g in word_ngrams(word, self.n_min, self.n_max))

    def _unit(self, text: str) -> tuple[float, int]:
        words = text.split()
        memo = self._memo
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
            self._bare.clear()
        for x in set(words).difference(memo):
            memo[x] = self.word_score(x)
            self._bare[x] = PAIR + bare_word(x) + " "
        total = sum(map(memo.__getitem__, words))
        if self.pairs and len(words) > 1:
            w, bare = self.weights, self._bare
            total += sum(
                w.get(bare[a] + bare[b][1:-1], 0.0) for a, b in zip(words, words[1:], strict=False)
            )
        return total, len(words)

    def logit(self, text: str) -> float:
        """The score of ``text`` as one window (the training view of a sample)."""
        total, count = self._unit(normalize(text))
        return self.bias + total / math.sqrt(count) if count else self.bias

    def best(self, text: str) -> Verdict:
        """The best window of up to ``window`` consecutive units of ``text``."""
        spans = units(text)
        parts = [self._unit(normalize(text[a:b])) for a, b in spans]
        best, where = -math.inf, (0, 0)
        for i in range(len(parts)):
            total = count = 0
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


@lru_cache(maxsize=1)
def shipped() -> Classifier:
    """The classifier shipped with refgate (``classifier.json``), loaded once."""
    try:
        data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RuntimeError(f"cannot load the injection classifier {MODEL_FILE}: {exc}") from exc
    return Classifier.from_dict(data)

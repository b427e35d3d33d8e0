"""The second layers of ``inspect_injection`` (issue 14): the shipped n-gram classifier
(``classifier.json``) and the semantic layer (frozen MiniLM embeddings + a small head,
``semantic.json``). Each layer that is on gives one signal for its best-scoring window when the
score reaches its shipped threshold: family ``classifier``, confidence medium, the window's span
and excerpt, and a rule naming the layer and the score (``ngram:0.9995``, ``semantic:0.9712``),
so a flagged page can be explained.

On or off by ``REFGATE_INJECTION_CLASSIFIER``: ``ngram`` (or ``1``/``true``/``yes``/``on``, the
earlier spelling), ``semantic``, ``both``, or ``0``/``false``/``no``/``off``; the default is
``DEFAULT`` (off: see docs/benchmarks.md, "Injection classifier", for the figures behind it).
"""

from __future__ import annotations

import os

from refgate.config import INJECTION_CLASSIFIER_ENV, INJECTION_CLASSIFIER_VALUES
from refgate.provenance.injection import classifier
from refgate.provenance.injection.findings import InjectionSignal, excerpt

ENV = INJECTION_CLASSIFIER_ENV
LAYERS = ("ngram", "semantic")
DEFAULT: frozenset[str] = frozenset()
_VALUES = INJECTION_CLASSIFIER_VALUES


def layers(value: bool | str | None = None) -> frozenset[str]:
    """The layers that are on: from ``value`` if given (``True``: the n-gram layer, ``False``:
    none, or a setting's name), else the environment's setting, else ``DEFAULT``."""
    if value is True:
        return frozenset({"ngram"})
    if value is False:
        return frozenset()
    raw = (value if value is not None else os.environ.get(ENV, "")).strip().lower()
    if not raw:
        return DEFAULT
    if raw not in _VALUES:
        names = "ngram, semantic, both, 1/0, true/false, yes/no, on/off"
        source = ENV if value is None else "classifier"
        raise ValueError(f"{source} must be one of {names}; got {raw!r}")
    return _VALUES[raw]


def _signal(text: str, name: str, score: float, span: tuple[int, int]) -> InjectionSignal:
    return InjectionSignal(
        "instruction_override",
        "medium",
        excerpt(text, *span),
        span,
        "text",
        f"{name}:{score:.4f}",
        "classifier",
    )


def ngram_signals(text: str) -> list[InjectionSignal]:
    """The n-gram classifier's signal for ``text``, or none below its threshold."""
    clf = classifier.shipped()
    if clf.best(text, locate=False).score < clf.threshold:
        return []
    verdict = clf.best(text)
    return [_signal(text, "ngram", verdict.score, verdict.span)]


def semantic_signals(text: str) -> list[InjectionSignal]:
    """The semantic layer's signal for ``text``, or none below its threshold (MiniLM loads on
    the first window that passes the prefilter; ``semantic.SemanticUnavailable`` without the
    ``embeddings`` extra)."""
    from refgate.provenance.injection import semantic  # deferred: numpy and MiniLM load when used

    layer = semantic.shipped()
    verdict = layer.best(text)
    if verdict.score < layer.threshold:
        return []
    return [_signal(text, "semantic", verdict.score, verdict.span)]


def classifier_signals(
    text: str, which: frozenset[str] = frozenset({"ngram"})
) -> list[InjectionSignal]:
    """The signals of the layers in ``which`` for ``text``."""
    out: list[InjectionSignal] = []
    if "ngram" in which:
        out += ngram_signals(text)
    if "semantic" in which:
        out += semantic_signals(text)
    return out

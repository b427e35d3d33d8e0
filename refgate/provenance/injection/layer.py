"""The classifier as a second layer of ``inspect_injection`` (issue 14): one signal for the
best-scoring window of the text when its score reaches the shipped threshold, named family
``classifier``, with the window's span and the score in its rule, so a flagged page can be
explained. On or off by ``REFGATE_INJECTION_CLASSIFIER`` (``1``/``0``); the default is
``DEFAULT`` (see docs/benchmarks.md, "Injection classifier", for the figures behind it).
"""

from __future__ import annotations

import os

from refgate.provenance.injection.classifier import shipped
from refgate.provenance.injection.report import InjectionSignal, excerpt

ENV = "REFGATE_INJECTION_CLASSIFIER"
DEFAULT = False
_ON, _OFF = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def enabled(value: bool | None = None) -> bool:
    """``value`` if given, else the environment's setting, else ``DEFAULT``."""
    if value is not None:
        return value
    raw = os.environ.get(ENV, "").strip().lower()
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    if raw:
        raise ValueError(f"{ENV} must be one of 1/0/true/false/yes/no/on/off, got {raw!r}")
    return DEFAULT


def classifier_signals(text: str) -> list[InjectionSignal]:
    """The classifier's signal for ``text``, or none below the threshold."""
    clf = shipped()
    if clf.best(text, locate=False).score < clf.threshold:
        return []
    verdict = clf.best(text)
    start, end = verdict.span
    return [
        InjectionSignal(
            "instruction_override",
            "medium",
            excerpt(text, start, end),
            verdict.span,
            "text",
            f"classifier:{verdict.score:.4f}",
            "classifier",
        )
    ]

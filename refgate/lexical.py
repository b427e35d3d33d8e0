"""Lexical matching: content words of a text (the tokens every word-overlap ranking uses)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "by",
        "with",
        "at",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "what",
        "how",
        "why",
        "which",
        "who",
        "whom",
        "did",
        "does",
        "do",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "into",
        "than",
        "then",
        "over",
        "under",
        "about",
        "between",
        "during",
        "after",
        "before",
    ]
)


def terms(text: str) -> list[str]:
    """Lower-case content words of ``text`` (stop words dropped)."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text or "")) if w not in _STOP]

"""Small text facts shared by the modules that split prose into sentences (GATE, chunking)."""

from __future__ import annotations

import re

#: Lower-case words that end with a full stop without ending a sentence ("Mr.", "Jan.", "Corp.").
ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "mr", "mrs", "ms", "dr", "st", "vs", "etc", "inc", "co", "corp", "ltd", "no", "nos",
        "fig", "approx", "est",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)


_WS = re.compile(r"\s+")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")

def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(_WS.sub(" ", text or "").strip()) if s.strip()]

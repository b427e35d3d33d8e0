"""Sentences: the one sentence splitter (the GATE's claims, the chunker's units, research and
web snippets all cut prose here).

A sentence ends at ``.``, ``!``, ``?`` (or ``。！？``) followed by white space, or after ``다.``
(Korean) when text follows directly. A full stop does not end it after a known abbreviation
("Mr.", "Jan.", "Corp.", "et al."), a dotted form ("U.S.", "e.g."), or a single letter ("J.");
nor does any boundary followed by a lower-case ASCII letter ("approx. the same"). The GATE's
speed depends on this loop: it scans back over ``[A-Za-z.]`` only, one pass, no regex per dot.
"""

from __future__ import annotations

import re

#: Lower-case words that end with a full stop without ending a sentence ("Mr.", "Jan.", "Corp.").
ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "mr", "mrs", "ms", "dr", "st", "vs", "etc", "inc", "co", "corp", "ltd", "no", "nos",
        "fig", "approx", "est",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        # titles and forms common in documents
        "prof", "sr", "jr", "al", "gov", "govt", "dept",
        # units common in answers
        "avg", "yr", "yrs", "mo", "mos",
    }
)  # fmt: skip

_BOUNDARY = re.compile(r"[.!?。！？](?=\s)|(?<=다\.)(?=\S)")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.")
_WS = re.compile(r"\s+")


def sentence_ends(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets just past the end mark of each sentence in ``text[start:end]`` but the last (the
    rest of the range is the last sentence)."""
    n = len(text) if end is None else end
    ends: list[int] = []
    cur = start
    for m in _BOUNDARY.finditer(text, start, n):
        e = m.end()
        if m.group() == ".":
            # The run of [A-Za-z.] that ends the sentence so far ("Inc.", "U.S.", "e.g.").
            j = e
            while j > cur and text[j - 1] in _WORD_CHARS:
                j -= 1
            if j < e:
                w = text[j:e].rstrip(".").lower()
                if w in ABBREVIATIONS or ("." in w and w.replace(".", "").isalpha()) or len(w) == 1:
                    continue
        k = e
        while k < n and text[k].isspace():
            k += 1
        nxt = text[k] if k < n else ""
        if nxt and nxt.islower() and nxt.isascii():
            continue
        ends.append(e)
        cur = e
    return ends


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` tiling ``text[start:end]``: the white space after a
    sentence stays with it."""
    n = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cur = start
    for e in sentence_ends(text, start, n):
        k = e
        while k < n and text[k].isspace():
            k += 1
        if k >= n:
            break
        spans.append((cur, k))
        cur = k
    if cur < n:
        spans.append((cur, n))
    return [s for s in spans if s[1] > s[0]]


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` with white space runs squashed to one space, stripped."""
    flat = _WS.sub(" ", text or "").strip()
    return [s for a, b in sentence_spans(flat) if (s := flat[a:b].strip())]

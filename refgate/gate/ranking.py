"""Rankings in the GATE: ranking phrases of a text, and the frame a ranking answer must state.

``ranks`` finds ranking words ("largest", "top 3", "#1", "2nd highest", "3위", "상위", "가장");
``ranking_frame`` says what a ranking answer leaves unstated: its universe, its metric, the raw
values of its evidence table.
"""

from __future__ import annotations

import re

from .markdown import Unit
from .names import NamePattern

#: A ranking answer states its universe (the set ranked) ...
_UNIVERSE = re.compile(
    r"\b(?:among|amongst|out of|universe|constituents?|components|members of|of all|across all"
    r"|all (?:the )?(?:listed |\w+ )?(?:companies|firms|stocks|shares|countries|states|banks"
    r"|funds|sectors|industries|issuers|quarters|years|months|periods)"
    r"|in the (?:sample|dataset|index|table)|datasets?|sample of|screened|filtered)\b"
    r"|중에서|가운데|대상|유니버스|구성\s?종목|전체"
)
#: ... and its metric (what it is ranked by), in the text or as the evidence table's value column.
_METRIC = re.compile(
    r"\b(?:ranked|ranks|ranking|rank|sorted|ordered|measured|largest|biggest|highest|lowest"
    r"|smallest|greatest|fewest|top|bottom)\b[^.;\n]{0,60}?\b(?:by|on|in terms of|according to)"
    r"\s+[^\W\d_]"
    r"|\b(?:metric|formula|computed as|calculated as|defined as|measured as)\b"
    r"|기준|지표|계산식|순으로"
)

#: Ranking words, matched on lower-cased text. Every branch starts with a literal character, so
#: the scan is a fast prefix search; word boundaries are checked after the first character.
_RANK = re.compile(
    r"(?=[tbfslghrn#상하최가])(?:"
    r"top(?<![a-z0-9_]top)[\s-]?(?:\d{1,3}|one|two|three|four|five|ten|twenty)\b"
    r"|bottom(?<![a-z0-9_]bottom)[\s-]?(?:\d{1,3}|one|two|three|four|five|ten|twenty)\b"
    r"|(?:first|second|third)(?<![a-z0-9_]first)(?<![a-z0-9_]second)(?<![a-z0-9_]third)"
    r"[\s-](?:largest|biggest|highest|lowest|smallest|greatest|place|position)\b"
    r"|(?:largest|biggest|highest|lowest|smallest|greatest|fewest|ranked|ranks|ranking)\b"
    r"|#\s?\d{1,3}\b|no\.\s?\d{1,3}\b|number\s(?:one|two|three)\b"
    r"|상위(?:\s?\d{1,3}(?:개|위|곳|%)?)?|하위(?:\s?\d{1,3}(?:개|위|곳|%)?)?"
    r"|최대|최고|최저|최소|가장)"
)
_RANK_DIGIT = re.compile(
    r"(?=\d)\d{1,3}(?:(?:st|nd|rd|th)[\s-](?:largest|biggest|highest|lowest|smallest|greatest"
    r"|place|position)\b|\s?위(?!안)|\s?등(?!급))"
)


#: A literal every _RANK match contains: most text holds none, and one search for them is far
#: cheaper than _RANK's scan, whose first characters (t, s, l, h, ...) are everywhere in prose.
_RANK_HINT = re.compile(
    r"top|bottom|first|second|third|largest|biggest|highest|lowest|smallest|greatest|fewest"
    r"|rank|#|no\.|number|상위|하위|최대|최고|최저|최소|가장"
)


def ranks(text: str, low: str) -> list[tuple[int, int, str]]:
    """Ranking phrases of ``text`` (``low`` is ``text.lower()``) as (start, end, text)."""
    out = []
    if _RANK_HINT.search(low) is not None:
        for m in _RANK.finditer(low):
            s = m.start()
            glued = s and low[s - 1].isascii() and (low[s - 1].isalnum() or low[s - 1] == "_")
            if glued and m.group()[0].isascii() and m.group()[0].isalpha():
                continue
            out.append((s, m.end(), text[s : m.end()]))
    # _RANK_DIGIT needs 위, 등, or an ordinal followed by a superlative (…est), place or position.
    if "위" in low or "등" in low or "est" in low or "place" in low or "position" in low:
        for m in _RANK_DIGIT.finditer(low):
            s = m.start()
            if s and (low[s - 1].isdigit() or low[s - 1] in ".,"):
                continue
            out.append((s, m.end(), text[s : m.end()]))
    return out


_DIGIT = re.compile(r"\d")


def ranking_frame(units: list[Unit], rank_rows: list[Unit], names: NamePattern | None) -> list[str]:
    """What a ranking answer leaves unstated: its universe, its metric, the raw values."""
    value_headers: list[str] = []
    for row in rank_rows:
        for c in row.cells or ():
            if c.text and not c.rank and not c.period and _DIGIT.search(c.text) is not None:
                value_headers.append(c.header)
    # Unit by unit, stopping at the first that states it (the frame usually opens the answer).
    universe = False
    metric = any(_has_letters(h) for h in value_headers)
    for u in units:
        if u.cells is not None:
            continue
        low = u.text.lower()
        if not universe:
            universe = _UNIVERSE.search(low) is not None or (
                names is not None and bool(names.spans(u.text, low))
            )
        if not metric:
            metric = _METRIC.search(low) is not None
        if universe and metric:
            break
    missing = []
    if not universe:
        missing.append(
            "its universe (the set ranked, e.g. 'among the S&P 500 constituents' or 'of all "
            "quarters in the dataset')"
        )
    if not metric:
        missing.append("its metric (what it is ranked by, e.g. 'ranked by market capitalization')")
    if rank_rows and not value_headers:
        missing.append("the raw value of the metric in the evidence table (a value column)")
    return missing


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)

"""Question coverage: does the answer state what the question asks about?

The question names quantities (its metric words: "real GDP", "unemployment rate") and periods
("2009Q3", "from 2008Q3 to 2009Q3"). A period is covered when some claim states it (at the same
or a finer granularity); the quantity is covered when the claims share at least half of the
question's metric words (abbreviations expanded both ways: "CPI" ~ "consumer price index"). The
GATE checks the claims it verified (``question_not_covered``, a warning; blocking with
``coverage = "block"``); ``refgate eval`` checks the whole answer and scores an answer that leaves
the asked quantity or period uncovered as wrong, whatever numbers it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .dates import find_dates
from .words import label_words, overlap, strong_count

#: Words of a question that ask rather than name what is asked about.
_ASKING_WORDS = """
    which whom whose what when where how why many much did does do us dataset macro snapshot
    according average mean highest lowest largest smallest peak first last rank since end
    quarter month year them it five ten
"""
_ASKING = frozenset(_ASKING_WORDS.split())
#: Share of the question's metric words the claims must hold.
WORDS_NEEDED = 0.5


@dataclass(frozen=True, slots=True)
class Asked:
    """What a question asks about: its metric words and its periods (date keys)."""

    words: frozenset[str]
    periods: tuple[tuple[str, str], ...]  # (as written, key)


def asked(question: str) -> Asked:
    """The question's metric words and the periods it asks about (not the periods that only
    frame it: "since 1990", "(1959-2009)", "chained 2005 dollars")."""
    words = frozenset(w for w in label_words(question) if w not in _ASKING)
    periods = tuple(
        (d.text, d.keys[-1])
        for d in find_dates(question)
        if d.keys and not _framing(question, d.start)
    )
    return Asked(words, periods)


def _framing(question: str, start: int) -> bool:
    before = question[:start]
    if before.count("(") > before.count(")"):
        return True
    return before.rstrip().lower().endswith(("since", "chained", "after", "before"))


def uncovered(question: str, texts: Iterable[str], *, verified: bool = False) -> list[str]:
    """What ``question`` asks about that none of ``texts`` states, as phrases: ``texts`` are the
    whole answer, or (``verified``) only its verified claims, which the phrases then say (an
    unverified claim may state 2009Q3: "no verified claim covers 2009Q3")."""
    says = "no verified claim covers" if verified else "the answer states nothing about"
    want = asked(question)
    said_words: set[str] = set()
    said_periods: set[str] = set()
    for text in texts:
        said_words |= label_words(text)
        for d in find_dates(text):
            for k in d.keys:
                said_periods.add(k)
                said_periods.update(_coarser(k))
    missing = [f"{says} {shown}" for shown, key in want.periods
               if key not in said_periods]  # fmt: skip
    need = strong_count(want.words)
    if need and overlap(want.words, frozenset(said_words)) < WORDS_NEEDED * need:
        what = ", ".join(sorted(want.words - said_words))
        missing.insert(0, f"{says} what was asked ({what})")
    return missing


def _coarser(key: str) -> list[str]:
    """The year of a quarter, month or day key ("2009Q3" -> "2009")."""
    return [key[:4]] if len(key) > 4 and key[:4].isdigit() else []

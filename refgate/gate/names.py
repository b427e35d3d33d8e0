"""Names that contain numbers ("S&P 500", "Form 10-K", "Rule 10b-5"): names, not claims.

The GATE masks these spans before it reads numbers and dates, so "Among the S&P 500
constituents" is not a claim that 500 is a value. A name matches only as written (its words in
order, any case, a blank or hyphen between its parts, nothing glued on either side), so "S&P 5000",
"500 points" and the second 500 of "the S&P 500 rose 500 points" stay claims. The built-in list
lives in ``refgate.gate.numbered_names`` and the check of a workspace's additions in
``refgate.workspace.check_names``; a workspace adds names in ``refgate.toml``::

    [gate]
    names = ["MSCI World 100", "Regulation S-K Item 303"]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from refgate.gate.numbered_names import DEFAULT_NAMES
from refgate.workspace import check_names

__all__ = ["DEFAULT_NAMES", "NamePattern", "check_names", "compiled", "name_spans"]

_PART = re.compile(r"[^\s-]+")


def _pattern(name: str) -> str:
    parts = [re.escape(p) for p in _PART.findall(name)]
    body = r"(?:\s|-)?".join(parts)
    # Nothing glued on: no letter or digit before; after a trailing digit no digit, letter,
    # "%", or "." / "," with a digit ("Section 16.5", "FTSE 100,000" stay numbers).
    head = r"(?<![\w&/])"
    tail = r"(?![\d%]|[.,]\d|[^\W\d_])" if name[-1].isdigit() else r"(?!\d)"
    return head + body + tail


class NamePattern:
    """The names as one pattern, behind a cheap hint: a search for their first words (lower-case
    literals) skips the full pattern on the texts that hold none (most of them)."""

    __slots__ = ("hint", "pattern")

    def __init__(self, names: Sequence[str]) -> None:
        ordered = sorted(set(names), key=len, reverse=True)
        firsts = sorted(
            {re.split(r"[\s-]", n, maxsplit=1)[0].lower() for n in ordered}, key=len, reverse=True
        )
        self.hint = re.compile("|".join(re.escape(f) for f in firsts))
        # A leading guard on the names' first characters lets the scan skip other positions.
        first = sorted({ch for n in ordered for ch in (n[0].lower(), n[0].upper())})
        guard = "(?=[" + "".join(re.escape(c) for c in first) + "])"
        self.pattern = re.compile(
            guard + "(?:" + "|".join(_pattern(n) for n in ordered) + ")", re.IGNORECASE
        )

    def spans(self, text: str, low: str | None = None) -> list[tuple[int, int]]:
        """Spans of the names in ``text`` (``low``: ``text.lower()``, when already made)."""
        if self.hint.search(text.lower() if low is None else low) is None:
            return []
        return [m.span() for m in self.pattern.finditer(text)]

    def search(self, text: str) -> bool:
        return bool(self.spans(text))


@lru_cache(maxsize=64)
def compiled(extra: tuple[str, ...] = ()) -> NamePattern:
    """The default names plus ``extra``, compiled once per distinct list."""
    return NamePattern(DEFAULT_NAMES + extra)


def name_spans(text: str, extra: Sequence[str] = ()) -> list[tuple[int, int]]:
    """Spans of the names (the defaults and ``extra``) in ``text``."""
    return compiled(tuple(extra)).spans(text)

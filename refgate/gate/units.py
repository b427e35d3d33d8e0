"""Unit and scale strings, for the GATE: what "USD millions", "%", "백만원" or "ratio" in a ref (or
an answer's table header) says, as a ``Unit``; and the scale words and currencies that numbers in
text carry too (``numbers.py``). Not to be confused with ``markdown.Unit``, a claim of the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: Scale words and their multipliers (claim side and ref side).
SCALE_WORDS: dict[str, float] = {
    "thousand": 1e3,
    "thousands": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "k": 1e3,
    "mn": 1e6,
    "mm": 1e6,
    "mio": 1e6,
    "m": 1e6,
    "bn": 1e9,
    "b": 1e9,
    "tn": 1e12,
    "천": 1e3,
    "만": 1e4,
    "억": 1e8,
    "조": 1e12,
}

#: Currency symbols, codes and words and the ISO code each names.
CURRENCIES = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "달러": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "¥": "JPY",
    "jpy": "JPY",
    "yen": "JPY",
    "엔": "JPY",
    "₩": "KRW",
    "krw": "KRW",
    "won": "KRW",
    "원": "KRW",
    "rmb": "CNY",
    "cny": "CNY",
    "위안": "CNY",
}


@dataclass(frozen=True, slots=True)
class Unit:
    """What a ref's unit / scale string says: kind, multiplier and currency."""

    kind: str = "none"  # none | plain | percent | ratio | bp | x
    scale: float = 1.0
    has_scale: bool = False
    currency: str = ""


#: The unit kinds that carry no scale, each with the words that name it, tried in this order:
#: the first that a unit string names is its kind ("% share" is a percent, not a ratio).
_KIND_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bp", re.compile(r"\bbps?\b|basis points?")),
    ("percent", re.compile(r"%|percent|pct|퍼센트|\bpp\b")),
    ("ratio", re.compile(r"\b(ratio|fraction|decimal|share)\b|비율")),
    ("x", re.compile(r"^\s*(x|times|multiple)\s*$|배")),
)
_UNIT_KO = re.compile(r"(십억|백만|천만|천억|조|억|만|천)\s*(원|달러|주)?")
_UNIT_EN = re.compile(
    r"(?<![A-Za-z])(thousands?|millions?|billions?|trillions?|mn|bn|tn|mm|mio|k|m|b)(?![A-Za-z])",
    re.I,
)
_UNIT_CUR = re.compile(
    r"us\$|\$|€|£|¥|₩|\b(usd|eur|gbp|jpy|krw|cny|rmb|won|yen|dollars?|euros?)\b|원|달러|엔|위안"
)
_KO_UNIT_WORDS = {
    "십억": 1e9,
    "백만": 1e6,
    "천만": 1e7,
    "천억": 1e11,
    "조": 1e12,
    "억": 1e8,
    "만": 1e4,
    "천": 1e3,
}


#: A unit string that says nothing (none, empty).
NO_UNIT = Unit()


def parse_unit(unit: object) -> Unit:
    """Read a unit or scale string ("USD millions", "%", "ratio", "백만원", "thousand", 1e6)."""
    if unit is None:
        return NO_UNIT
    if type(unit) is str:
        # Unit strings repeat across refs and columns ("USD", "million", "%"): parsed once.
        return _parse_unit_str(unit)
    if unit == "":
        return NO_UNIT
    if isinstance(unit, bool):
        return NO_UNIT
    if isinstance(unit, int | float):
        return Unit("plain", float(unit), True) if unit > 0 else NO_UNIT
    return _parse_unit_text(str(unit))


@lru_cache(maxsize=4096)
def _parse_unit_str(unit: str) -> Unit:
    return _parse_unit_text(unit)


def _parse_unit_text(unit: str) -> Unit:
    s = unit.strip().lower()
    if not s:
        return Unit()
    for kind, pattern in _KIND_PATTERNS:
        if pattern.search(s):
            return Unit(kind)
    cur = ""
    cm = _UNIT_CUR.search(s)
    if cm:
        cur = CURRENCIES.get(cm.group().strip(), "") or CURRENCIES.get(cm.group(1) or "", "")
        if not cur and cm.group().startswith("us$"):
            cur = "USD"
    km = _UNIT_KO.search(s)
    if km:
        return Unit("plain", _KO_UNIT_WORDS[km.group(1)], True, cur)
    em = _UNIT_EN.search(s)
    if em:
        return Unit("plain", SCALE_WORDS[em.group(1).lower()], True, cur)
    return Unit("plain", 1.0, False, cur)


@lru_cache(maxsize=1024)
def merge_units(scale: Unit, unit: Unit) -> Unit:
    """Combine a payload ``scale`` field with a ``units`` entry (the unit's own scale wins)."""
    kind = unit.kind if unit.kind != "none" else scale.kind
    if unit.kind in ("percent", "ratio", "bp", "x"):
        return unit
    if scale.kind in ("percent", "ratio", "bp", "x") and unit.kind in ("none",):
        return scale
    if unit.has_scale:
        return Unit("plain", unit.scale, True, unit.currency or scale.currency)
    if scale.has_scale:
        return Unit("plain", scale.scale, True, unit.currency or scale.currency)
    return Unit(kind, 1.0, False, unit.currency or scale.currency)

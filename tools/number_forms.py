"""Numbers in text, read in every form a value can be written, and matched by value.

The outbound check (``refgate.tools.outbound``) asks whether a text sent off the machine carries
a number of the workspace's data. Written forms vary: ``98,765.4321``, ``98.765,4321``,
``98 765.4321``, ``USD98765.4321``, ``98.765 thousand``, ``98.8k``, ``987654321`` (the digits
with the point dropped), ``98765 4321`` (split by a space). A ``Mention`` keeps every reading of
one written number:

- **by value**: each way to read its separators (thousands grouping, either decimal mark) times
  a scale word after it (thousand, k, million, bn, 억 ...; a ``%`` also reads as a fraction).
  It matches a data value that rounds or truncates to it at its own precision
  (``98.8 thousand`` matches 98765.4321; ``98765`` matches it too).
- **by digits**: the digit run of adjacent digit groups joined whatever separates them (spaces
  included), magnitude free, when it holds at least ``MIN_RUN_DIGITS`` significant digits
  (``98765 4321`` and ``987654321`` both match 98765.4321). Shorter runs would match by chance.

Years, small whole counts (under 100) and numbers of one significant digit (500, 3000, 0.5)
carry no data by value; ``Mention.small`` says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

#: Separators that may sit between the digit groups of one written number.
_SEPARATORS = " ,.'_\u00a0\u202f\u2009"
_CHAIN = re.compile(r"\d+(?:[ ,.'_\u00a0\u202f\u2009]\d+)*")
_SPLIT = re.compile(r"[ ,.'_\u00a0\u202f\u2009]")
_SCALE = re.compile(
    r"\s?(thousands?|millions?|billions?|trillions?|mln|mn|bn|tn|k|m|b|천|만|억|조)(?![^\W\d_])",
    re.IGNORECASE,
)
_SCALES: dict[str, int] = {
    "thousand": 3, "k": 3, "천": 3, "만": 4, "million": 6, "mn": 6, "mln": 6, "m": 6,
    "억": 8, "billion": 9, "bn": 9, "b": 9, "trillion": 12, "tn": 12, "조": 12,
}  # fmt: skip
_YEAR = re.compile(r"^(?:1[89]|20|21)\d\d$")
#: Fewest significant digits a digit run needs to be matched magnitude free.
MIN_RUN_DIGITS = 6
#: Most digit groups of one chain joined into runs (a longer chain is not one number).
MAX_RUN_GROUPS = 6
#: Fewest significant digits a number needs to count as data by value.
MIN_VALUE_DIGITS = 2

#: A number as ``n * 10**k`` with ``n`` free of trailing zeros (its digits are its precision).
Key = tuple[int, int]


def key_of(value: Decimal) -> Key | None:
    """``(n, k)`` with ``abs(value) == n * 10**k`` and no trailing zero in ``n``; None for 0."""
    if not value.is_finite() or value == 0:
        return None
    _, digits, exp = abs(value).normalize().as_tuple()
    assert isinstance(exp, int)  # finite
    return int("".join(map(str, digits))), exp


def precision(key: Key) -> int:
    return len(str(key[0]))


@dataclass(frozen=True)
class Mention:
    """One written number and every reading of it (see the module doc)."""

    text: str
    #: Readings by value, as ``(n, k)`` keys.
    values: frozenset[Key]
    #: The significant digits of its digit runs (``MIN_RUN_DIGITS`` or more), magnitude free.
    runs: frozenset[int]
    #: A year, a small whole count or one significant digit: no data by value.
    small: bool


def _readings(word: str) -> list[Decimal]:
    """The values one written number (no spaces in it) may stand for."""
    seps = [c for c in word if not c.isdigit()]
    groups = _SPLIT.split(word)
    if not seps:
        return [Decimal(word)]
    out: list[str] = []
    tail_of_three = all(len(g) == 3 for g in groups[1:])
    if len(set(seps)) == 1 and tail_of_three:
        out.append("".join(groups))  # thousands grouping: 98,765 / 1.234.567 / 98'765
    last = seps[-1]
    if last in ".," and (len(seps) == 1 or len(set(seps[:-1])) == 1 and seps[0] != last):
        out.append("".join(groups[:-1]) + "." + groups[-1])  # 98,765.43 / 98.765,43 / 9.6
    readings: list[Decimal] = []
    for text in out:
        try:
            readings.append(Decimal(text))
        except InvalidOperation:
            continue
    return readings


def _scaled(readings: list[Decimal], after: str) -> tuple[list[Decimal], str]:
    """The readings with those a scale word or ``%`` right after gives, and that suffix."""
    scale = _SCALE.match(after)
    if scale:
        exp = _SCALES[scale.group(1).casefold().rstrip("s")]
        return readings + [r.scaleb(exp) for r in readings], scale.group(0)
    if after.lstrip().startswith("%"):
        return readings + [r.scaleb(-2) for r in readings], "%"
    return list(readings), ""


def _is_small(word: str, readings: list[Decimal], scaled: bool) -> bool:
    if not readings:
        return True
    if not scaled and "." not in word and "," not in word and _YEAR.match(word):
        return True
    whole = all(r == r.to_integral_value() for r in readings)
    if not scaled and whole and all(abs(r) < 100 for r in readings):
        return True
    keys = [key_of(r) for r in readings]
    return all(k is None or precision(k) < MIN_VALUE_DIGITS for k in keys)


def _runs(groups: list[str]) -> set[int]:
    runs: set[int] = set()
    for i in range(len(groups)):
        for j in range(i + 1, min(len(groups), i + MAX_RUN_GROUPS) + 1):
            digits = "".join(groups[i:j]).strip("0")
            if len(digits) >= MIN_RUN_DIGITS:
                runs.add(int(digits))
    return runs


def mentions(text: str) -> list[Mention]:
    """Every number written in ``text``, with its readings (see the module doc)."""
    out: list[Mention] = []
    for chain in _CHAIN.finditer(text):
        whole = chain.group(0)
        runs = _runs(_SPLIT.split(whole))
        words = [w for w in re.split(r"[ \u00a0\u202f\u2009]", whole) if w]
        for idx, word in enumerate(words):
            readings = _readings(word)
            after = text[chain.end() :] if idx == len(words) - 1 else ""
            values, suffix = _scaled(readings, after)
            scaled = suffix not in ("", "%")  # "25%" is as small as 25
            keys = frozenset(k for k in map(key_of, values) if k is not None)
            out.append(
                Mention(
                    text=word + suffix,
                    values=keys,
                    runs=frozenset(runs) if idx == 0 else frozenset(),
                    small=_is_small(word, readings, scaled),
                )
            )
    return out


def numbers_in(text: str) -> Iterator[Decimal]:
    """The values written in ``text`` (printed output), each as first read."""
    for chain in _CHAIN.finditer(text):
        for word in re.split(r"[ \u00a0\u202f\u2009]", chain.group(0)):
            readings = _readings(word) if word else []
            if readings:
                yield readings[-1] if "." in word and len(readings) > 1 else readings[0]


def _value_bounds(key: Key) -> tuple[Decimal, Decimal]:
    """Values that round or truncate to ``key`` at its precision: ``[lo, hi)``."""
    n, k = key
    return (Decimal(n) - Decimal("0.5")).scaleb(k), Decimal(n + 1).scaleb(k)


def matches(mention: Mention, value: Decimal | float | int, *, min_digits: int) -> bool:
    """Whether ``value`` (a data value) is what ``mention`` writes, in any of its readings.
    Readings by value need ``min_digits`` significant digits."""
    try:
        x = abs(Decimal(str(value)) if isinstance(value, float) else Decimal(value))
    except InvalidOperation:
        return False
    if not x.is_finite() or x == 0:
        return False
    if not mention.small:
        for key in mention.values:
            if precision(key) < min_digits:
                continue
            lo, hi = _value_bounds(key)
            if lo <= x < hi:
                return True
    exponent = x.adjusted()
    for n in mention.runs:
        lo, hi = _value_bounds((n, exponent - len(str(n)) + 1))
        if lo <= x < hi:
            return True
    return False


def sql_condition(mention: Mention, column: str, *, min_digits: int) -> str | None:
    """A DuckDB condition true when the numeric ``column`` holds a value ``mention`` writes
    (``matches`` in SQL); None when the mention cannot match."""
    x = f"abs(CAST({column} AS DOUBLE))"
    parts: list[str] = []
    if not mention.small:
        for key in sorted(mention.values):
            if precision(key) >= min_digits:
                lo, hi = _value_bounds(key)
                parts.append(f"({x} >= {float(lo)!r} AND {x} < {float(hi)!r})")
    for n in sorted(mention.runs):
        if len(str(n)) > 15:
            continue  # beyond a double's precision
        scale = f"pow(10, floor(log10({x})) - {len(str(n)) - 1})"
        parts.append(f"({x} > 0 AND {x} >= {n - 0.5!r} * {scale} AND {x} < {n + 1} * {scale})")
    return " OR ".join(parts) or None


def own_numbers(found: Iterable[Mention], trusted_texts: Iterable[str]) -> list[Mention]:
    """The mentions the trusted texts (the question) do not write themselves."""
    own = [v for t in trusted_texts for v in numbers_in(t)]
    return [m for m in found if not any(matches(m, v, min_digits=1) for v in own)]

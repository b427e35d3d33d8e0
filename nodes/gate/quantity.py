"""The claim side of binding: what quantity each number of a claim states.

A claim's number is a quantity: its metric words (what, and whose, where named), the claim's
periods (when), its unit kind and its value. The metric words of a number are those of its clause:
the words between the previous number and it; when that stretch holds none ("Margins were 5% and
6%"), the stretch before it, then the words after it up to the next number; a claim with no
metric words at all ("It rose to 9.6%") takes those of the sentence before. A table row's numbers
take their row's labels and their column header.
"""

from __future__ import annotations

from dataclasses import dataclass

from .markdown import Unit
from .mentions import Mention
from .numbers import Num, counts_noun
from .words import metric_words

#: A claim's unit kinds (``claim_kind``): what the number is, as written.
CLAIM_KINDS = ("percent", "x", "currency", "count", "plain")


@dataclass(slots=True)
class Quantity:
    """One number of a claim as a quantity (the value itself is the ``Num``)."""

    words: frozenset[str]
    #: The whole claim's metric words with the previous claim's (a table row: the sentence
    #: above the table): tried when ``words`` match nothing at a place.
    fallback: frozenset[str]
    #: The claim's periods, each as the date keys that state it.
    periods: tuple[tuple[str, ...], ...]
    kind: str


def claim_kind(num: Num, text: str) -> str:
    """The unit kind of a number as written: percent, x, currency, count or plain."""
    if num.kind in ("percent", "bp"):
        return "percent"
    if num.kind == "x":
        return "x"
    if num.currency:
        return "currency"
    if counts_noun(text, num):
        return "count"
    return "plain"


def _windows(text: str, nums: list[Num]) -> list[frozenset[str]]:
    """Each number's clause words (see the module docstring)."""
    bounds = [0] + [n.end for n in nums]
    lefts = [metric_words(text[bounds[i] : n.start]) for i, n in enumerate(nums)]
    out: list[frozenset[str]] = []
    for i, n in enumerate(nums):
        words = lefts[i]
        j = i
        while not words and j > 0:
            j -= 1
            words = lefts[j]
        if not words:
            nxt = nums[i + 1].start if i + 1 < len(nums) else len(text)
            words = metric_words(text[n.end : nxt])
        out.append(words)
    return out


def quantities(
    unit: Unit, mentions: list[Mention], labels: list[str], previous: frozenset[str]
) -> tuple[list[Quantity], frozenset[str]]:
    """The quantity of each number mention of ``unit`` (in mention order) and the unit's own
    metric words (the next claim's ``previous``). ``labels`` are a table row's label cells."""
    periods = tuple(m.keys for m in mentions if m.kind == "date" and m.keys != ("asof",))
    nums = [m.num for m in mentions if m.kind == "number" and m.num is not None]
    if unit.cells is not None:
        row_words = metric_words(" ".join(labels))
        out = []
        for m in mentions:
            if m.kind == "number" and m.num is not None:
                words = row_words | metric_words(m.header)
                out.append(Quantity(words, words | previous, periods, claim_kind(m.num, "")))
        return out, row_words or previous
    text = unit.text
    own = metric_words(text)
    fallback = own | previous
    if len(nums) == 1:  # the common case: its clause is all the text before it, or after it
        n = nums[0]
        words = metric_words(text[: n.start]) or metric_words(text[n.end :]) or fallback
        return [Quantity(words, fallback, periods, claim_kind(n, text))], own or previous
    if all(a.start <= b.start for a, b in zip(nums, nums[1:], strict=False)):
        windows = _windows(text, nums)
    else:
        ordered = sorted(nums, key=lambda n: n.start)
        by_id = dict(zip(map(id, ordered), _windows(text, ordered), strict=True))
        windows = [by_id[id(n)] for n in nums]
    return [
        Quantity(w or fallback, fallback, periods, claim_kind(n, text))
        for n, w in zip(nums, windows, strict=True)
    ], own or previous

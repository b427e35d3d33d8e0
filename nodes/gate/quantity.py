"""The claim side of binding: what quantity each number of a claim states.

A claim's number is a quantity: its metric words (what, and whose, where named), the claim's
periods (when), its unit kind and its value. The metric words of a number are those of its clause:
the words between the previous number and it; when that stretch holds none ("Margins were 5% and
6%"), the stretch before it, then the words after it up to the next number; a claim with no
metric words at all ("It rose to 9.6%") takes those of the sentence before. A table row's numbers
take their row's labels and their column header.

**Sign.** A number written without a sign states a positive value, unless its clause says the
value is negative in words (``states_negative``): a direction down ("fell 5%", "decreased by 5",
"5% lower"; not "fell to 3.2%", a level reached) or a quantity that is negative or shown negative
by convention ("a loss of 5", "net loss was 5", "cash used in ... was 5", "cost of sales was
5,000", 손실, 적자). So "Operating income was 5" is not backed by -5; "-5", "(5)" and △5 are
signed and checked as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .markdown import Unit
from .mentions import Mention
from .numbers import Num, counts_noun
from .words import metric_words

_NONE: frozenset[str] = frozenset()

#: A claim's unit kinds (``claim_kind``): what the number is, as written.
CLAIM_KINDS = ("percent", "x", "currency", "count", "plain")


class ClaimWords:
    """A claim's own metric words and what it passes to the next claim, read on first use:
    most claims bind on their clauses' words and never need the whole claim's."""

    __slots__ = ("_after", "_fallback", "_own", "previous", "text")

    def __init__(
        self, text: str, previous: ClaimWords | None, row_words: frozenset[str] | None = None
    ) -> None:
        #: The claim's text (``row_words``: a table row's label words, read already).
        self.text, self.previous, self._own = text, previous, row_words
        self._fallback: frozenset[str] | None = None
        self._after: frozenset[str] | None = None

    def own(self) -> frozenset[str]:
        own = self._own
        if own is None:
            own = self._own = metric_words(self.text)
        return own

    def before(self) -> frozenset[str]:
        """The previous claim's words (what it passes on)."""
        return self.previous.after() if self.previous is not None else _NONE

    def fallback(self) -> frozenset[str]:
        """The whole claim's words with the previous claim's."""
        got = self._fallback
        if got is None:
            got = self._fallback = self.own() | self.before()
        return got

    def after(self) -> frozenset[str]:
        """What the next claim takes as ``previous``: this claim's words, else the previous."""
        got = self._after
        if got is not None:
            return got
        # Walked back, not recursed: a long run of claims with no words of their own
        # ("5", "5", ...) passes on the words of the last claim that had some.
        chain: list[ClaimWords] = []
        node: ClaimWords | None = self
        while node is not None and node._after is None:
            chain.append(node)
            if node.own():
                break
            node = node.previous
        got = _NONE if node is None else node._after if node._after is not None else node.own()
        for claim in reversed(chain):
            got = claim._after = claim.own() or got
        return got


@dataclass(slots=True)
class Quantity:
    """One number of a claim as a quantity (the value itself is the ``Num``)."""

    words: frozenset[str]
    #: The claim's words: ``fallback`` (the whole claim's metric words with the previous
    #: claim's; a table row: its cell's with the sentence above the table) is tried when
    #: ``words`` match nothing at a place.
    claim: ClaimWords
    #: The claim's periods, each as the date keys that state it.
    periods: tuple[tuple[str, ...], ...]
    kind: str
    #: What the claim's words say of its numbers' signs (read only when a value is negative).
    signs: SignWords | None = None

    #: A table row's cell (its fallback is its own words with the previous claim's).
    cell: bool = False

    @property
    def fallback(self) -> frozenset[str]:
        return self.words | self.claim.before() if self.cell else self.claim.fallback()

    def negative_ok(self, num: Num) -> bool:
        """May ``num``, written without a sign, stand for a negative value?"""
        return self.signs is not None and self.signs.negative(num)


class SignWords:
    """Which numbers of one claim its words make negative (``states_negative``), read on the
    first question: most values a claim binds are positive and never ask."""

    __slots__ = ("_got", "headers", "nums", "text")

    def __init__(self, text: str, nums: list[Num], headers: list[str] | None = None) -> None:
        self.text, self.nums, self.headers = text, nums, headers
        self._got: dict[int, bool] | None = None

    def negative(self, num: Num) -> bool:
        got = self._got
        if got is None:
            got = self._got = self._read()
        return got.get(id(num), False)

    def _read(self) -> dict[int, bool]:
        text, nums = self.text, self.nums
        if self.headers is not None:  # a table row: its labels, then each cell's column header
            row = states_negative(text)
            return {
                id(n): row or states_negative(h) for n, h in zip(nums, self.headers, strict=True)
            }
        ordered = sorted(nums, key=lambda n: n.start)
        bounds = [0, *(n.end for n in ordered)]
        ends = [*(n.start for n in ordered[1:]), len(text)]
        out: dict[int, bool] = {}
        before_negative = False
        for i, n in enumerate(ordered):
            before = text[bounds[i] : n.start]
            says = states_negative(before, text[n.end : ends[i]])
            if not says and before_negative and i and not metric_words(before):
                # "fell by 12.6 million, or 22.2%": a stretch with no words of its own restates
                # the number before it (not "fell 5% to 3.2%": a level reached).
                says = _TO_END.search(before) is None
            before_negative = says
            out[id(n)] = says
        return out


#: Words that make a number's value negative, or shown negative by convention (a loss, a cost,
#: an outflow), wherever they sit in its clause.
_NEGATIVE_NOUNS = re.compile(
    r"\b(?:loss(?:es)?|deficits?|outflows?|negative|minus|shortfalls?|used|spent|paid|costs?"
    r"|expenses?|expenditures?|payments?|purchases?|repurchases?|repayments?|depreciation"
    r"|amorti[sz]ation|impairments?|write-?(?:downs?|offs?)|provisions?|tax(?:es)?|dividends?"
    r"|withdrawals?|deductions?|declines?|decreases?|drops?|falls?|reductions?|contractions?"
    r"|deficiency|overdraft)\b|손실|적자|비용|원가|감소|하락",
    re.I,
)
#: Verbs and adverbs of a fall: the number after them is its size ("fell 5%"), unless "to"
#: introduces it (the level reached: "fell to 3.2%").
_DOWN = re.compile(
    r"\b(?:fell|fall(?:s|ing)?|declin(?:ed|es|ing)|decreas(?:ed|es|ing)|dropp(?:ed|ing)"
    r"|down|lower(?:ed)?|reduc(?:ed|ing)|shr[au]nk|shrink(?:s|ing)?|contracted|slump(?:ed|s)?"
    r"|plung(?:ed|es)|tumbl(?:ed|es)|slid|sank|weaken(?:ed|s)|worsen(?:ed|s)|cut)\b",
    re.I,
)
_TO_END = re.compile(
    r"\bto(?:[ \t]+(?:about|around|approximately|nearly|roughly|some|just|an?|only))*"
    r"[ \t$€£¥₩]*$",
    re.I,
)
#: A fall stated after the number: "5% lower", "5 less than", "5% down", "(5% decline)".
_DOWN_AFTER = re.compile(
    r"^[ \t]*(?:(?:points?|pp|percentage points?|bps?|basis points?)[ \t]+)?"
    r"(?:lower|less|down|below|declines?|decreases?|drop|fall|loss)\b",
    re.I,
)


def states_negative(before: str, after: str = "") -> bool:
    """Does a number's clause (``before`` it, and ``after`` it up to the next number) say in
    words that its value is negative, or shown negative by convention?"""
    if _NEGATIVE_NOUNS.search(before):
        return True
    if _DOWN.search(before) and not _TO_END.search(before):
        return True
    return bool(after) and _DOWN_AFTER.match(after) is not None


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
    out: list[frozenset[str]] = []
    # The nearest stretch before with words (linear, not a walk back).
    last: frozenset[str] = frozenset()
    prev_end = 0
    count = len(nums)
    for i, n in enumerate(nums):
        left = metric_words(text[prev_end : n.start])
        prev_end = n.end
        if left:
            last = left
            out.append(left)
        elif last:
            out.append(last)
        else:
            nxt = nums[i + 1].start if i + 1 < count else len(text)
            out.append(metric_words(text[n.end : nxt]))
    return out


def quantities(
    unit: Unit, mentions: list[Mention], labels: list[str], previous: ClaimWords | None
) -> tuple[list[Quantity], ClaimWords]:
    """The quantity of each number mention of ``unit`` (in mention order) and the unit's own
    metric words (the next claim's ``previous``), read when first needed. ``labels`` are a
    table row's label cells."""
    # One pass over the mentions: the claim's periods, its numbers (and their mentions).
    period_list: list[tuple[str, ...]] = []
    nums: list[Num] = []
    cells: list[Mention] = []
    for m in mentions:
        kind = m.kind
        if kind == "number":
            if m.num is not None:
                nums.append(m.num)
                cells.append(m)
        elif kind == "date" and m.keys != ("asof",):
            period_list.append(m.keys)
    periods = tuple(period_list)
    if unit.cells is not None:
        row_words = metric_words(" ".join(labels))
        signs = SignWords(" ".join(labels), nums, [m.header for m in cells])
        row = ClaimWords("", previous, row_words)
        out = []
        for m, n in zip(cells, nums, strict=True):
            words = row_words | metric_words(m.header)
            out.append(Quantity(words, row, periods, claim_kind(n, ""), signs, True))
        return out, row
    text = unit.text
    claim = ClaimWords(text, previous)
    signs = SignWords(text, nums)
    if len(nums) == 1:  # the common case: its clause is all the text before it, or after it
        n = nums[0]
        words = metric_words(text[: n.start]) or metric_words(text[n.end :]) or claim.fallback()
        return [Quantity(words, claim, periods, claim_kind(n, text), signs)], claim
    in_order = True
    last_start = -1
    for n in nums:
        if n.start < last_start:
            in_order = False
            break
        last_start = n.start
    if in_order:
        windows = _windows(text, nums)
    else:
        ordered = sorted(nums, key=lambda n: n.start)
        by_id = dict(zip(map(id, ordered), _windows(text, ordered), strict=True))
        windows = [by_id[id(n)] for n in nums]
    return [
        Quantity(w or claim.fallback(), claim, periods, claim_kind(n, text), signs)
        for n, w in zip(nums, windows, strict=True)
    ], claim

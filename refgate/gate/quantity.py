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

**Direction.** A number a clause states as the size of a fall in direction words (``states_fall``:
"fell 5%", "5% lower", "a decline of 5%", "a 5% reduction", "The decline in revenue was 5%"; not
"fell to 95" or "down from 100", levels, nor a clause that also says "rose") is not backed by a positive value at a change place (``change_place``: a "% Change",
"Increase (decrease)", "2019 vs 2018" column, a "growth" row, a ``revenue_growth`` value) whose
labels do not state a direction or a sign convention of their own ("Decrease", "loss", "cost",
"favourable"): that place says the quantity rose. Nor is a number a sentence of a text states
as the size of a rise (``sentence_directions``: "Sales rose 12%"; not "rose to 12%") backed for a
claim that states it as a fall, nor one stated as a fall for a claim of a rise (``states_rise``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .dates import find_dates
from .markdown import Unit
from .mentions import Mention
from .numbers import Num, counts_noun, find_numbers
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

    def states_fall(self, num: Num) -> bool:
        """Does the clause state ``num``, written without a sign, as the size of a fall?"""
        return self.signs is not None and self.signs.falls(num)

    def states_rise(self, num: Num) -> bool:
        """Does the clause state ``num``, written without a sign, as the size of a rise?"""
        return self.signs is not None and self.signs.rises(num)


class SignWords:
    """Which numbers of one claim its words make negative (``states_negative``), read on the
    first question: most values a claim binds are positive and never ask."""

    __slots__ = ("_falls", "_got", "_rises", "headers", "nums", "text")

    def __init__(self, text: str, nums: list[Num], headers: list[str] | None = None) -> None:
        self.text, self.nums, self.headers = text, nums, headers
        self._got: dict[int, bool] | None = None
        self._falls: frozenset[int] | None = None
        self._rises: frozenset[int] | None = None

    def falls(self, num: Num) -> bool:
        """Is ``num`` the size of a fall (``states_fall``)? Asked only when a number binds a
        positive value at a change place, or at a sentence that states it as a rise."""
        got = self._falls
        if got is None:
            got = self._falls = self._read_sizes(states_fall)
        return id(num) in got

    def rises(self, num: Num) -> bool:
        """Is ``num`` the size of a rise (``states_rise``)? Asked only when a number binds a
        positive value at a sentence that states it as a fall."""
        got = self._rises
        if got is None:
            got = self._rises = self._read_sizes(states_rise)
        return id(num) in got

    def _read_sizes(self, says_size: Callable[[str, str], bool]) -> frozenset[int]:
        if self.headers is not None:  # a table row of the answer states no direction in verbs
            return frozenset()
        return frozenset(id(n) for n in _sizes(self.text, self.nums, says_size))

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
                says = _TO_END.search(before) is None and _UP.search(before) is None
            before_negative = says
            out[id(n)] = says
        return out


#: Nouns of a direction or a negative quantity ("Decrease", "Net loss", "Cash outflow").
_DIRECTION_NOUN_WORDS = (
    r"loss(?:es)?|deficits?|outflows?|negative|minus|shortfalls?|declines?|decreases?"
    r"|drops?|falls?|reductions?|contractions?|deficiency|overdraft"
)
_DIRECTION_NOUNS_KO = "손실|적자|감소|하락"
#: Nouns of a quantity shown negative by convention (a cost, a tax, cash used or paid).
_CONVENTION_NOUN_WORDS = (
    r"used|spent|paid|costs?|expenses?|expenditures?|payments?|purchases?|repurchases?"
    r"|repayments?|depreciation|amorti[sz]ation|impairments?|write-?(?:downs?|offs?)"
    r"|provisions?|tax(?:es)?|dividends?|withdrawals?|deductions?"
    # a roll-forward's outflows: awards forfeited, shares repurchased, options cancelled
    r"|forfeit(?:ed|ures?|s)?|repurchased|cancell?(?:ed|ations?)|expired|redeemed|retired"
)
#: Words that make a number's value negative, or shown negative by convention (a loss, a cost,
#: an outflow), wherever they sit in its clause.
_NEGATIVE_NOUNS = re.compile(
    rf"\b(?:{_DIRECTION_NOUN_WORDS}|{_CONVENTION_NOUN_WORDS})\b|{_DIRECTION_NOUNS_KO}|비용|원가",
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


def _stated_after(words: str) -> re.Pattern[str]:
    """A direction stated right after the number, after at most its points ("5 points lower")."""
    return re.compile(
        rf"^[ \t]*(?:(?:points?|pp|percentage points?|bps?|basis points?)[ \t]+)?(?:{words})\b",
        re.I,
    )


#: A fall stated after the number: "5% lower", "5 less than", "5% down", "(5% decline)", "a 5%
#: reduction".
_DOWN_AFTER = _stated_after(
    r"lower|less|down|below|declines?|decreases?|drops?|falls?|loss|reductions?|contractions?"
)
#: Nouns naming a change's direction, for ``_noun_states``.
_FALL_NOUN_WORDS = r"declines?|decreases?|drops?|falls?|reductions?|contractions?|downturns?"
_RISE_NOUN_WORDS = r"increases?|rises?|growth|gains?|improvements?|expansions?|jumps?|upturns?"
_HEDGES = r"(?:[ \t]+(?:about|around|approximately|nearly|roughly|some|just|only|almost))*"
_PREDICATE_END = rf"(?:was|were|is|are|amounted[ \t]+to|totall?ed|came[ \t]+to){_HEDGES}"


def _noun_sizes(nouns: str) -> re.Pattern[str]:
    """A change stated with a noun, right before its size: "a decline of 5%", "a drop of about
    $2 million", and as the subject of the clause that states it, "The decline in revenue (net)
    was 5%" (up to 120 characters, within one sentence)."""
    return re.compile(
        rf"\b(?:{nouns})[ \t]+(?:(?:of|by){_HEDGES}"
        rf"|(?:in|of)\b(?:[^;!?.]|\.(?![ \t]+[A-Z])){{0,120}}?\b{_PREDICATE_END})[ \t$€£¥₩]*$",
        re.I,
    )


_FALL_NOUN_SIZE = _noun_sizes(_FALL_NOUN_WORDS)
_RISE_NOUN_SIZE = _noun_sizes(_RISE_NOUN_WORDS)


#: Words of a rise: a clause holding one states no fall ("despite lower prices, sales rose 5%").
_UP = re.compile(
    r"\b(?:r[oi]se|rises|rising|gr[eo]w|grows|growing|increas(?:e|ed|es|ing)|up|higher"
    r"|gain(?:ed|s)?|climb(?:ed|s)?|jump(?:ed|s)?|surg(?:e|ed|es)|improv(?:e|ed|es)"
    r"|expand(?:ed|s)?|advanc(?:e|ed))\b",
    re.I,
)
#: A rise stated after the number: "5% higher", "5 more than", "5% up", "5% growth".
_UP_AFTER = _stated_after(r"higher|more|up|above|increases?|rises?|gains?|growth|improvements?")
#: Any word of a direction: a sentence without one states none (``sentence_directions``).
_ANY_DIRECTION = re.compile(
    rf"{_UP.pattern}|{_DOWN.pattern}|\b(?:{_FALL_NOUN_WORDS}|{_RISE_NOUN_WORDS})\b", re.I
)
#: Rise words that state no rise of a quantity: "made up of", "set up", "build-up".
_NOT_A_RISE = re.compile(
    r"\b(?:made|make|makes|set|sets|pick(?:ed)?|build|built|follow(?:ed)?|sign(?:ed)?|start)"
    r"[ -]up\b|\bup[ -]?front\b",
    re.I,
)
#: Fall words that state no fall of a quantity: "broken down by", "write-down", "the lower of".
_NOT_A_FALL = re.compile(
    r"\b(?:broken|writ(?:e|ten)|mark(?:ed)?|shut|step(?:ped)?|top|trickle|drill)[ -]down\b"
    r"|\bdown[ -]?payments?\b|\blower[ -]of\b|\bcut-?offs?\b",
    re.I,
)
#: A predicate of its own between a fall word and the number: the number is not the fall's.
_PREDICATE = re.compile(
    r"\b(?:was|were|is|are|has|have|had|be|been|stood|reached|totall?ed|amounted|represented)\b",
    re.I,
)
#: A level the change started from: "down from 100".
_FROM_END = re.compile(r"\bfrom[ \t$€£¥₩]*$", re.I)
#: A stretch that restates the number before it: ", or ", " (", " million, or ".
_RESTATES = re.compile(
    r"^[ \t]*(?:(?:million|billion|thousand|bn|m|k)\b)?[ \t]*[,(]?[ \t]*(?:or)?[ \t(]*$", re.I
)


@dataclass(frozen=True)
class _Direction:
    """The words that state a change of one direction (a fall, a rise) as the number's size."""

    #: Verbs and adverbs: "fell", "rose"; the last one before the number states its size.
    words: re.Pattern[str]
    #: A noun right before the size: "a decline of 5%", "The growth in X was 5%".
    noun_size: re.Pattern[str]
    #: The other direction's noun before the size: then the clause states both, neither wins.
    other_noun_size: re.Pattern[str]
    #: A word right after the number: "5% lower", "5% higher".
    after: re.Pattern[str]


_FALL = _Direction(
    words=_DOWN, noun_size=_FALL_NOUN_SIZE, other_noun_size=_RISE_NOUN_SIZE, after=_DOWN_AFTER
)
_RISE = _Direction(
    words=_UP, noun_size=_RISE_NOUN_SIZE, other_noun_size=_FALL_NOUN_SIZE, after=_UP_AFTER
)


def _states_size(direction: _Direction, text: str, before: str, after: str) -> bool:
    """The rule ``states_fall`` and ``states_rise`` share: ``text`` is the clause before the
    number (``before``) without the words that state no change of ``direction``. A noun of the
    size says so; else the last direction word does, unless another predicate comes between
    ("after costs were cut, revenue was 5%") or the number is a level ("fell to 95", "down from
    100"); else a direction word right after the number."""
    if direction.noun_size.search(text):
        return not direction.other_noun_size.search(text)
    found = list(direction.words.finditer(text))
    if found and _PREDICATE.search(text, found[-1].end()) is None:
        return not _TO_END.search(before) and not _FROM_END.search(before)
    return bool(after) and direction.after.match(after) is not None


def states_fall(before: str, after: str = "") -> bool:
    """Does a number's clause say in direction words that it is the size of a fall ("fell 5%",
    "5% lower"; not "fell to 95", "down from 100", nor a clause that also states a rise)?"""
    if _UP.search(before) and _UP.search(_SIGNED_PAIR.sub("", before)):
        return False
    return _states_size(_FALL, _NOT_A_FALL.sub(" ", before), before, after)


def states_rise(before: str, after: str = "") -> bool:
    """``states_fall``'s mirror: is a number the size of a rise ("rose 12%", "5% higher"; not
    "rose to 12%" or "up from 100", levels, nor in a clause that also states a fall)?"""
    if _DOWN.search(before) and _DOWN.search(_NOT_A_FALL.sub(" ", _SIGNED_PAIR.sub("", before))):
        return False
    return _states_size(_RISE, _NOT_A_RISE.sub(" ", _SIGNED_PAIR.sub(" ", before)), before, after)


def _sizes(text: str, nums: list[Num], says_size: Callable[[str, str], bool]) -> list[Num]:
    """The numbers of ``text`` that its words state as the size of a change (``says_size``:
    ``states_fall`` or ``states_rise``), each read in the stretch since the number before it;
    a stretch with no words of its own restates the one before ("rose 5, or 2%")."""
    ordered = sorted(nums, key=lambda n: n.start)
    out: list[Num] = []
    prev_end, prev_says = 0, False
    for i, n in enumerate(ordered):
        before = text[prev_end : n.start]
        after = text[n.end : ordered[i + 1].start if i + 1 < len(ordered) else len(text)]
        says = says_size(before, after) or (prev_says and _RESTATES.match(before) is not None)
        if says:
            out.append(n)
        prev_end, prev_says = n.end, says
    return out


#: ``sentence_directions``: the size of a rise, of a fall.
RISE, FALL = 1, -1


def sentence_directions(sentence: str) -> dict[str, int]:
    """The numbers a sentence of a text states as the size of a rise (``RISE``) or a fall
    (``FALL``), by their text as the index keeps it; a number it states as both, or whose text
    it also states with no direction or the other one, is left out (a sentence place's
    direction, read once per place when a number binds a positive value there)."""
    if _ANY_DIRECTION.search(sentence) is None:
        return {}
    dms = find_dates(sentence)
    nums = find_numbers(sentence, [(d.start, d.end) for d in dms] if dms else None)
    rises = {id(n) for n in _sizes(sentence, nums, states_rise)}
    falls = {id(n) for n in _sizes(sentence, nums, states_fall)}
    out: dict[str, int] = {}
    for n in nums:
        key, d = n.text.strip(), (id(n) in rises) - (id(n) in falls)
        out[key] = d if out.get(key, d) == d else 0
    return {k: v for k, v in out.items() if v}


def states_negative(before: str, after: str = "") -> bool:
    """Does a number's clause (``before`` it, and ``after`` it up to the next number) say in
    words that its value is negative, or shown negative by convention? Not when it states the
    number as the size of a rise ("Cost of sales rose 14.3%" is no -14.3). A number that opens
    its clause takes the words after it ("140,687 shares were forfeited")."""
    nouns = list(_NEGATIVE_NOUNS.finditer(before)) if _NEGATIVE_NOUNS.search(before) else []
    last = nouns[-1] if nouns else None
    if last is not None or (after and not metric_words(before) and _NEGATIVE_NOUNS.search(after)):
        # the verb after the label's words: "Decreases for tax positions rose 242" is no fall
        tail = before[last.end() :] if last is not None else before
        return not states_rise(tail, after)
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


#: A label of a change (``change_place``): a column headed "Change", "% Change", "Increase
#: (Decrease)", "Variance", "2019 vs. 2018", "YoY"; a value named ``revenue_growth``.
_CHANGE_WORDS = re.compile(
    r"\b(?:chang(?:e|es|ed)|chg|growth|increases?|variances?|variations?|differences?|diff"
    r"|vs\.?|versus|yoy|y/y|qoq|q/q|year-over-year|year-on-year|period-to-period|delta)\b"
    r"|증감률?|증가율|성장률|변동률",
    re.I,
)
#: A row label is a change only when it says so of its own quantity ("Total growth", "Net
#: increase (decrease) in cash", "Revenue change (%)"); "Change in working capital" or "Effect
#: of exchange rate changes" follow a cash-flow or reconciliation convention instead.
_CHANGE_ROW = re.compile(
    r"\b(?:growth|increase[ \t]*(?:/[ \t]*)?\([ \t]*decrease[ \t]*\)|(?:%|percent(?:age)?)"
    r"[ \t]+change|change[ \t]*\([ \t]*%[ \t]*\))"
    r"|^[ \t]*[$%]?[ \t]*changes?[ \t]*(?:\(?[$%]\)?)?[ \t]*$",
    re.I,
)
#: Both directions named as one signed change: "Increase (decrease)", "increase/(decrease)".
_SIGNED_PAIR = re.compile(
    r"\bincreases?[ \t]*(?:/|or|and)?[ \t]*\(?[ \t]*decreases?[ \t]*\)?"
    r"|\(?decreases?\)?[ \t]*(?:/|or|and)?[ \t]*increases?\b",
    re.I,
)
#: Labels that state a direction or a sign convention of their own ("Decrease", "Decline (%)",
#: "Favourable (unfavourable)", "Effect of ...", a rate assumed): not a plain signed change.
_OWN_DIRECTION = re.compile(
    r"\b(?:fav(?:ou?rable)?|unfav(?:ou?rable)?|adverse|better|worse|effects?|impacts?|rate of"
    r"|expected|assum\w*|improvements?|deteriorations?)\b",
    re.I,
)


#: A label that may name a change, lower-cased (``change_place`` reads the others no further;
#: a case-sensitive search of the lower-cased text is ten times quicker than an ignore-case one).
_MAY_CHANGE = re.compile(
    r"chang|chg|growth|increase|varia|diff|vs|yo|y/|q/|year-o|period-to|delta|증감|증가율|성장률|변동률"
)
#: ``_DIRECTION_NOUN_WORDS`` as a pattern.
_DIRECTION_NOUNS = re.compile(rf"\b(?:{_DIRECTION_NOUN_WORDS})\b|{_DIRECTION_NOUNS_KO}", re.I)
#: ``change_place``: not a change; a change; a change when its row shows no negative value
#: (a cost or a tax, which some tables show negative, so that a fall is a positive change).
NOT_CHANGE, CHANGE, CHANGE_IF_UNSIGNED_ROW = 0, 1, 2


def may_change(label: str) -> bool:
    """May ``label`` name a change (``change_place`` reads the others no further)?"""
    return _MAY_CHANGE.search(label.lower()) is not None


def change_place(row: str, column: str = "", *, named: bool = False) -> int:
    """Is a place a change whose sign is its direction (a positive value: a rise), with no
    direction or sign convention of its own? ``row``: a table row's label, or a value's name
    (``named``); ``column``: the column header, or the value's description."""
    if not may_change(row) and not may_change(column):
        return NOT_CHANGE  # most places: one quick look
    row, column = row.replace("_", " "), column.replace("_", " ")
    signed = _SIGNED_PAIR.sub(" change ", f"{row} {column}")
    if _DIRECTION_NOUNS.search(signed) or _DOWN.search(signed) or _OWN_DIRECTION.search(signed):
        return NOT_CHANGE
    # A column header (a value's name or description) names a change in any words; a row
    # label only as ``_CHANGE_ROW`` does.
    heading = _SIGNED_PAIR.sub(" change ", f"{row} {column}" if named else column)
    if _CHANGE_WORDS.search(heading) is None and _CHANGE_ROW.search(row) is None:
        return NOT_CHANGE
    # A cost, a tax, cash used: shown negative by convention in some tables.
    return CHANGE_IF_UNSIGNED_ROW if _NEGATIVE_NOUNS.search(signed) else CHANGE

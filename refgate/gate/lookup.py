"""What one cited ref can support, for the GATE: a ``RefIndex`` of its numbers, dates and labels.

Numbers go into sorted arrays of magnitudes (absolute value, value as displayed in the ref's own
scale, percent points, multiples), so a claim is looked up by bisection within its rounding
interval instead of being compared with every value. ``index.build_index`` fills one from a
ref's payload.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache

from refgate.refs import Ref

from .dates import date_keys_frozen, find_dates
from .numbers import counts_noun, find_numbers
from .units import Unit

_ASCII_DIGIT = re.compile(r"[0-9]")


#: Where a value sits, as a string or as a ``(format, *args)`` tuple (``where_text``).
Where = str | tuple[object, ...]


def where_text(where: Where) -> str:
    """A value's location: given as a string or as a ``(format, *args)`` tuple, formatted only
    when the value supports or nearly supports a claim (most values never do)."""
    if isinstance(where, tuple):
        return str(where[0]).format(*where[1:])
    return where


#: One number in a ref: ``(value as displayed, unit kind, scale, currency, where, place)``;
#: ``place`` indexes ``RefIndex.places`` (-1: none), see ``Place``.
Item = tuple[float, str, float, str, Where, int]


#: ``Item[5]`` packs a row-like place and a column: ``row * PLACE_COLS + column``.
PLACE_COLS = 1 << 12
#: The column part of a place with no column (a named value, a sentence).
NO_COL = PLACE_COLS - 1
#: ``Item[5]`` of a valueRef's value: its place is made from the ref when first needed.
VALUE_PLACE = -2


@dataclass(slots=True)
class Place:
    """Where a value sits in a ref's payload: a table cell (its row label, section and column
    header), a named value (its name) or a sentence of a text. The GATE binds a claim's number
    to one place and checks the claim's metric words, period and unit kind against it."""

    #: How the place is named in a verdict ("Cost of sales, 2019", "unemployment_rate").
    label: str
    #: The place's own label: a row label, a value name (its words must be named by a claim
    #: that is about exactly this quantity).
    core: str = ""
    #: Other words that describe it: a section row, a column header, a description, a sentence.
    context: str = ""
    #: Date keys of its own period (a period column, the row's period cell, the ref's period).
    periods: frozenset[str] = frozenset()
    #: A unit kind its labels state ("percent" for a row "Margin (%)"; "" for none).
    hint: str = ""
    #: The place's value name in the workspace vocabulary (dataset column names), if any.
    name: str = ""
    #: Computed from a dataset (False: a literal in code, or a call that read no dataset).
    computed: bool = True


class _Arr:
    """Values of one basis (absolute, as displayed, percent points, multiples) sorted by
    magnitude, as ``(canonical value, item)`` pairs with their magnitudes in ``keys``."""

    __slots__ = ("entries", "keys")

    def __init__(self, entries: list[tuple[float, Item]]) -> None:
        keys = [abs(t[0]) for t in entries]
        if len(entries) > 1:
            # A stable sort by magnitude (ties keep payload order), keyed without a Python call.
            order = sorted(range(len(keys)), key=keys.__getitem__)
            entries = [entries[i] for i in order]
            keys = [keys[i] for i in order]
        self.entries = entries
        self.keys = keys

    def find(self, target: float, tol: float) -> list[tuple[float, Item]]:
        keys = self.keys
        a = abs(target)
        lo = bisect_left(keys, a - tol)
        hi = bisect_right(keys, a + tol, lo)
        return self.entries[lo:hi]

    def nearest(self, target: float) -> tuple[float, Item] | None:
        if not self.keys:
            return None
        i = bisect_left(self.keys, abs(target))
        best = [j for j in (i - 1, i) if 0 <= j < len(self.keys)]
        return min((self.entries[j] for j in best), key=lambda t: abs(abs(t[0]) - abs(target)))


class Basis(IntEnum):
    """What a claim's number is compared with: each value of a ref on one basis (its canonical
    value there), or not at all when its unit kind has no value on that basis.

    - ``ABSOLUTE``: an amount, count or unitless number times its scale (a claim with a scale
      word, "$4.5 billion", or a bare one read in absolute terms);
    - ``DISPLAYED``: any value as the ref shows it, in its own scale (a bare claim "1,496.5"
      against a table in millions);
    - ``PERCENT_POINTS``: a percent or unitless value as is, a ratio times 100, basis points over
      100 (a claim "5%", "45 bp");
    - ``MULTIPLE``: a multiple or unitless value (a claim "2.3x")."""

    ABSOLUTE = 0
    DISPLAYED = 1
    PERCENT_POINTS = 2
    MULTIPLE = 3


#: Item kinds compared in absolute terms: amounts, counts and unitless numbers.
_AMOUNT_KINDS = frozenset({"plain", "none", "count"})


def on_basis(item: Item, basis: Basis) -> float | None:
    """The canonical value of ``item`` on ``basis`` (see ``Basis``), or None."""
    val, kind = item[0], item[1]
    if basis == Basis.ABSOLUTE:
        return val * item[2] if kind in _AMOUNT_KINDS else None
    if basis == Basis.DISPLAYED:
        return val
    if basis == Basis.PERCENT_POINTS:
        if kind == "none" or kind == "percent":
            return val
        if kind == "ratio":
            return val * 100.0
        return val / 100.0 if kind == "bp" else None
    return val if kind == "none" or kind == "x" else None


def _basis_array(items: list[Item], basis: Basis) -> _Arr:
    out = []
    for it in items:
        canon = on_basis(it, basis)
        if canon is not None:
            out.append((canon, it))
    return _Arr(out)


class RefIndex:
    """What one ref can support. Numbers are kept as items in payload order; each basis array
    (``array``, one per ``Basis``) is built and sorted on its first lookup (most arrays of a
    ref are never looked up: a percent claim only reads ``PERCENT_POINTS``)."""

    __slots__ = (
        "_arrays", "dates", "doc_names", "doc_text", "items", "labels",
        "columns", "places", "ref", "value_places", "_values", "bound", "_secondary", "readings",
        "facts",
    )  # fmt: skip

    def __init__(self, ref: Ref) -> None:
        self.ref = ref
        self.items: list[Item] = []
        self.dates: set[str] = set()
        self.labels: list[str] = []
        #: Where its numbers sit: ``Item[5]`` is ``row * PLACE_COLS + column`` over these rows
        #: (a table row, a named value, a sentence) and columns (a table's columns).
        self.places: list[Place] = []
        self.columns: list[Place] = []
        #: A valueRef's places by value name, made on first use by this function of the ref.
        self.value_places: Callable[[Ref], dict[str, Place]] | None = None
        self._values: dict[str, Place] | None = None
        #: Documentation refs: the names a claim about them uses (capability, its parameters,
        #: skill id and title) and their text, lower-cased.
        self.doc_names: tuple[str, ...] = ()
        self.doc_text = ""
        #: The sorted arrays, one per ``Basis``, built on first lookup; shared with ``twin``s.
        self._arrays: list[_Arr | None] = [None, None, None, None]
        #: The binder's record of this ref's places (``binding``), made on first use.
        self.bound: object = None
        self._secondary: bool | None = None
        #: The binder's records of these places, one per vocabulary, shared with ``twin``s (they
        #: depend on the payload and the vocabulary only).
        self.readings: dict[object, object] = {}
        #: A valueRef's own period, whether it was computed from data, and the names its code
        #: wrote as literals (``index.value_facts``), read when it is indexed.
        self.facts: tuple[frozenset[str], bool, frozenset[str]] | None = None

    @property
    def secondary(self) -> bool:
        """Not primary evidence for a number (``Ref.is_secondary``: web pages, model output)."""
        s = self._secondary
        if s is None:
            s = self._secondary = self.ref.is_secondary
        return s

    def twin(self, ref: Ref) -> RefIndex:
        """This index for ``ref``, a ref of the same kind and payload: the indexed content (never
        changed once indexed), the sorted arrays and the binder's readings are shared."""
        t = RefIndex.__new__(RefIndex)
        t.ref = ref
        t.items, t.dates, t.labels = self.items, self.dates, self.labels
        t.places, t.columns, t.value_places = self.places, self.columns, self.value_places
        t.doc_names, t.doc_text, t._arrays = self.doc_names, self.doc_text, self._arrays
        t.readings, t.facts = self.readings, self.facts
        t._values = t.bound = t._secondary = None
        return t

    def array(self, basis: Basis) -> _Arr:
        """Its values on ``basis``, sorted by magnitude (built on first use)."""
        a = self._arrays[basis]
        if a is None:
            a = self._arrays[basis] = _basis_array(self.items, basis)
        return a

    def add_place(self, place: Place) -> int:
        """Add a row-like place (no column); returns the ``Item[5]`` key of its numbers."""
        self.places.append(place)
        return (len(self.places) - 1) * PLACE_COLS + NO_COL

    def place_of(self, item: Item) -> tuple[Place, Place | None] | None:
        """The row-like place and the column (if any) of an item."""
        key = item[5]
        if key == VALUE_PLACE:
            if self._values is None:
                assert self.value_places is not None  # set with its first VALUE_PLACE item
                self._values = self.value_places(self.ref)
            where = item[4]
            place = self._values.get(str(where[1])) if type(where) is tuple else None
            return (place, None) if place is not None else None
        if key < 0:
            return None
        row, col = divmod(key, PLACE_COLS)
        return self.places[row], (self.columns[col] if col != NO_COL else None)

    def add_text(
        self, text: str, base: Unit, where: str, *where_args: object, place: int = -1
    ) -> frozenset[str]:
        """Numbers and dates stated in a string (a table cell, an excerpt). ``where`` names the
        field, as a format string filled with ``where_args`` only when shown; ``place`` is the
        ``Place`` the string's numbers sit at. A plain number followed by a noun ("5 members")
        is a count. Returns the string's date keys."""
        if not (_ASCII_DIGIT.search(text) if text.isascii() else any(c.isdigit() for c in text)):
            return frozenset()
        dates, nums = _scan_text(text) if len(text) <= _SCAN_CACHE_MAX else _scan(text)
        if dates:
            self.dates.update(dates)
        items = self.items
        fmt = where + "={}"
        for shown, kind, scale, has_scale, currency, ntext, noun in nums:
            if shown - shown != 0.0:  # not finite (inf - inf and nan - nan are nan)
                continue
            where_t = (fmt, *where_args, ntext)
            if kind == "percent" or kind == "bp" or kind == "x":
                items.append((shown, kind, 1.0, "", where_t, place))
            elif has_scale:
                cur = currency or base.currency
                items.append((shown, "plain", scale, cur, where_t, place))
            else:
                cur = currency or base.currency
                k = "count" if noun and not cur and base.kind == "none" else base.kind
                items.append((shown, k, base.scale, cur, where_t, place))
        return dates


#: What a ref string states: its expanded date keys and its numbers as
#: ``(shown, kind, scale, has_scale, currency, text, counted noun)``.
Scan = tuple[frozenset[str], tuple[tuple[float, str, float, bool, str, str, bool], ...]]
#: Ref strings up to this length (table cells, short values) are scanned once per process: the
#: same ledger is checked again after each answer block. Longer ones (excerpts) are not kept.
_SCAN_CACHE_MAX = 200


def _scan(text: str) -> Scan:
    dms = find_dates(text)
    dates: set[str] = set()
    for dm in dms:
        for key in dm.keys:
            dates.update(date_keys_frozen(key) or (key,))
    nums = tuple(
        (n.shown, n.kind, n.scale, n.has_scale, n.currency, n.text.strip(), counts_noun(text, n))
        for n in find_numbers(text, [(d.start, d.end) for d in dms] if dms else None)
    )
    return frozenset(dates), nums


_scan_text = lru_cache(maxsize=16384)(_scan)

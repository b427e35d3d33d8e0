"""What one cited ref can support, for the GATE: a ``RefIndex`` of its numbers, dates and labels.

Numbers go into sorted arrays of magnitudes (absolute value, value as displayed in the ref's own
scale, percent points, multiples), so a claim is looked up by bisection within its rounding
interval instead of being compared with every value. ``index.build_index`` fills one from a
ref's payload.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from refgate.refs import Ref

from .dates import date_keys_frozen, find_dates
from .numbers import counts_noun, find_numbers
from .units import Unit

_ASCII_DIGIT = re.compile(r"[0-9]")


def where_text(where: str | tuple[Any, ...]) -> str:
    """A value's location: given as a string or as a ``(format, *args)`` tuple, formatted only
    when the value supports or nearly supports a claim (most values never do)."""
    if isinstance(where, tuple):
        return str(where[0]).format(*where[1:])
    return where


#: One number in a ref: ``(value as displayed, unit kind, scale, currency, where, place)``;
#: ``place`` indexes ``RefIndex.places`` (-1: none), see ``Place``.
Item = tuple[float, str, float, str, Any, int]


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


#: Item kinds compared in absolute terms: amounts, counts and unitless numbers.
_AMOUNT_KINDS = frozenset({"plain", "none", "count"})


def _abs_arr(items: list[Item]) -> _Arr:
    return _Arr([(it[0] * it[2], it) for it in items if it[1] in _AMOUNT_KINDS])


def _disp_arr(items: list[Item]) -> _Arr:
    return _Arr([(it[0], it) for it in items])


def _pct_arr(items: list[Item]) -> _Arr:
    out = []
    for it in items:
        k = it[1]
        if k == "none" or k == "percent":
            out.append((it[0], it))
        elif k == "ratio":
            out.append((it[0] * 100.0, it))
        elif k == "bp":
            out.append((it[0] / 100.0, it))
    return _Arr(out)


def _x_arr(items: list[Item]) -> _Arr:
    return _Arr([(it[0], it) for it in items if it[1] == "none" or it[1] == "x"])


class RefIndex:
    """What one ref can support. Numbers are kept as items in payload order; each basis array
    (``abs``, ``disp``, ``pct``, ``x``) is built and sorted on its first lookup (most arrays of a
    ref are never looked up: a percent claim only reads ``pct``)."""

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
        self.value_places: Any = None
        self._values: dict[str, Place] | None = None
        #: Documentation refs: the names a claim about them uses (capability, its parameters,
        #: skill id and title) and their text, lower-cased.
        self.doc_names: tuple[str, ...] = ()
        self.doc_text = ""
        #: The sorted arrays (abs, disp, pct, x), built on first lookup; shared with ``twin``s.
        self._arrays: list[_Arr | None] = [None, None, None, None]
        #: The binder's record of this ref's places (``binding``), made on first use.
        self.bound: Any = None
        self._secondary: bool | None = None
        #: The binder's records of these places, one per vocabulary, shared with ``twin``s (they
        #: depend on the payload and the vocabulary only).
        self.readings: dict[object, Any] = {}
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

    @property
    def abs(self) -> _Arr:
        a = self._arrays[0]
        if a is None:
            a = self._arrays[0] = _abs_arr(self.items)
        return a

    @property
    def disp(self) -> _Arr:
        a = self._arrays[1]
        if a is None:
            a = self._arrays[1] = _disp_arr(self.items)
        return a

    @property
    def pct(self) -> _Arr:
        a = self._arrays[2]
        if a is None:
            a = self._arrays[2] = _pct_arr(self.items)
        return a

    @property
    def x(self) -> _Arr:
        a = self._arrays[3]
        if a is None:
            a = self._arrays[3] = _x_arr(self.items)
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
                self._values = self.value_places(self.ref)
            where = item[4]
            place = self._values.get(str(where[1])) if type(where) is tuple else None
            return (place, None) if place is not None else None
        if key < 0:
            return None
        row, col = divmod(key, PLACE_COLS)
        return self.places[row], (self.columns[col] if col != NO_COL else None)

    def add_text(
        self, text: str, base: Unit, where: str, *where_args: Any, place: int = -1
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

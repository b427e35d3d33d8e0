"""What one cited ref can support, for the GATE: a ``RefIndex`` of its numbers, dates and labels.

Numbers go into sorted arrays of magnitudes (absolute value, value as displayed in the ref's own
scale, percent points, multiples), so a claim is looked up by bisection within its rounding
interval instead of being compared with every value. ``index.build_index`` fills one from a
ref's payload.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import Any

from refgate.refs import Ref

from .dates import date_keys_frozen, find_dates
from .numbers import find_numbers
from .units import Unit

_ASCII_DIGIT = re.compile(r"[0-9]")


def where_text(where: str | tuple[Any, ...]) -> str:
    """A value's location: given as a string or as a ``(format, *args)`` tuple, formatted only
    when the value supports or nearly supports a claim (most values never do)."""
    if type(where) is tuple:
        return where[0].format(*where[1:])
    return where  # type: ignore[return-value]


#: One number in a ref: ``(value as displayed, unit kind, scale, currency, where)``.
Item = tuple[float, str, float, str, Any]


def _magnitude(t: tuple[float, Item]) -> float:
    return abs(t[0])


class _Arr:
    """Values of one basis (absolute, as displayed, percent points, multiples) sorted by
    magnitude, as ``(canonical value, item)`` pairs with their magnitudes in ``keys``."""

    __slots__ = ("entries", "keys")

    def __init__(self, entries: list[tuple[float, Item]]) -> None:
        if len(entries) > 1:
            entries.sort(key=_magnitude)
        self.entries = entries
        self.keys = [abs(t[0]) for t in entries]

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


def _abs_arr(items: list[Item]) -> _Arr:
    return _Arr([(it[0] * it[2], it) for it in items if it[1] == "plain" or it[1] == "none"])


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
        "_abs", "_disp", "_pct", "_x", "dates", "doc_names", "doc_text", "items", "labels", "ref",
    )  # fmt: skip

    def __init__(self, ref: Ref) -> None:
        self.ref = ref
        self.items: list[Item] = []
        self.dates: set[str] = set()
        self.labels: list[str] = []
        #: Documentation refs: the names a claim about them uses (capability, its parameters,
        #: skill id and title) and their text, lower-cased.
        self.doc_names: tuple[str, ...] = ()
        self.doc_text = ""
        self._abs = self._disp = self._pct = self._x = None

    @property
    def secondary(self) -> bool:
        """Not primary evidence for a number (``Ref.is_secondary``: web pages, model output)."""
        return self.ref.is_secondary

    @property
    def abs(self) -> _Arr:
        a = self._abs
        if a is None:
            a = self._abs = _abs_arr(self.items)
        return a

    @property
    def disp(self) -> _Arr:
        a = self._disp
        if a is None:
            a = self._disp = _disp_arr(self.items)
        return a

    @property
    def pct(self) -> _Arr:
        a = self._pct
        if a is None:
            a = self._pct = _pct_arr(self.items)
        return a

    @property
    def x(self) -> _Arr:
        a = self._x
        if a is None:
            a = self._x = _x_arr(self.items)
        return a

    def add_number(self, value: float, unit: Unit, where: str | tuple[Any, ...]) -> None:
        self._add(value, unit.kind, unit.scale, unit.currency, where)

    def _add(
        self, value: float, k: str, scale: float, currency: str, where: str | tuple[Any, ...]
    ) -> None:
        if value - value == 0.0:  # finite (inf - inf and nan - nan are nan)
            self.items.append((value, k, scale, currency, where))

    def add_text(self, text: str, base: Unit, where: str, *where_args: Any) -> None:
        """Numbers and dates stated in a string (a table cell, an excerpt). ``where`` names the
        field, as a format string filled with ``where_args`` only when shown."""
        if not (_ASCII_DIGIT.search(text) if text.isascii() else any(c.isdigit() for c in text)):
            return
        dates, nums = _scan_text(text) if len(text) <= _SCAN_CACHE_MAX else _scan(text)
        if dates:
            self.dates.update(dates)
        items = self.items
        fmt = where + "={}"
        for shown, kind, scale, has_scale, currency, ntext in nums:
            if shown - shown != 0.0:  # not finite (inf - inf and nan - nan are nan)
                continue
            if kind == "percent" or kind == "bp" or kind == "x":
                items.append((shown, kind, 1.0, "", (fmt, *where_args, ntext)))
            elif has_scale:
                cur = currency or base.currency
                items.append((shown, "plain", scale, cur, (fmt, *where_args, ntext)))
            else:
                cur = currency or base.currency
                items.append((shown, base.kind, base.scale, cur, (fmt, *where_args, ntext)))


#: What a ref string states: its expanded date keys and its numbers as
#: ``(shown, kind, scale, has_scale, currency, text)``.
Scan = tuple[frozenset[str], tuple[tuple[float, str, float, bool, str, str], ...]]
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
        (n.shown, n.kind, n.scale, n.has_scale, n.currency, n.text.strip())
        for n in find_numbers(text, [(d.start, d.end) for d in dms] if dms else None)
    )
    return frozenset(dates), nums


_scan_text = lru_cache(maxsize=16384)(_scan)

"""Number matching for the GATE: a claim's number against the values of the refs it cites.

A number is supported when a cited ref holds a value within half a unit of its last shown place,
on the claim's basis (absolute, as displayed, percent points, multiple); see the package docstring.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Container, Iterator

from .findings import Match
from .index import NUMERIC_KINDS
from .lookup import Item, RefIndex, _Arr, where_text
from .numbers import Num

_EPS = 1e-14  # float slack, relative; far below any shown precision


def _targets(num: Num, idx: RefIndex) -> Iterator[tuple[_Arr, float, float, str]]:
    v, step = num.shown, num.step
    if num.kind == "percent":
        yield idx.pct, v, 0.5 * step, "percent"
    elif num.kind == "bp":
        yield idx.pct, v / 100.0, 0.5 * step / 100.0, "bp"
    elif num.kind == "x":
        yield idx.x, v, 0.5 * step, "multiple"
    elif num.has_scale:
        yield idx.abs, v * num.scale, 0.5 * step * num.scale, "absolute"
    else:
        yield idx.abs, v, 0.5 * step, "absolute"
        yield idx.disp, v, 0.5 * step, "as displayed"


#: Refs with at most this many numbers are matched by a linear scan of their items; larger ones
#: by bisection in sorted per-basis arrays (built on first use). Both find the same value: the
#: smallest magnitude within the rounding interval, first in payload order on ties.
_LINEAR_MAX = 16


def match_number(
    num: Num, indexes: list[RefIndex], kinds: frozenset[str] = NUMERIC_KINDS
) -> list[Match]:
    matches: list[Match] = []
    signed, currency = num.signed, num.currency
    kind, v, half = num.kind, num.shown, 0.5 * num.step
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        items = idx.items
        linear = len(items) <= _LINEAR_MAX
        # The bases of _targets, inline (the second, "as displayed", only when the first misses).
        for b in (0, 1):
            if kind == "percent":
                if b:
                    break
                basis_id, target, tol, basis = 2, v, half, "percent"
            elif kind == "bp":
                if b:
                    break
                basis_id, target, tol, basis = 2, v / 100.0, half / 100.0, "bp"
            elif kind == "x":
                if b:
                    break
                basis_id, target, tol, basis = 3, v, half, "multiple"
            elif num.has_scale:
                if b:
                    break
                basis_id, target, tol = 0, v * num.scale, half * num.scale
                basis = "absolute"
            elif b:
                basis_id, target, tol, basis = 1, v, half, "as displayed"
            else:
                basis_id, target, tol, basis = 0, v, half, "absolute"
            a = abs(target)
            tol = tol + _EPS * (a if a > tol else tol)
            lo_mag, hi_mag = a - tol, a + tol
            hit = None
            if linear:
                best = 0.0
                for item in items:
                    val, k = item[0], item[1]
                    if basis_id == 0:
                        if k != "plain" and k != "none" and k != "count":
                            continue
                        canon = val * item[2]
                    elif basis_id == 1:
                        canon = val
                    elif basis_id == 2:
                        if k == "none" or k == "percent":
                            canon = val
                        elif k == "ratio":
                            canon = val * 100.0
                        elif k == "bp":
                            canon = val / 100.0
                        else:
                            continue
                    elif k == "none" or k == "x":
                        canon = val
                    else:
                        continue
                    mag = -canon if canon < 0 else canon
                    if mag < lo_mag or mag > hi_mag or (hit is not None and mag >= best):
                        continue
                    if signed and canon != 0 and (canon < 0) != (target < 0):
                        continue
                    if currency and item[3] and currency != item[3]:
                        continue
                    hit, best = item, mag
            else:
                if basis_id == 0:
                    arr = idx.abs
                elif basis_id == 1:
                    arr = idx.disp
                elif basis_id == 2:
                    arr = idx.pct
                else:
                    arr = idx.x
                keys = arr.keys
                lo = bisect_left(keys, lo_mag)
                hi = bisect_right(keys, hi_mag, lo)
                if lo == hi:
                    continue
                for canon, item in arr.entries[lo:hi]:
                    if signed and canon != 0 and (canon < 0) != (target < 0):
                        continue
                    if currency and item[3] and currency != item[3]:
                        continue
                    hit = item
                    break
            if hit is not None:
                where = hit[4]
                where = where[0].format(*where[1:]) if type(where) is tuple else where
                matches.append(Match(idx.ref.id, f"{where} ({basis})", idx.secondary))
                break
    return matches


def nearest(num: Num, indexes: list[RefIndex], kinds: frozenset[str] = NUMERIC_KINDS) -> str:
    best: tuple[float, str] | None = None
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        for arr, target, _tol, basis in _targets(num, idx):
            near = arr.nearest(target)
            if near is None:
                continue
            gap = abs(abs(near[0]) - abs(target))
            if best is None or gap < best[0]:
                best = (gap, f"{idx.ref.id} {where_text(near[1][4])} ({basis})")
    return f"; closest cited value: {best[1]}" if best else ""


_ARRAYS = ("abs", "disp", "pct", "x")


def _bases(num: Num) -> list[tuple[int, float, float, str]]:
    v, half = num.shown, 0.5 * num.step
    if num.kind == "percent":
        return [(2, v, half, "percent")]
    if num.kind == "bp":
        return [(2, v / 100.0, half / 100.0, "bp")]
    if num.kind == "x":
        return [(3, v, half, "multiple")]
    if num.has_scale:
        return [(0, v * num.scale, half * num.scale, "absolute")]
    return [(0, v, half, "absolute"), (1, v, half, "as displayed")]


def _within(idx: RefIndex, basis_id: int, target: float, tol: float) -> list[tuple[float, Item]]:
    """The values of ``idx`` whose magnitude on a basis is within ``tol`` of ``target``'s: in
    payload order (a linear scan, small refs) or by magnitude (bisection, larger ones)."""
    a = abs(target)
    tol = tol + _EPS * (a if a > tol else tol)
    items = idx.items
    if len(items) > _LINEAR_MAX:
        arr: _Arr = getattr(idx, _ARRAYS[basis_id])
        return arr.find(target, tol)
    lo, hi = a - tol, a + tol
    out: list[tuple[float, Item]] = []
    # Each item's value on the basis: 0 absolute, 1 as displayed, 2 percent points, 3 multiple.
    for item in items:
        val, k = item[0], item[1]
        if basis_id == 0:
            if k != "plain" and k != "none" and k != "count":
                continue
            canon = val * item[2]
        elif basis_id == 1:
            canon = val
        elif basis_id == 2:
            if k == "none" or k == "percent":
                canon = val
            elif k == "ratio":
                canon = val * 100.0
            elif k == "bp":
                canon = val / 100.0
            else:
                continue
        elif k == "none" or k == "x":
            canon = val
        else:
            continue
        mag = -canon if canon < 0 else canon
        if lo <= mag <= hi:
            out.append((canon, item))
    return out


def candidates(
    num: Num,
    indexes: list[RefIndex],
    kinds: frozenset[str] = NUMERIC_KINDS,
    done: Container[str] = (),
) -> Iterator[tuple[RefIndex, Item, str, bool]]:
    """Every value of the cited refs that may be the number: ``(ref index, item, basis, unit
    kind agrees)``. Values on the claim's own bases come first; then values that equal it only as
    displayed in another unit kind ("4,000%" against a currency cell 4,000), marked as not
    agreeing. Sign and currency rules as in ``match_number``. Found lazily: a ref whose id the
    caller has put in ``done`` meanwhile (bound already) is not searched further (its next
    values, its next bases: a table's sorted array of another basis is then never built)."""
    signed, currency = num.signed, num.currency
    bases = _bases(num)
    one_basis = len(bases) == 1
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        found = False
        rid = idx.ref.id
        if one_basis:
            # One basis finds each value at most once: nothing to de-duplicate.
            basis_id, target, tol, basis = bases[0]
            negative = target < 0
            for canon, item in _within(idx, basis_id, target, tol):
                if signed and canon != 0 and (canon < 0) != negative:
                    continue
                if currency and item[3] and currency != item[3]:
                    continue
                found = True
                yield idx, item, basis, True
                if rid in done:
                    break
        else:
            seen: set[int] = set()
            for basis_id, target, tol, basis in bases:
                if found and rid in done:
                    break
                for canon, item in _within(idx, basis_id, target, tol):
                    if signed and canon != 0 and (canon < 0) != (target < 0):
                        continue
                    if currency and item[3] and currency != item[3]:
                        continue
                    if id(item) not in seen:
                        seen.add(id(item))
                        found = True
                        yield idx, item, basis, True
                        if rid in done:
                            break
        if found or (num.kind == "plain" and not num.has_scale):
            continue  # the claim's own bases found values here, or already read it as displayed
        for canon, item in _within(idx, 1, num.shown, 0.5 * num.step):
            if currency and item[3] and currency != item[3]:
                continue
            if not (signed and canon != 0 and (canon < 0) != (num.shown < 0)):
                yield idx, item, "as displayed", False

"""Number matching for the GATE: a claim's number against the values of the refs it cites.

A number is supported when a cited ref holds a value within half a unit of its last shown place,
on the claim's basis (``lookup.Basis``: absolute, as displayed, percent points, multiple); see
the package docstring. One rule finds a ref's values near a number (``_near``), one says whether
a value's sign and currency let it be that number (``_agrees``); ``match_number`` keeps the
smallest such value of each ref, ``candidates`` offers them all to binding.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass

from .findings import Match
from .index import NUMERIC_KINDS
from .lookup import Basis, Item, RefIndex, on_basis, where_text
from .numbers import Num

_EPS = 1e-14  # float slack, relative; far below any shown precision


@dataclass(frozen=True, slots=True)
class _Target:
    """A claim's number on one basis: the value to find, the half unit of its last shown place
    (the tolerance) and how the verdict names the basis ("percent", "as displayed")."""

    basis: Basis
    value: float
    tol: float
    label: str


def _bases(num: Num) -> list[_Target]:
    """The bases a number is read on, in order: one, or for a bare number with no scale word
    absolute then as displayed in the ref's own scale."""
    v, half = num.shown, 0.5 * num.step
    if num.kind == "percent":
        return [_Target(Basis.PERCENT_POINTS, v, half, "percent")]
    if num.kind == "bp":
        return [_Target(Basis.PERCENT_POINTS, v / 100.0, half / 100.0, "bp")]
    if num.kind == "x":
        return [_Target(Basis.MULTIPLE, v, half, "multiple")]
    if num.has_scale:
        return [_Target(Basis.ABSOLUTE, v * num.scale, half * num.scale, "absolute")]
    return [
        _Target(Basis.ABSOLUTE, v, half, "absolute"),
        _Target(Basis.DISPLAYED, v, half, "as displayed"),
    ]


#: Refs with at most this many numbers are matched by a linear scan of their items; larger ones
#: by bisection in sorted per-basis arrays (built on first use). Both find the same value: the
#: smallest magnitude within the rounding interval, first in payload order on ties.
_LINEAR_MAX = 16


def _near(idx: RefIndex, target: _Target) -> list[tuple[float, Item]]:
    """The values of ``idx`` whose magnitude on the target's basis is within its tolerance (with
    a float slack): in payload order (a linear scan, small refs) or by magnitude (bisection,
    larger ones)."""
    a = abs(target.value)
    tol = target.tol + _EPS * (a if a > target.tol else target.tol)
    items = idx.items
    if len(items) > _LINEAR_MAX:
        return idx.array(target.basis).find(target.value, tol)
    lo, hi = a - tol, a + tol
    out: list[tuple[float, Item]] = []
    for item in items:
        canon = on_basis(item, target.basis)
        if canon is not None and lo <= abs(canon) <= hi:
            out.append((canon, item))
    return out


def _agrees(num: Num, canon: float, item: Item, negative: bool) -> bool:
    """May this value be the number? An explicitly signed number needs a value of its sign (zero
    has either); a currency the claim shows must not contradict the value's."""
    if num.signed and canon != 0 and (canon < 0) != negative:
        return False
    return not (num.currency and item[3] and num.currency != item[3])


def _smallest(num: Num, idx: RefIndex, target: _Target) -> Item | None:
    """The value of smallest magnitude that may be the number, first in payload order on ties."""
    hit: Item | None = None
    best = 0.0
    negative = target.value < 0
    for canon, item in _near(idx, target):
        mag = abs(canon)
        if (hit is None or mag < best) and _agrees(num, canon, item, negative):
            hit, best = item, mag
    return hit


def match_number(
    num: Num, indexes: list[RefIndex], kinds: frozenset[str] = NUMERIC_KINDS
) -> list[Match]:
    """One match per cited ref of ``kinds`` that holds the number: its smallest value on the
    first of the number's bases that has one."""
    matches: list[Match] = []
    bases = _bases(num)
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        for target in bases:
            hit = _smallest(num, idx, target)
            if hit is not None:
                where = where_text(hit[4])
                matches.append(Match(idx.ref.id, f"{where} ({target.label})", idx.secondary))
                break
    return matches


def nearest(num: Num, indexes: list[RefIndex], kinds: frozenset[str] = NUMERIC_KINDS) -> str:
    """The cited value closest to the number on its bases, for a verdict's detail."""
    best: tuple[float, str] | None = None
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        for target in _bases(num):
            near = idx.array(target.basis).nearest(target.value)
            if near is None:
                continue
            gap = abs(abs(near[0]) - abs(target.value))
            if best is None or gap < best[0]:
                best = (gap, f"{idx.ref.id} {where_text(near[1][4])} ({target.label})")
    return f"; closest cited value: {best[1]}" if best else ""


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
    bases = _bases(num)
    for idx in indexes:
        if idx.ref.kind not in kinds:
            continue
        own = False
        for candidate in _on_own_bases(num, idx, bases, done):
            own = True
            yield candidate
        if own or (num.kind == "plain" and not num.has_scale):
            continue  # the claim's own bases found values here, or already read it as displayed
        displayed = _Target(Basis.DISPLAYED, num.shown, 0.5 * num.step, "as displayed")
        for canon, item in _near(idx, displayed):
            if _agrees(num, canon, item, num.shown < 0):
                yield idx, item, "as displayed", False


def _on_own_bases(
    num: Num, idx: RefIndex, bases: list[_Target], done: Container[str]
) -> Iterator[tuple[RefIndex, Item, str, bool]]:
    """The values of one ref on the number's own bases, each once, until the ref is ``done``."""
    rid = idx.ref.id
    seen: set[int] = set()
    for target in bases:
        if seen and rid in done:
            break
        negative = target.value < 0
        for canon, item in _near(idx, target):
            if _agrees(num, canon, item, negative) and id(item) not in seen:
                seen.add(id(item))
                yield idx, item, target.label, True
                if rid in done:
                    break

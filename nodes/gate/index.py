"""Per-ref value index for the GATE: every number, date and row label a ref's payload carries.

A ref is indexed once per ``check_answer`` call and only if some claim cites it. Numbers go into
sorted arrays of magnitudes (absolute value, value as displayed in the ref's own scale, percent
points, multiples), so a claim is looked up by bisection within its rounding interval instead of
being compared with every value.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import Any

from refgate.refs import Ref

from .dates import date_keys_frozen, find_dates
from .numbers import Unit, find_numbers, merge_units, parse_unit

#: Ref kinds whose payload numbers support numeric claims.
NUMERIC_KINDS = frozenset({"valueRef", "tableRef", "webRef", "docRef"})
#: Documentation refs: what a capability does (apiRef), what a skill requires (skillRef). Their
#: numbers support only claims about the documented thing (see ``check_answer``).
DOC_KINDS = frozenset({"apiRef", "skillRef"})
#: Payload keys of documentation text, per documentation kind.
DOC_TEXT_KEYS = {
    "apiRef": ("signature", "doc", "summary", "description"),
    "skillRef": ("title", "purpose", "whenToUse", "procedure", "failureModes", "forbidden"),
}
_PARAM = re.compile(r"[(,]\s*\*{0,2}\s*([A-Za-z_]\w*)\s*(?=[:=,)])")
#: Payload keys of external text (webRef / docRef).
TEXT_KEYS = ("excerpt", "quote", "text", "snippet", "content", "body", "abstract", "summary")
_DATE_KEYS = re.compile(
    r"^(?:period|asof|as_of|date|dates|label|start|end|fiscal_?year|fy|year|quarter)$", re.I
)
_ASCII_DIGIT = re.compile(r"[0-9]")
_ASCII_ALPHA = re.compile(r"[A-Za-z]")
_NO_UNIT = Unit()
_PERIOD_NAME = re.compile(
    r"\b(?:period|year|date|quarter|as\s?of|fy|fiscal)\b|기간|연도|년도|분기|기준일|일자|날짜", re.I
)


@lru_cache(maxsize=4096)
def _is_date_key(key: str) -> bool:
    return _DATE_KEYS.match(key) is not None


@lru_cache(maxsize=4096)
def _is_period_name(name: str) -> bool:
    return _PERIOD_NAME.search(name) is not None


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


def _has_alpha(text: str) -> bool:
    if text.isascii():
        return _ASCII_ALPHA.search(text) is not None
    return any(ch.isalpha() for ch in text)


def _value_unit(scale: Any, unit: Any) -> Unit:
    """The unit of a valueRef value from its ``scale`` and ``units`` entries (cached: they repeat)."""
    if scale is None and unit is None:
        return _NO_UNITS
    try:
        return _value_unit_cached(scale, unit)
    except TypeError:  # unhashable
        return merge_units(parse_unit(scale), parse_unit(unit))


_NO_UNITS = merge_units(parse_unit(None), parse_unit(None))


@lru_cache(maxsize=4096, typed=True)
def _value_unit_cached(scale: Any, unit: Any) -> Unit:
    return merge_units(parse_unit(scale), parse_unit(unit))


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def _unit_for(units: Any, name: str) -> Unit:
    if isinstance(units, dict):
        return parse_unit(units.get(name))
    if isinstance(units, str):
        return parse_unit(units)
    return Unit()


def _add_dates_from(idx: RefIndex, mapping: Any) -> None:
    if isinstance(mapping, dict):
        for k, v in mapping.items():
            if isinstance(k, str) and _is_date_key(k):
                if isinstance(v, list | tuple):
                    for item in v:
                        idx.dates.update(date_keys_frozen(item))
                else:
                    idx.dates.update(date_keys_frozen(v))


def _index_value_ref(idx: RefIndex, p: dict[str, Any]) -> None:
    scale = p.get("scale")
    units = p.get("units", p.get("unit"))
    values = p.get("values")
    if values is None and "value" in p:
        values = {"value": p["value"]}
    if isinstance(values, list):
        values = {str(i): v for i, v in enumerate(values)}
    if isinstance(values, dict):
        scale_by_name = isinstance(scale, dict)
        unit_by_name = isinstance(units, dict)
        unit_raw = units if isinstance(units, str) else None
        items = idx.items
        for name, v in values.items():
            unit = _value_unit(
                scale.get(name) if scale_by_name else scale,
                units.get(name) if unit_by_name else unit_raw,
            )
            t = type(v)
            f = v if t is float else float(v) if t is int else _num(v)
            if f is not None:
                if f.is_integer() and 1900 <= f <= 2099 and _is_period_name(str(name)):
                    idx.dates.update(date_keys_frozen(int(f)))
                if f - f == 0.0:  # finite (inf - inf and nan - nan are nan)
                    items.append(
                        (f, unit.kind, unit.scale, unit.currency, ("values.{}={}", name, v))
                    )
            elif isinstance(v, str):
                idx.add_text(v, unit, "values.{}", name)
    _add_dates_from(idx, p)


def _index_table_ref(idx: RefIndex, p: dict[str, Any]) -> None:
    meta = p.get("meta") if isinstance(p.get("meta"), dict) else {}
    scale = parse_unit(meta.get("scale", p.get("scale")))
    base_unit = parse_unit(meta.get("unit", meta.get("units", p.get("unit"))))
    table_unit = merge_units(scale, base_unit)
    columns = [str(c) for c in (p.get("columns") or [])]
    units = p.get("units")
    col_units = [merge_units(table_unit, _unit_for(units, c)) for c in columns]
    periodic = [_is_period_name(c) for c in columns]
    for c in columns:
        idx.dates.update(date_keys_frozen(c))
        if _has_alpha(c):
            idx.labels.append(c.lower())
    n_cols = len(columns)
    labels = idx.labels
    items = idx.items
    dates = idx.dates
    rows = p.get("rows") or []
    for r, row in enumerate(rows):
        if isinstance(row, dict):
            cells = [row.get(c) for c in columns] if columns else list(row.values())
        elif isinstance(row, list | tuple):
            cells = row
        else:
            continue
        for j, cell in enumerate(cells):
            if j < n_cols:
                col = columns[j]
                unit = col_units[j]
                if periodic[j]:
                    dates.update(date_keys_frozen(cell))
                    if isinstance(cell, str):
                        labels.append(cell.lower())
                    continue
            else:
                col = str(j)
                unit = table_unit
            t = type(cell)
            if t is float:
                f = cell
            elif t is int:
                f = float(cell)
            else:
                f = None if t is str else _num(cell)
            if f is not None:
                if f - f == 0.0:  # finite (inf - inf and nan - nan are nan)
                    where = ("row {} [{}]={}", r, col, cell)
                    items.append((f, unit.kind, unit.scale, unit.currency, where))
            elif isinstance(cell, str) and cell.strip():
                if _has_alpha(cell):
                    labels.append(cell.strip().lower())
                idx.add_text(cell, unit, "row {} [{}]", r, col)
    _add_dates_from(idx, meta)
    _add_dates_from(idx, p)


def _index_text_ref(idx: RefIndex, p: dict[str, Any]) -> None:
    for key in TEXT_KEYS:
        v = p.get(key)
        if isinstance(v, str):
            idx.add_text(v, _NO_UNIT, key)
        elif isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, str):
                    idx.add_text(item, _NO_UNIT, key + "[{}]", i)
    _add_dates_from(idx, p)


def _doc_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _index_doc_ref(idx: RefIndex, kind: str, p: dict[str, Any]) -> None:
    """A documentation ref: the numbers its text states (defaults, bounds) and what names it."""
    texts: list[str] = []
    for key in DOC_TEXT_KEYS[kind]:
        for i, text in enumerate(_doc_strings(p.get(key))):
            texts.append(text)
            idx.add_text(text, _NO_UNIT, key + "[{}]", i)
    # Example dates in documentation ("2008Q4") are no evidence of any period.
    idx.dates.clear()
    names: list[str] = []
    if kind == "apiRef":
        name = p.get("name")
        if isinstance(name, str) and name.strip():
            names += [name.strip(), name.strip().rsplit(".", 1)[-1]]
        sig = p.get("signature")
        if isinstance(sig, str):
            names += [m.group(1) for m in _PARAM.finditer(sig) if m.group(1) not in ("env", "self")]
    else:
        sid = p.get("id")
        if isinstance(sid, str) and sid.strip():
            names += [sid.strip(), sid.strip().replace("-", " ").replace("_", " ")]
        for key in ("title", "capabilityRefs", "toolRefs"):
            names += [t.strip() for t in _doc_strings(p.get(key)) if t.strip()]
    idx.doc_names = tuple(dict.fromkeys(n.lower() for n in names if n))
    idx.doc_text = "\n".join(texts).lower()


def build_index(ref: Ref) -> RefIndex:
    """Index one ref's payload (numbers only for value/table/web/doc refs; dates for all)."""
    idx = RefIndex(ref)
    p = ref.payload if isinstance(ref.payload, dict) else {}
    if ref.kind == "valueRef":
        _index_value_ref(idx, p)
    elif ref.kind == "tableRef":
        _index_table_ref(idx, p)
    elif ref.kind in ("webRef", "docRef"):
        _index_text_ref(idx, p)
    elif ref.kind == "dateRef":
        _add_dates_from(idx, p)
    elif ref.kind in DOC_KINDS:
        _index_doc_ref(idx, ref.kind, p)
        _add_dates_from(idx, p)
    else:
        # Other kinds (executionRef, verifyRef, ...) support no values; their dates still count
        # only when stated as a period / asOf field.
        _add_dates_from(idx, p)
    return idx

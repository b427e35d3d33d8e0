"""Per-ref value index for the GATE: every number, date and row label a ref's payload carries.

A ref is indexed only if some claim cites it, and once per kind and payload while ``INDEXES``
keeps it (across ``check_answer`` calls); ``build_index`` reads its payload by kind (valueRef
values, tableRef cells, web/doc text, documentation) into a ``lookup.RefIndex``.
"""

from __future__ import annotations

import marshal
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast

from refgate.refs import Ref, payload_values
from refgate.text import sentence_spans

from .dates import date_keys_frozen, find_dates, is_period_name
from .headers import split_header
from .lookup import NO_COL, PLACE_COLS, VALUE_PLACE, Item, Place, RefIndex
from .text_tables import text_tables
from .units import NO_UNIT, Unit, merge_units, parse_unit
from .words import PERCENT_WORDS, label_words

#: A ref's payload, or a mapping inside it: plain JSON data as the tool wrote it (``refs.plain``).
Payload = Mapping[str, object]
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
_ASCII_ALPHA = re.compile(r"[A-Za-z]")


@lru_cache(maxsize=4096)
def _is_date_key(key: str) -> bool:
    return _DATE_KEYS.match(key) is not None


def _has_alpha(text: str) -> bool:
    if text.isascii():
        return _ASCII_ALPHA.search(text) is not None
    return any(ch.isalpha() for ch in text)


def _value_unit(scale: object, unit: object) -> Unit:
    """The unit of a valueRef value from its ``scale`` and ``units`` entries (cached: they repeat)."""
    if scale is None and unit is None:
        return NO_UNITS
    try:
        return _value_unit_cached(scale, unit)
    except TypeError:  # unhashable
        return merge_units(parse_unit(scale), parse_unit(unit))


NO_UNITS = merge_units(parse_unit(None), parse_unit(None))


@lru_cache(maxsize=4096, typed=True)
def _value_unit_cached(scale: object, unit: object) -> Unit:
    return merge_units(parse_unit(scale), parse_unit(unit))


def _num(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def _cell_number(cell: object) -> float | None:
    """A table cell's number when the payload holds one (not a string, not a bool)."""
    if type(cell) is float:
        return cell
    if type(cell) is int:
        return float(cell)
    return None if type(cell) is str else _num(cell)


def _unit_for(units: object, name: str) -> Unit:
    if isinstance(units, dict):
        return parse_unit(units.get(name))
    if isinstance(units, str):
        return parse_unit(units)
    return Unit()


def _add_dates_from(idx: RefIndex, mapping: object) -> None:
    if isinstance(mapping, dict):
        for k, v in mapping.items():
            if isinstance(k, str) and _is_date_key(k):
                if isinstance(v, list | tuple):
                    for item in v:
                        idx.dates.update(date_keys_frozen(item))
                else:
                    idx.dates.update(date_keys_frozen(v))


#: Payload fields that state a ref's own period.
_PERIOD_FIELDS = ("period", "asOf", "as_of", "asof", "date", "fiscal_year", "year", "quarter")


_PERIOD_FIELD_SET = frozenset(_PERIOD_FIELDS)
#: Field values that state no single period (a ``tuple`` here is faster than ``list | tuple``).
_CONTAINERS = (list, tuple, dict)


def _own_periods(p: Payload) -> frozenset[str]:
    """The date keys of a payload's own period fields (period, asOf, date, ...)."""
    keys: frozenset[str] = frozenset()
    for k in p:  # payloads hold a few fields: their names are read, not the 8 fields looked up
        if k in _PERIOD_FIELD_SET:
            v = p[k]
            if v is not None and not isinstance(v, _CONTAINERS):
                keys = keys | date_keys_frozen(v) if keys else date_keys_frozen(v)
    return keys


_NO_NAMES: frozenset[str] = frozenset()
_NO_KEYS: frozenset[str] = frozenset()


def _literal_names(p: Payload) -> tuple[bool, frozenset[str]]:
    """(computed from data at all, names written as literals) of an emitted result: the sandbox
    records the datasets a call read (``meta.read``) and the values its code wrote as literals
    (``meta.literals``). A ref without that record (a capability's, an older ledger's) counts
    as computed."""
    meta = p.get("meta")
    if not isinstance(meta, dict) or "read" not in meta:
        return True, _NO_NAMES
    read = meta.get("read")
    literals = meta.get("literals")
    names = frozenset(str(n) for n in literals) if isinstance(literals, list) else frozenset()
    return bool(read), names


@lru_cache(maxsize=4096)
def _value_place(name: str, periods: frozenset[str], computed: bool) -> Place:
    """A named value's place (shared: value places are never changed once made)."""
    return Place(name, name, "", periods, name=name, computed=computed)


def value_facts(ref: Ref) -> tuple[frozenset[str], bool, frozenset[str]]:
    """What a valueRef says of all its values: its own period (date keys), whether it was
    computed from data at all, and the names its code wrote as literals."""
    return _value_facts(ref.payload if isinstance(ref.payload, dict) else {})


def _value_facts(p: Payload) -> tuple[frozenset[str], bool, frozenset[str]]:
    return (_own_periods(p), *_literal_names(p))


def value_places(ref: Ref) -> dict[str, Place]:
    """The places of a valueRef's values, by name (made when a claim first binds to one)."""
    p = ref.payload if isinstance(ref.payload, dict) else {}
    values = payload_values(p)
    periods, computed, literals = value_facts(ref)
    return {
        str(n): _value_place(str(n), periods, computed and str(n) not in literals)
        for n in (values if isinstance(values, dict) else ())
    }


def _index_value_ref(idx: RefIndex, p: Payload) -> None:
    # Payload fields are JSON as the code wrote them: a name -> value mapping or one value.
    scale = p.get("scale")
    units = p.get("units", p.get("unit"))
    values = payload_values(p)
    if isinstance(values, dict):
        scale_by_name = scale if isinstance(scale, dict) else None
        unit_by_name = units if isinstance(units, dict) else None
        unit_raw = units if isinstance(units, str) else None
        items = idx.items
        idx.value_places = value_places
        key = VALUE_PLACE
        for name, v in values.items():
            unit = _value_unit(
                scale_by_name.get(name) if scale_by_name is not None else scale,
                unit_by_name.get(name) if unit_by_name is not None else unit_raw,
            )
            t = type(v)
            f = v if t is float else float(v) if t is int else _num(v)
            if f is not None:
                if f.is_integer() and 1900 <= f <= 2099 and is_period_name(str(name)):
                    idx.dates.update(date_keys_frozen(int(f)))
                if f - f == 0.0:  # finite (inf - inf and nan - nan are nan)
                    items.append(
                        (f, unit.kind, unit.scale, unit.currency, ("values.{}={}", name, v), key)
                    )
            elif isinstance(v, str):
                idx.add_text(v, unit, "values.{}", name, place=key)
    _add_dates_from(idx, p)
    idx.facts = _value_facts(p)


#: ``Place.hint`` of a table row until a claim binds to it (then: percent or amount).
TABLE_ROW = "table row"
_PERCENT_KINDS = frozenset({"percent", "ratio", "bp"})


@lru_cache(maxsize=1 << 14)
def table_row_hint(label: str, context: str) -> str:
    """A table row's unit kind from its labels: percent (%, rate, margin, ...) or amount."""
    return _row_hint(label) or ("percent" if _percent_words(label, context) else "amount")


def _percent_words(*labels: str) -> bool:
    return any(label_words(x) & PERCENT_WORDS for x in labels if x)


def _row_hint(label: str) -> str:
    """A unit kind a row label states ("Gross margin (%)": percent)."""
    return "percent" if _states_percent(label) else ""


@lru_cache(maxsize=1024)
def spanned_headers(columns: tuple[str, ...]) -> tuple[str, ...]:
    """Each column's header with its spanning header's words: a flattened header row writes a
    group's label once, on its first column ("Cash dividend per share 2018", "2019"), so a
    header that states only a period takes the words of the nearest header before it that
    states words and a period."""
    out = []
    group = ""
    for c in columns:
        dms = find_dates(c)
        rest = c
        for d in reversed(dms):
            rest = rest[: d.start] + " " + rest[d.end :]
        if dms and not _has_alpha(rest):
            out.append(f"{group} {c}" if group else c)
            continue
        out.append(c)
        group = " ".join(rest.split()) if dms else ""
    return tuple(out)


def _table_columns(idx: RefIndex, columns: list[str], title: str) -> list[bool]:
    """Each column as a place (its header's words, or the period it names); the period flags."""
    periodic = []
    for c, head in zip(columns, spanned_headers(tuple(columns)), strict=True):
        keys = date_keys_frozen(c)
        # A column named for periods ("period", "fiscal year") holds periods; one whose header
        # states a period ("Year Ended December 31, 2019") holds that period's values.
        is_period = is_period_name(c) and not keys
        periodic.append(is_period)
        idx.dates.update(keys)
        if _has_alpha(c):
            idx.labels.append(c.lower())
        idx.columns.append(
            Place(
                head,
                "" if is_period else head,
                title,
                keys,
                "percent" if not is_period and (_row_hint(head) or _percent_words(head)) else "",
            )
        )
    return periodic


def _row_cells(row: object, columns: list[str]) -> list[object] | None:
    if isinstance(row, dict):
        return [row.get(c) for c in columns] if columns else list(row.values())
    if isinstance(row, list | tuple):
        return list(row)
    return None


def _index_table_ref(idx: RefIndex, p: Payload) -> None:
    """A table's cells: each number at its row's place and its column (``Place``), its labels,
    its periods; then the cells that the row or column labels make percentages or amounts."""
    table = _table_layout(idx, p)
    reading = _TableReading(idx, table)
    for r, row in enumerate(table.body, table.first_row):
        cells: list[object] | None
        if type(row) is list:
            cells = row
        else:
            cells = _row_cells(row, table.columns)
            if cells is None:
                continue
        reading.row(r, cells)
    reading.finish()
    _add_dates_from(idx, table.meta)
    _add_dates_from(idx, p)


@dataclass(frozen=True, slots=True)
class _Table:
    """How a table payload is laid out: its header (``headers.split_header`` when a loader left
    header rows in the body), its body rows, and what each column says of its cells."""

    meta: Payload
    body: list[object]
    #: The payload row number of the first body row (after the header rows taken).
    first_row: int
    columns: list[str]
    #: Where this table's columns start among the ref's (a text's tables follow one another).
    off: int
    table_unit: Unit
    col_units: list[Unit]
    #: The columns that hold periods (``_table_columns``).
    periodic: list[bool]
    #: The columns whose header marks them as percentages ("Gross margin %").
    pct_heads: frozenset[int]
    #: The table's own period (its meta's or payload's period fields).
    periods: frozenset[str]
    computed: bool


def _table_layout(idx: RefIndex, p: Payload) -> _Table:
    raw_meta = p.get("meta")
    meta: Payload = raw_meta if isinstance(raw_meta, dict) else {}
    raw_scale = meta.get("scale", p.get("scale"))
    # A table's columns and rows are lists (``refs.plain`` makes every sequence one); anything
    # else a tool wrote there is read as it comes, as a sequence of cells.
    raw_columns = cast("Sequence[object]", p.get("columns") or [])
    body = cast("list[object]", p.get("rows") or [])
    title = str(meta.get("title") or "")
    # Header rows a loader left in the body (a caption first, the years under it, a unit row).
    header = split_header(raw_columns, body) if body and type(body[0]) is list else None
    first_row = 0
    if header is not None:
        raw_columns, first_row = header.columns, header.rows_taken
        body = body[first_row:]
        title = f"{title} {header.caption}".strip()
        if raw_scale is None and header.scale:
            raw_scale = header.scale
    table_unit = merge_units(
        parse_unit(raw_scale), parse_unit(meta.get("unit", meta.get("units", p.get("unit"))))
    )
    # a table of a text (``_index_text_ref``) has its columns after those of the tables before it
    off = len(idx.columns)
    columns = [str(c) for c in raw_columns][: NO_COL - 1 - off]
    units = p.get("units")
    col_units = [merge_units(table_unit, _unit_for(units, c)) for c in columns]
    periodic = _table_columns(idx, columns, title)
    table_periods = _own_periods(meta) or _own_periods(p)
    computed, _ = _literal_names(meta and {"meta": meta})
    pct_heads = frozenset(off + j for j, c in enumerate(columns) if j and _states_percent(c))
    return _Table(
        meta, body, first_row, columns, off, table_unit, col_units, periodic, pct_heads,
        table_periods, computed,
    )  # fmt: skip


@dataclass(slots=True)
class _Row:
    """One body row being read: its label words, the column headers over them, its period."""

    words: list[str] = field(default_factory=list)
    label_heads: list[str] = field(default_factory=list)
    periods: frozenset[str] = _NO_KEYS
    period_text: list[str] = field(default_factory=list)


class _TableReading:
    """One table's rows read into a ``RefIndex``, row by row."""

    def __init__(self, idx: RefIndex, table: _Table) -> None:
        self.idx = idx
        self.table = table
        #: The label of the last labelled row with no number: it heads the rows below it.
        self.section = ""
        #: Columns whose cells print a currency, or hold a percentage.
        self.cur_cols: set[int] = set()
        self.pct_cols: set[int] = set()
        #: rows with a period cell, and the periods their cells state (not the coarser ones)
        self.stated: list[tuple[Place, frozenset[str]]] = []

    def row(self, r: int, cells: list[object]) -> None:
        idx, table = self.idx, self.table
        items = idx.items
        base = len(idx.places) * PLACE_COLS
        row = _Row()
        n_items = len(items)
        for j, cell in enumerate(cells):
            self._cell(r, j, cell, base, row)
        label = " ".join(row.words)
        pct_row = bool(label) and _states_percent(label)
        if len(items) > n_items and (table.pct_heads or pct_row):
            _percent_cells(items, n_items, table.pct_heads, whole_row=pct_row)
        section = self.section
        # its hint, TABLE_ROW, is decided from its labels when a claim binds to it
        place = Place(
            label or " ".join(row.period_text),
            label,
            " ".join([section, *row.label_heads]) if row.label_heads else section,
            row.periods or table.periods,
            TABLE_ROW,
            computed=table.computed,
        )
        idx.places.append(place)
        if row.period_text:
            self.stated.append((place, _stated_keys(row.period_text)))
        # A labelled row with no number heads the rows below it ("Revenue:" over "Product").
        if label and len(items) == n_items:
            self.section = label

    def _cell(self, r: int, j: int, cell: object, base: int, row: _Row) -> None:
        table = self.table
        if j < len(table.columns):
            col = table.columns[j]
            unit = table.col_units[j]
            if table.periodic[j] and (self._period_cell(cell, row) or not isinstance(cell, str)):
                return
            key = base + table.off + j
        else:
            col = str(j)
            unit = table.table_unit
            key = base + NO_COL
        f = _cell_number(cell)
        if f is not None:
            if f - f == 0.0:  # finite (inf - inf and nan - nan are nan)
                where = ("row {} [{}]={}", r, col, cell)
                self.idx.items.append((f, unit.kind, unit.scale, unit.currency, where, key))
        elif isinstance(cell, str):
            self._text_cell(r, j, col, cell, unit, key, row)

    def _period_cell(self, cell: object, row: _Row) -> bool:
        """A cell of a period column that states a period: the row's period (True), else no."""
        keys = date_keys_frozen(cell)
        if not keys:
            return False
        self.idx.dates.update(keys)
        row.periods = row.periods | keys if row.periods else keys
        row.period_text.append(str(cell))
        if isinstance(cell, str):
            self.idx.labels.append(cell.lower())
        return True

    def _text_cell(
        self, r: int, j: int, col: str, cell: str, unit: Unit, key: int, row: _Row
    ) -> None:
        """A text cell: a label (it has letters) and the numbers it states ("$ 1,452.4")."""
        text = cell.strip()
        if not text:
            return
        idx, columns = self.idx, self.table.columns
        if _has_alpha(cell):
            idx.labels.append(text.lower())
            row.words.append(text)
            if j < len(columns) and columns[j] not in row.label_heads:
                row.label_heads.append(columns[j])  # "(In thousands) Deferred tax assets"
        items = idx.items
        before = len(items)
        idx.add_text(cell, unit, "row {} [{}]", r, col, place=key)
        if len(items) > before:
            if items[-1][3]:
                self.cur_cols.add(key % PLACE_COLS)
            if items[-1][1] in _PERCENT_KINDS:
                self.pct_cols.add(key % PLACE_COLS)

    def finish(self) -> None:
        """The column rules, once every row is read."""
        if self.cur_cols - self.pct_cols:
            _bare_cells_take_their_columns_currency(self.idx.items, self.cur_cols - self.pct_cols)
        if len(self.stated) > 1:
            _periods_of_their_own(self.stated)


def _stated_keys(texts: list[str]) -> frozenset[str]:
    return frozenset(k for t in texts for d in find_dates(t) for k in d.keys)


def _periods_of_their_own(stated: list[tuple[Place, frozenset[str]]]) -> None:
    """A row's period does not hold a coarser period another row states: where a statements
    table has "2023 Q2" and "2023 H1" rows (a quarter and the half year to date), or "2023 Q3"
    and "FY2023", a claim of the half year or the year binds the row that states it, not the
    quarter's row."""
    own = frozenset().union(*(keys for _, keys in stated))
    for place, keys in stated:
        drop = (place.periods & own) - keys
        if drop:
            place.periods = place.periods - drop


_PERCENT_LABEL = re.compile(r"%|\bper ?cent", re.I)
_EXCEPT_PERCENT = re.compile(r"\b(?:except|excluding|other than)\b[^()]*?(?:%|\bper ?cent)", re.I)


def _states_percent(label: str) -> bool:
    """Does a row label or column header say its numbers are percentages ("Gross margin (%)",
    "Share, percent"), not only that the table has some ("In thousands, except percentages")?"""
    if "%" not in label and "cent" not in label.lower():
        return False  # the patterns' quick rejection (most labels)
    return bool(_PERCENT_LABEL.search(label)) and not _EXCEPT_PERCENT.search(label)


def _percent_cells(
    items: list[Item], start: int, columns: frozenset[int], *, whole_row: bool
) -> None:
    """Percentage cells, by their labels (docs/architecture.md, GATE, "Percent rows"): in a row whose label says "%" or
    "percent" (every cell) or a column whose header does, a number that prints no currency of
    its own is a percentage, whatever the table's or column's currency and scale ("Gross margin
    (%)" 35.2 in a USD-million table is 35.2%, not $35.2 million)."""
    for i in range(start, len(items)):
        it = items[i]
        if not whole_row and it[5] % PLACE_COLS not in columns:
            continue
        if (it[1] == "plain" and it[3]) or (it[1] in ("plain", "none") and not it[3]):
            items[i] = (it[0], "percent", 1.0, "", it[4], it[5])


def _bare_cells_take_their_columns_currency(items: list[Item], columns: set[int]) -> None:
    """A column that prints a currency on some cells ("$130" over "128") and no percent holds
    amounts: its bare numbers are amounts in that currency, not unitless (a "128%" claim is a
    unit-kind swap)."""
    currency = {it[5] % PLACE_COLS: it[3] for it in items if it[3]}
    for i, it in enumerate(items):
        if it[1] == "none" and not it[3]:
            col = it[5] % PLACE_COLS
            if col in columns:
                items[i] = (it[0], "plain", it[2], currency[col], it[4], it[5])


def _index_text(idx: RefIndex, text: str, where: str, *where_args: object) -> None:
    """A text's sentences as places; each number sits at the sentence that states it, whose
    dates are its period. A table laid out in rows (``text_tables``) is read as a table."""
    tables = text_tables(text)
    if tables:
        last = 0
        for start, end, head, rows in tables:
            _index_sentences(idx, text[last:start], where, *where_args)
            _index_table_ref(idx, {"columns": head, "rows": rows})
            last = end
        _index_sentences(idx, text[last:], where, *where_args)
        return
    _index_sentences(idx, text, where, *where_args)


def _index_sentences(idx: RefIndex, text: str, where: str, *where_args: object) -> None:
    for a, b in sentence_spans(text):
        sentence = text[a:b]
        if not sentence.strip():
            continue
        place = Place(sentence.strip(), "", sentence)
        key = idx.add_place(place)
        place.periods = idx.add_text(sentence, NO_UNIT, where, *where_args, place=key)


def _index_text_ref(idx: RefIndex, p: Payload) -> None:
    for key in TEXT_KEYS:
        v = p.get(key)
        if isinstance(v, str):
            _index_text(idx, v, key)
        elif isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, str):
                    _index_text(idx, item, key + "[{}]", i)
    _add_dates_from(idx, p)


def _doc_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _index_doc_ref(idx: RefIndex, kind: str, p: Payload) -> None:
    """A documentation ref: the numbers its text states (defaults, bounds) and what names it."""
    texts: list[str] = []
    for key in DOC_TEXT_KEYS[kind]:
        for i, text in enumerate(_doc_strings(p.get(key))):
            texts.append(text)
            idx.add_text(text, NO_UNIT, key + "[{}]", i)
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


class IndexCache:
    """Indexes kept across ``check_answer`` calls, by the ref's kind and payload: the same ledger
    is checked again after each answer block (and a retry cites mostly the same refs). A payload
    is plain JSON data (``refgate.refs.plain``) and its key is its ``marshal`` encoding (version
    2: no back-references, so equal content encodes alike), which decodes to the payload itself:
    equal keys are equal payloads, so a ref whose payload changed is never served a stale index.
    Least recently used entries go first, within ``max_entries`` and ``max_bytes`` of keys."""

    def __init__(self, max_entries: int = 4096, max_bytes: int = 1 << 22) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        # an ``OrderedDict``: dropping the oldest entry is O(1) (a plain dict's first entry is
        # found by skipping the deleted ones before it: ~5 us a drop once the cache is full)
        self._by_key: OrderedDict[tuple[str, bytes], RefIndex] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # checks may run in threads (a server's runs)

    def index(self, ref: Ref) -> RefIndex:
        """``ref``'s index: indexed once per payload; the index built for ``ref`` itself, or a
        ``RefIndex.twin`` of the one kept for an equal payload."""
        try:
            key = (ref.kind, marshal.dumps(ref.payload, 2))
        except ValueError:  # not plain data (a payload built without validation)
            return _build_index(ref)
        by_key = self._by_key
        got = by_key.get(key)
        if got is not None:
            with self._lock:
                if key in by_key:
                    by_key.move_to_end(key)  # most recently used last
            return got.twin(ref)
        got = _build_index(ref)
        size = len(key[1])
        if size > self.max_bytes // 64:
            return got  # too large to keep (a long document): indexed for this call only
        with self._lock:
            kept = by_key.get(key)
            if kept is not None:  # indexed meanwhile by another thread
                return kept.twin(ref)
            by_key[key] = got
            self._bytes += size
            while len(by_key) > self.max_entries or self._bytes > self.max_bytes:
                old, _ = by_key.popitem(last=False)
                self._bytes -= len(old[1])
        return got

    def cache_clear(self) -> None:
        with self._lock:
            self._by_key.clear()
            self._bytes = 0


#: The GATE's index cache (``cache_clear()`` empties it).
INDEXES = IndexCache()


def build_index(ref: Ref) -> RefIndex:
    """Index one ref's payload (numbers only for value/table/web/doc refs; dates for all), or
    take it from ``INDEXES`` when a ref with that kind and payload was indexed before."""
    return INDEXES.index(ref)


def _build_index(ref: Ref) -> RefIndex:
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

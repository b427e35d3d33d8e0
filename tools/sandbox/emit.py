"""Host-side validation of ``emit_result`` frames and the refs they become.

Every frame the sandboxed code sends is untrusted input: it is checked here (shape, sizes,
finite numbers, known scales, ISO dates) whether or not it came through the real ``emit_result``,
so a hand-written frame can claim nothing a real call could not. Accepted emits become
tableRef / valueRef / dateRef specs; units missing for a column or value named after a column of
a dataset the call read are filled from refgate.toml (and marked so in ``meta``).

Computed means computed: each emitted ref's ``meta.read`` lists the datasets the call had actually
read when it emitted (recorded by the host from the sandbox's requests), and ``meta.sources`` is
that list, not the ``sources=`` the code declares (kept as ``meta.declared_sources``); a valueRef's
``meta.literals`` names the values the code wrote as numeric literals. The GATE does not take
those for primary evidence (``value_not_computed``).
"""

from __future__ import annotations

import ast
import datetime as _dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from refgate.payloads import Cell, JsonDict
from refgate.refs import SCALES, RefKind

if TYPE_CHECKING:
    from refgate.workspace import Workspace

MAX_EMITS = 50
MAX_TABLE_ROWS = 5000
MAX_TABLE_COLUMNS = 200
MAX_TABLE_CELLS = 200_000
MAX_VALUES = 200
MAX_TEXT = 1000
MAX_NAME = 200
MAX_UNIT = 40
MAX_SQL = 20_000


class EmitRejected(ValueError):
    """An emit frame that breaks the rules; the message goes back to the code as an error."""


class EmittedTable(TypedDict):
    """An emitted table, checked: its column names and its rows of cells."""

    columns: list[str]
    rows: list[list[Cell]]


@dataclass
class PendingRef:
    """A ref to issue when the call succeeds (its id is drawn when the emit is accepted)."""

    id: str
    kind: RefKind
    payload: JsonDict
    title: str = ""


def _text(value: object, what: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise EmitRejected(f"{what} must be text")
    if len(value) > limit:
        raise EmitRejected(f"{what} is longer than {limit} characters")
    return value


def _number(value: object, what: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EmitRejected(f"{what} must be a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise EmitRejected(f"{what} must be finite")
    return value


def _cell(value: object, where: str) -> Cell:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value if not isinstance(value, float) or math.isfinite(value) else None
    if isinstance(value, str):
        return _text(value, where)
    raise EmitRejected(f"{where}: cells must be numbers, text or null")


def check_table(raw: object) -> EmittedTable:
    if not isinstance(raw, dict) or set(raw) - {"columns", "rows"}:
        raise EmitRejected("table must be {columns, rows}")
    columns, rows = raw.get("columns"), raw.get("rows")
    if not isinstance(columns, list) or not columns:
        raise EmitRejected("table needs at least one column")
    if len(columns) > MAX_TABLE_COLUMNS:
        raise EmitRejected(f"table has {len(columns)} columns; at most {MAX_TABLE_COLUMNS}")
    columns = [_text(c, "a column name", MAX_NAME) for c in columns]
    if len(set(columns)) != len(columns):
        dupes = sorted({c for c in columns if columns.count(c) > 1})
        raise EmitRejected(f"table has duplicate column names: {', '.join(dupes)}")
    if not isinstance(rows, list):
        raise EmitRejected("table rows must be a list")
    if not rows:
        raise EmitRejected("table is empty (no rows): emit evidence, not an empty frame")
    if len(rows) > MAX_TABLE_ROWS or len(rows) * len(columns) > MAX_TABLE_CELLS:
        raise EmitRejected(
            f"table has {len(rows)} rows x {len(columns)} columns; emit at most {MAX_TABLE_ROWS} "
            f"rows and {MAX_TABLE_CELLS} cells (aggregate, or keep the rows the answer uses)"
        )
    checked = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise EmitRejected(f"table row {i} must have {len(columns)} cells")
        checked.append([_cell(v, f"table row {i}") for v in row])
    return {"columns": columns, "rows": checked}


def check_values(raw: object) -> dict[str, int | float]:
    if not isinstance(raw, dict) or not raw:
        raise EmitRejected("values must be a non-empty {name: number} mapping")
    if len(raw) > MAX_VALUES:
        raise EmitRejected(f"values has {len(raw)} entries; at most {MAX_VALUES}")
    return {
        _text(k, "a value name", MAX_NAME): _number(v, f"values[{k!r}]") for k, v in raw.items()
    }


def check_date(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict) or "date" not in raw or set(raw) - {"date", "label"}:
        raise EmitRejected("date must be {date, label?}")
    date = _text(raw["date"], "date", 40)
    try:
        _dt.date.fromisoformat(date)
    except ValueError:
        raise EmitRejected(f"date {date!r} is not an ISO date (YYYY-MM-DD)") from None
    out = {"date": date}
    if raw.get("label") is not None:
        out["label"] = _text(raw["label"], "date label", MAX_NAME)
    return out


#: The fields an emit frame may carry.
FRAME_FIELDS = frozenset(
    {"op", "table", "values", "units", "date", "sources", "title", "scale", "period", "sql"}
)


@dataclass
class Frame:
    """One emit frame, validated."""

    table: EmittedTable | None
    values: dict[str, int | float] | None
    date: dict[str, str] | None
    sources: list[str]
    title: str
    query: str | None
    period: str | None
    scale: str | None
    units: dict[str, str]


def read_frame(msg: Mapping[str, object]) -> Frame:
    """Validate an emit frame's fields (shape, sizes, scale, units against the names)."""
    extra = sorted(set(msg) - FRAME_FIELDS)
    if extra:
        raise EmitRejected(f"unknown emit_result field(s): {', '.join(extra)}")
    if not any(k in msg for k in ("table", "values", "date")):
        raise EmitRejected("emit_result needs at least one of table=, values=, date=")
    table = check_table(msg["table"]) if "table" in msg else None
    values = check_values(msg["values"]) if "values" in msg else None
    date = check_date(msg["date"]) if "date" in msg else None
    sources_raw = msg.get("sources", [])
    if not isinstance(sources_raw, list) or len(sources_raw) > 20:
        raise EmitRejected("sources must be a list of at most 20 names or ref ids")
    sources = [_text(s, "a source", MAX_NAME) for s in sources_raw]
    title = _text(msg["title"], "title", MAX_NAME) if "title" in msg else ""
    query = _text(msg["sql"], "sql", MAX_SQL) if "sql" in msg else None
    if query is not None and table is None:
        raise EmitRejected("sql= describes an emitted table; it needs table=")
    period = _text(msg["period"], "period", 40) if "period" in msg else None
    scale = msg.get("scale")
    if scale is not None and scale not in SCALES:
        raise EmitRejected(f"scale {scale!r} is not one of {', '.join(SCALES)}")
    units = check_units(msg.get("units"), table, values)
    return Frame(table, values, date, sources, title, query, period, scale, units)


def check_units(
    units: object, table: EmittedTable | None, values: dict[str, int | float] | None
) -> dict[str, str]:
    """``units=``: one unit for every value (or column), or a {name: unit} mapping of known names."""
    names = set(table["columns"] if table else ()) | set(values or ())
    if isinstance(units, str):
        _text(units, "units", MAX_UNIT)
        if values is None and table is None:
            raise EmitRejected("units= given without a table or values")
        if values:
            return {n: units for n in values}
        return {c: units for c in table["columns"]} if table is not None else {}
    if isinstance(units, dict):
        units_map = {
            _text(k, "a unit key", MAX_NAME): _text(v, f"units[{k!r}]", MAX_UNIT)
            for k, v in units.items()
        }
        unknown = sorted(set(units_map) - names)
        if unknown:
            raise EmitRejected(
                f"units names {', '.join(map(repr, unknown))}, which is not a column or a "
                f"value name (have: {', '.join(sorted(names)) or 'none'})"
            )
        return units_map
    if units is None:
        return {}
    raise EmitRejected("units must be one unit for all values or a {name: unit} mapping")


def _workspace_units(workspace: Workspace | None, sources: list[str]) -> dict[str, tuple]:
    """Column -> (unit, scale, dataset) for the datasets named in ``sources``."""
    found: dict[str, tuple] = {}
    if workspace is None:
        return found
    for source in sources:
        spec = workspace.datasets.get(source)
        if spec is None:
            continue
        for col in spec.columns.values():
            if col.unit and col.name not in found:
                found[col.name] = (col.unit, col.scale, spec.name)
    return found


def _unit_label(unit: str | None, scale: str | None) -> str | None:
    if unit and scale:
        return f"{unit} {scale}"
    return unit or scale


def code_literals(code: str) -> frozenset[float]:
    """The numeric literals a piece of code writes (``37.2``, ``-4``), as floats."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return frozenset()
    out: set[float] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            value = float(node.value)  # type: ignore[arg-type]  # an int or float, checked above
            out.add(value)
            out.add(-value)
    return frozenset(out)


def _is_literal(value: float, literals: frozenset[float]) -> bool:
    """Is ``value`` one the code wrote itself? Small whole numbers (indexes, counts, factors
    such as ``iloc[-1]`` or ``* 100``'s neighbours) are not taken for literals."""
    if value.is_integer() and abs(value) <= 10:
        return False
    if value in literals:
        return True
    return any(abs(value - x) <= 1e-12 * max(1.0, abs(x)) for x in literals)


class EmitCollector:
    """Validates emit frames for one call and keeps the refs to issue if the call succeeds.
    ``reads`` is the call's live record of the datasets it read (filled by the host as the
    code reads them); ``code`` is the call's code (for its numeric literals)."""

    def __init__(
        self,
        workspace: Workspace | None,
        draw_id,
        execution_id: str,
        *,
        reads: set[str] | None = None,
        code: str = "",
    ) -> None:
        self.workspace = workspace
        self.draw_id = draw_id
        self.execution_id = execution_id
        self.reads = reads if reads is not None else set()
        self.literals = code_literals(code) if code else frozenset()
        self.pending: list[PendingRef] = []
        self.count = 0

    def accept(self, msg: Mapping[str, object]) -> list[str]:
        """Validate one frame; return the ids of the refs it will become."""
        self.count += 1
        if self.count > MAX_EMITS:
            raise EmitRejected(f"at most {MAX_EMITS} emit_result calls per run")
        f = read_frame(msg)
        read = sorted(self.reads)
        known = _workspace_units(self.workspace, read)
        meta_base: JsonDict = {"execution": self.execution_id, "read": read}
        if read:
            meta_base["sources"] = read
        if f.sources:
            meta_base["declared_sources"] = f.sources
        ids: list[str] = []
        label = f" ({f.title})" if f.title else ""
        if f.table is not None:
            payload = self._table_payload(f, known, meta_base)
            ids.append(self._add("tableRef", payload, f"Emitted table{label}"))
        if f.values is not None:
            payload = self._values_payload(f, known, meta_base)
            ids.append(self._add("valueRef", payload, f"Emitted values{label}"))
        if f.date is not None:
            payload = dict(f.date)
            payload["meta"] = dict(meta_base)
            ids.append(self._add("dateRef", payload, f"Emitted date {f.date['date']}{label}"))
        return ids

    @staticmethod
    def _table_payload(f: Frame, known: dict[str, tuple], meta_base: Mapping[str, object]) -> dict:
        """An emitted table's tableRef payload: units per column (given, else the workspace's)."""
        assert f.table is not None
        col_units: dict[str, str] = {}
        scales: dict[str, str] = {}
        inferred = []
        for col in f.table["columns"]:
            if col in f.units:
                col_units[col] = _unit_label(f.units[col], f.scale) or f.units[col]
            elif col in known:
                unit, col_scale, _ = known[col]
                col_units[col] = _unit_label(unit, col_scale) or unit
                if col_scale:
                    scales[col] = col_scale
                inferred.append(col)
        meta = dict(meta_base, rows=len(f.table["rows"]))
        for key, value in (
            ("title", f.title),
            ("period", f.period),
            ("asOf", f.date["date"] if f.date else None),
            ("scale", f.scale),
            ("scales", scales),
            ("sql", f.query),
            ("units_from_workspace", inferred),
        ):
            if value:
                meta[key] = value
        return {**f.table, "units": col_units, "meta": meta}

    def _values_payload(
        self, f: Frame, known: dict[str, tuple], meta_base: Mapping[str, object]
    ) -> dict:
        """Emitted values' valueRef payload: units per name, and the names written as literals."""
        assert f.values is not None
        v_units: dict[str, str] = {}
        v_scales: dict[str, str] = {}
        inferred = []
        for name in f.values:
            if name in f.units:
                v_units[name] = f.units[name]
            elif name in known:
                unit, v_scale, _ = known[name]
                v_units[name] = unit
                if v_scale:
                    v_scales[name] = v_scale
                inferred.append(name)
        payload: JsonDict = {"values": f.values, "units": v_units}
        if f.scale:
            payload["scale"] = f.scale
        elif v_scales:
            payload["scale"] = v_scales
        if f.period:
            payload["period"] = f.period
        if f.date:
            payload["asOf"] = f.date["date"]
        meta = dict(meta_base)
        if inferred:
            meta["units_from_workspace"] = inferred
        literal = [n for n, v in f.values.items() if _is_literal(float(v), self.literals)]
        if literal:
            meta["literals"] = literal
        payload["meta"] = meta
        return payload

    def _add(self, kind: RefKind, payload: JsonDict, title: str) -> str:
        ref_id = self.draw_id(kind)
        self.pending.append(PendingRef(ref_id, kind, payload, title))
        return ref_id

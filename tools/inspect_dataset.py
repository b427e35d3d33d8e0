"""InspectDataset (WORK): the first step on any dataset question (plans from data).

Reports a dataset's schema (columns, dtypes, units, scales, descriptions from refgate.toml,
non-missing counts, numeric ranges), its row count, period span and latest period, the numeric
metric candidates, and a short head and tail sample. Issues one tableRef: one row per column,
with the rest in ``meta``.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field

from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.payloads import Cell, JsonDict, JsonValue
from refgate.refs import SCHEMA_ROLE
from refgate.tools.dataset_scan import ScanTimeout, estimated_memory, scan_profile
from refgate.tools.engine_call import json_safe
from refgate.tools.frames import (
    infer_period_columns,
    load_frame,
    metric_candidates,
    periods_of,
    unit_label,
)
from refgate.tools.prose_cells import is_text_cell
from refgate.tools.warehouse import MAX_LOAD_ROWS, WarehouseError, redacted, table_rows

if TYPE_CHECKING:
    from refgate.workspace import DatasetSpec

#: Datasets estimated larger than this in memory are profiled by DuckDB, not loaded in pandas.
IN_MEMORY_MAX_BYTES = 256 << 20
#: Above this estimated size, the hint points at sql(): datasets[...] refuses it in the default
#: sandbox (a fifth of its 2 GB address space).
DATASETS_MAX_BYTES = 2048 * (1 << 20) // 5
#: Wall-clock bound of a DuckDB profile (seconds).
SCAN_SECONDS = 120.0

SCHEMA_COLUMNS = ["column", "dtype", "unit", "scale", "description", "non_null", "min", "max"]


class InspectDatasetArgs(ToolArgs):
    dataset: str = Field(
        description="The dataset's name as declared in the workspace (e.g. 'macro', 'sp500')."
    )
    sample_rows: int = Field(
        default=3, ge=0, le=10, description="Rows of head and of tail to show (0-10)."
    )


#: Bounds of what the model sees: columns listed, fields per sample row, characters per cell.
MAX_LISTED_COLUMNS, MAX_SAMPLE_FIELDS, MAX_SAMPLE_CHARS = 200, 50, 200


def _cell(value: object) -> JsonValue:
    value = json_safe(value)
    if isinstance(value, str) and len(value) > MAX_SAMPLE_CHARS:
        return f"{value[:MAX_SAMPLE_CHARS]}... ({len(value):,} characters)"
    return value


def _sample(frame, rows: list, periods) -> list[dict[str, JsonValue]]:
    out = []
    for idx in rows:
        items = list(frame.loc[idx].items())[:MAX_SAMPLE_FIELDS]
        record = {str(k): _cell(v) for k, v in items}
        if periods is not None:
            record = {"period": periods.labels.loc[idx], **record}
        out.append(record)
    return out


@dataclass
class _Profile:
    rows: int
    schema_rows: list[list[Any]]
    period_columns: tuple[str, ...] = ()
    frequency: str | None = None
    first: str | None = None
    latest: str | None = None
    as_of: str | None = None
    metrics: list[str] = field(default_factory=list)
    latest_values: dict[str, JsonValue] = field(default_factory=dict)
    head: list[dict[str, JsonValue]] = field(default_factory=list)
    tail: list[dict[str, JsonValue]] = field(default_factory=list)


def _schema_row(spec, col: str, dtype: str, non_null, lo, hi) -> list[Any]:
    cspec = spec.columns.get(str(col))
    return [
        str(col),
        dtype,
        cspec.unit if cspec else None,
        cspec.scale if cspec else None,
        cspec.description if cspec else "",
        non_null,
        lo,
        hi,
    ]


def _in_memory(spec, frame, n: int) -> _Profile:
    """The profile of a dataset loaded into pandas (small files)."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    periods = periods_of(spec, frame)
    ordered = (
        list(periods.order.sort_values(kind="stable").index)
        if periods is not None
        else list(frame.index)
    )
    schema_rows = []
    for col in frame.columns:
        series = frame[col]
        lo = hi = None
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            valid = series.dropna()
            if len(valid):
                lo, hi = json_safe(valid.min()), json_safe(valid.max())
        elif pd.api.types.is_datetime64_any_dtype(series):
            valid = series.dropna()
            if len(valid):
                lo, hi = valid.min().date().isoformat(), valid.max().date().isoformat()
        schema_rows.append(
            _schema_row(spec, col, str(series.dtype), int(series.notna().sum()), lo, hi)
        )
    profile = _Profile(rows=len(frame), schema_rows=schema_rows)
    if periods is not None:
        profile.period_columns, profile.frequency = tuple(periods.columns), periods.frequency
        labels = periods.labels.loc[ordered].dropna()
        if len(labels):
            profile.first, profile.latest = labels.iloc[0], labels.iloc[-1]
            profile.as_of = periods.as_of.loc[ordered].dropna().iloc[-1]
    profile.metrics = metric_candidates(spec, frame)
    profile.head = _sample(frame, ordered[:n], periods) if n else []
    profile.tail = _sample(frame, ordered[-n:], periods) if n and len(ordered) > n else []
    if periods is not None:
        for metric in profile.metrics:
            valid = frame.loc[ordered, metric].dropna()
            if len(valid):
                idx = valid.index[-1]
                profile.latest_values[metric] = {
                    "value": json_safe(valid.iloc[-1]),
                    "period": periods.labels.loc[idx],
                }
    return profile


def _iso_day(value) -> JsonValue:
    if hasattr(value, "date") and callable(value.date):
        return value.date().isoformat()
    return json_safe(value)


def _order_key(value) -> Hashable:
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    try:
        return pd.Timestamp(value)
    except (TypeError, ValueError):
        return value


def _framed(spec, frame):
    """A sample frame with date-unit columns parsed, as ``load_frame`` does."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    for col in spec.date_columns:
        if col in frame.columns:
            frame[col] = pd.to_datetime(frame[col], errors="coerce")
    return frame


def _scanned(spec, n: int, seconds: float) -> _Profile:
    """The profile of a large dataset, computed by DuckDB without loading it into pandas."""
    scan = scan_profile(
        spec,
        period_columns=lambda sample: infer_period_columns(spec, _framed(spec, sample)),
        metrics=lambda sample: metric_candidates(spec, _framed(spec, sample)),
        sample_rows=n,
        seconds=seconds,
    )
    sample = _framed(spec, scan.sample)
    schema_rows = []
    for col, kind in scan.types.items():
        lo, hi = scan.ranges.get(col, (None, None))
        dtype = str(sample[col].dtype) if col in sample.columns else kind.lower()
        if hasattr(lo, "date") or hasattr(hi, "date"):
            lo, hi = _iso_day(lo), _iso_day(hi)
        else:
            lo, hi = json_safe(lo), json_safe(hi)
        schema_rows.append(_schema_row(spec, col, dtype, scan.non_null.get(col), lo, hi))
    profile = _Profile(rows=scan.rows, schema_rows=schema_rows)
    profile.metrics = metric_candidates(spec, sample)
    labels: dict[Hashable, str] = {}
    if scan.periods is not None and len(scan.periods):
        periods = periods_of(spec, _framed(spec, scan.periods))
        if periods is not None:
            order = periods.order.sort_values(kind="stable").index
            named = periods.labels.loc[order].dropna()
            profile.period_columns, profile.frequency = tuple(periods.columns), periods.frequency
            if len(named):
                profile.first, profile.latest = named.iloc[0], named.iloc[-1]
                profile.as_of = periods.as_of.loc[order].dropna().iloc[-1]
            labels = {
                _order_key(periods.order.loc[i]): periods.labels.loc[i]
                for i in periods.order.index
                if periods.labels.loc[i] is not None
            }
    for part in ("head", "tail"):
        frame = getattr(scan, part)
        if frame is not None and len(frame):
            frame = _framed(spec, frame)
            periods = periods_of(spec, frame)
            frame = frame.astype(object).where(frame.notna(), None)  # NA as null, as pandas has
            setattr(profile, part, _sample(frame, list(frame.index), periods))
    for metric, (value, at) in scan.latest.items():
        profile.latest_values[metric] = {
            "value": json_safe(value),
            "period": labels.get(_order_key(at)),
        }
    return profile


def _origin(spec) -> str:
    """The file name, or the database table (URL without credentials) of a warehouse dataset."""
    if spec.is_warehouse:
        return f"{spec.table} at {redacted(spec.url)}"
    return spec.path.name


def _warehouse(spec, n: int) -> _Profile:
    """A warehouse table's profile: loaded whole (through Ibis) when it is small enough."""
    rows = table_rows(spec)
    if rows > MAX_LOAD_ROWS:
        raise WarehouseError(
            f"the table has {rows:,} rows, more than InspectDataset profiles "
            f"({MAX_LOAD_ROWS:,}); query it with sql() in RunPython"
        )
    return _in_memory(spec, load_frame(spec), n)


def _profile(spec: DatasetSpec, n: int) -> _Profile:
    """The dataset's profile: in memory when it fits, else scanned in bounded time."""
    if spec.is_warehouse:
        return _warehouse(spec, n)
    if estimated_memory(spec) <= IN_MEMORY_MAX_BYTES:
        return _in_memory(spec, load_frame(spec), n)
    return _scanned(spec, n, SCAN_SECONDS)


def _schema_meta(spec: DatasetSpec, profile: _Profile) -> JsonDict:
    """The schema tableRef's ``meta``: where the dataset is from, its periods and samples."""
    latest = profile.latest
    return {
        "dataset": spec.name,
        "description": spec.description,
        "source": spec.source,
        "file": _origin(spec),
        "rows": profile.rows,
        "period_columns": list(profile.period_columns),
        "frequency": profile.frequency,
        "first_period": profile.first,
        "latest_period": latest,
        "asOf": profile.as_of if latest else spec.as_of,
        "labels": list(spec.labels),
        "metric_candidates": profile.metrics,
        "latest_values": profile.latest_values,
        "head": profile.head,
        "tail": profile.tail,
    }


def _listed_columns(schema_rows: list[list[Any]]) -> list[dict[str, Cell]]:
    """The first columns' schema rows as the model reads them (empty cells left out)."""
    return [
        {
            k: v
            for k, v in zip(SCHEMA_COLUMNS, row, strict=True)
            if v not in (None, "") or k in ("column", "dtype")
        }
        for row in schema_rows[:MAX_LISTED_COLUMNS]
    ]


def _hint(spec: DatasetSpec, large: bool) -> str:
    """How RunPython reaches the dataset: as a frame, or through SQL when it is large."""
    if not large:
        return f"in RunPython: df = datasets[{spec.name!r}]"
    return (
        f"in RunPython: sql('SELECT ... FROM \"{spec.name}\" ...') (too large for "
        "datasets[...]: filter and aggregate in SQL)"
    )


def _summary(
    spec: DatasetSpec, profile: _Profile, meta: JsonDict, ref_id: str, large: bool
) -> JsonDict:
    """What the model reads of the profile (the full schema is in the tableRef)."""
    schema_rows = profile.schema_rows
    data: JsonDict = {
        "ref": ref_id,
        "dataset": spec.name,
        "description": spec.description,
        "rows": profile.rows,
        "frequency": meta["frequency"],
        "first_period": profile.first,
        "latest_period": profile.latest,
        "asOf": meta["asOf"],
        "columns": _listed_columns(schema_rows),
        "metric_candidates": profile.metrics,
        "latest_values": profile.latest_values,
        "head": profile.head,
        "tail": profile.tail,
        "hint": _hint(spec, large),
    }
    if len(schema_rows) > MAX_LISTED_COLUMNS:
        data["columns_listed"] = (
            f"the first {MAX_LISTED_COLUMNS} of {len(schema_rows):,} columns (all are in the "
            "tableRef)"
        )
    return data


def inspect_dataset(args: InspectDatasetArgs, ctx: ToolContext) -> ToolResult:
    ws = ctx.workspace
    if ws is None:
        return ToolResult.failure("no workspace is loaded, so there are no datasets to inspect")
    if args.dataset not in ws.datasets:
        known = ", ".join(sorted(ws.datasets)) or "none"
        return ToolResult.failure(f"unknown dataset {args.dataset!r}; datasets: {known}")
    spec = ws.datasets[args.dataset]
    try:
        large = spec.is_warehouse or estimated_memory(spec) > DATASETS_MAX_BYTES
        profile = _profile(spec, args.sample_rows)
    except ScanTimeout as exc:
        return ToolResult.failure(
            f"cannot inspect dataset {spec.name!r} ({_origin(spec)}) in bounded time: {exc}. "
            "Query it directly in RunPython with sql('SELECT ... FROM ...')"
        )
    except Exception as exc:  # unreadable file: a clear error for the model
        return ToolResult.failure(
            f"cannot read dataset {spec.name!r} ({_origin(spec)}): {str(exc)[:2000]}"
        )
    schema_rows, first, latest = profile.schema_rows, profile.first, profile.latest
    meta = _schema_meta(spec, profile)
    units = {r[0]: unit_label(r[2], r[3]) for r in schema_rows if r[2] is not None}
    ref = ctx.issue(
        "tableRef",
        {
            "columns": SCHEMA_COLUMNS,
            "rows": schema_rows,
            "units": {"non_null": "count"},
            "meta": dict(meta, column_units=units, role=SCHEMA_ROLE),
        },
        title=f"Schema of dataset {spec.name} ({profile.rows} rows"
        + (f", {first} to {latest})" if latest else ")"),
        source=f"dataset:{spec.name}",
    )
    data = _summary(spec, profile, meta, ref.id, large)
    # Data cells are data: rows whose text reads like prose are fenced and taint the turn.
    cells = text_cell_rows(profile.head, profile.tail)
    return ToolResult(ok=True, data=data, refs=[ref], untrusted_fields=cells,
                      untrusted_content=bool(cells))  # fmt: skip


def text_cell_rows(head: list[dict[str, JsonValue]], tail: list[dict[str, JsonValue]]) -> list[str]:
    """The sample rows (``head[2]``) holding a text cell (``is_text_cell``)."""
    return [
        f"{part}[{i}]"
        for part, rows in (("head", head), ("tail", tail))
        for i, row in enumerate(rows)
        if any(is_text_cell(v) for v in row.values())
    ]


SPEC = ToolSpec(
    name="InspectDataset",
    description=(
        "Inspect one workspace dataset before computing with it: columns with dtypes, units, "
        "scales and descriptions, row count, period span and latest period, numeric metric "
        "candidates with their latest values, and a short head/tail sample. Issues a tableRef "
        "(one row per column). Use it first on any dataset question."
    ),
    args_schema=InspectDatasetArgs,
    func=inspect_dataset,
    read_only=True,
    issues=("tableRef",),
    origin_tracked=True,
    untrusted_fields={
        "head[]": "a sample row holding a text cell (third parties' prose in the data)",
        "tail[]": "as head[]",
    },
)

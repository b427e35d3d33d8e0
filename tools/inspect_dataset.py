"""InspectDataset (WORK): the first step on any dataset question (seed 000).

Reports a dataset's schema (columns, dtypes, units, scales, descriptions from refgate.toml,
non-missing counts, numeric ranges), its row count, period span and latest period, the numeric
metric candidates, and a short head and tail sample. Issues one tableRef: one row per column,
with the rest in ``meta``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from refgate.tools.base import ToolContext, ToolResult, ToolSpec
from refgate.tools.capabilities import (
    load_frame,
    metric_candidates,
    periods_of,
    unit_label,
)
from refgate.tools.engine_call import json_safe

SCHEMA_COLUMNS = ["column", "dtype", "unit", "scale", "description", "non_null", "min", "max"]


class InspectDatasetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(
        description="The dataset's name as declared in the workspace (e.g. 'macro', 'sp500')."
    )
    sample_rows: int = Field(
        default=3, ge=0, le=10, description="Rows of head and of tail to show (0-10)."
    )


def _sample(frame, rows: list, periods) -> list[dict[str, Any]]:
    out = []
    for idx in rows:
        record = {str(k): json_safe(v) for k, v in frame.loc[idx].items()}
        if periods is not None:
            record = {"period": periods.labels.loc[idx], **record}
        out.append(record)
    return out


def inspect_dataset(args: InspectDatasetArgs, ctx: ToolContext) -> ToolResult:
    ws = ctx.workspace
    if ws is None:
        return ToolResult.failure("no workspace is loaded, so there are no datasets to inspect")
    if args.dataset not in ws.datasets:
        known = ", ".join(sorted(ws.datasets)) or "none"
        return ToolResult.failure(f"unknown dataset {args.dataset!r}; datasets: {known}")
    spec = ws.datasets[args.dataset]
    try:
        frame = load_frame(spec)
    except Exception as exc:  # unreadable file: a clear error for the model
        return ToolResult.failure(f"cannot read dataset {spec.name!r} ({spec.path.name}): {exc}")
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
        cspec = spec.columns.get(str(col))
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
            [
                str(col),
                str(series.dtype),
                cspec.unit if cspec else None,
                cspec.scale if cspec else None,
                cspec.description if cspec else "",
                int(series.notna().sum()),
                lo,
                hi,
            ]
        )
    first = latest = None
    if periods is not None:
        labels = periods.labels.loc[ordered].dropna()
        if len(labels):
            first, latest = labels.iloc[0], labels.iloc[-1]
    metrics = metric_candidates(spec, frame)
    n = args.sample_rows
    head = _sample(frame, ordered[:n], periods) if n else []
    tail = _sample(frame, ordered[-n:], periods) if n and len(ordered) > n else []
    latest_values: dict[str, Any] = {}
    if periods is not None:
        for metric in metrics:
            valid = frame.loc[ordered, metric].dropna()
            if len(valid):
                idx = valid.index[-1]
                latest_values[metric] = {
                    "value": json_safe(valid.iloc[-1]),
                    "period": periods.labels.loc[idx],
                }
    meta = {
        "dataset": spec.name,
        "description": spec.description,
        "source": spec.source,
        "file": spec.path.name,
        "rows": len(frame),
        "period_columns": list(periods.columns) if periods else [],
        "frequency": periods.frequency if periods else None,
        "first_period": first,
        "latest_period": latest,
        "asOf": (
            periods.as_of.loc[ordered].dropna().iloc[-1]
            if periods is not None and latest
            else spec.as_of
        ),
        "labels": list(spec.labels),
        "metric_candidates": metrics,
        "latest_values": latest_values,
        "head": head,
        "tail": tail,
    }
    units = {r[0]: unit_label(r[2], r[3]) for r in schema_rows if r[2] is not None}
    ref = ctx.issue(
        "tableRef",
        {
            "columns": SCHEMA_COLUMNS,
            "rows": schema_rows,
            "units": {"non_null": "count"},
            "meta": dict(meta, column_units=units),
        },
        title=f"Schema of dataset {spec.name} ({len(frame)} rows"
        + (f", {first} to {latest})" if latest else ")"),
        source=f"dataset:{spec.name}",
    )
    data = {
        "ref": ref.id,
        "dataset": spec.name,
        "description": spec.description,
        "rows": len(frame),
        "frequency": meta["frequency"],
        "first_period": first,
        "latest_period": latest,
        "asOf": meta["asOf"],
        "columns": [
            {
                k: v
                for k, v in zip(SCHEMA_COLUMNS, row, strict=True)
                if v not in (None, "") or k in ("column", "dtype")
            }
            for row in schema_rows
        ],
        "metric_candidates": metrics,
        "latest_values": latest_values,
        "head": head,
        "tail": tail,
        "hint": f"in RunPython: df = datasets[{spec.name!r}]",
    }
    return ToolResult(ok=True, data=data, refs=[ref])


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
)

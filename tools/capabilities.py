"""Data capabilities over a workspace's datasets (registered in the engine catalog).

Each function below is a capability: callable by ``EngineCall`` with JSON arguments, as
``engine.<name>(...)`` inside RunPython, and listed by ``ReadCapability`` from its signature and
docstring (the docstrings are the API's documentation; keep them exact). Each returns ``Evidence``
whose ref specs follow the payload conventions of ``refgate.refs``: a valueRef carries
``values``, ``units``, ``scale``, ``period`` and ``asOf``; a tableRef carries ``columns``,
``rows``, ``units`` (scale folded in, e.g. ``"USD billion"``) and ``meta``.

Loading a dataset, its periods and its units live in ``refgate.tools.frames`` (shared with
InspectDataset).
"""

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, SupportsFloat, SupportsIndex

from refgate.catalog.capabilities import EngineEnv, Evidence, RefSpec, capability
from refgate.payloads import Cell, JsonDict
from refgate.tools import frames
from refgate.tools.dataset_scan import count_rows, estimated_memory
from refgate.tools.frames import (
    Periods,
    dataset_spec,
    find_period,
    load_frame,
    metric_candidates,
    numeric_column,
    periods_of,
    sorted_with_periods,
    unit_label,
    unit_of,
    workspace_of,
)
from refgate.tools.warehouse import table_rows

if TYPE_CHECKING:
    from refgate.workspace import DatasetSpec

#: Most rows a capability puts in one tableRef.
MAX_TABLE_ROWS = 2000


def _num(value: SupportsFloat | SupportsIndex | str | None) -> float | int | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(f) or math.isinf(f):
        return None
    if f.is_integer() and abs(f) < 2**53 and not isinstance(value, float):
        return int(f)
    return f


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else float(round(value, digits))


# --------------------------------------------------------------------------- capabilities


def _large_entry(spec: "DatasetSpec") -> JsonDict:
    """A listing entry for a dataset not loaded whole (large, or a warehouse table)."""
    rows = table_rows(spec) if spec.is_warehouse else count_rows(spec)
    return {
        "name": spec.name,
        "rows": rows,
        "first_period": None,
        "latest_period": None,
        "frequency": spec.frequency,
        "as_of": spec.as_of,
        "description": spec.description,
        "metrics": [],
        "note": "not loaded whole: InspectDataset for its profile, sql() in RunPython to compute",
    }


#: The listing entry's keys the listing's tableRef carries, in its column order.
_LISTED = ("name", "rows", "first_period", "latest_period", "frequency", "as_of", "description")


def _listing_entry(name: str, spec: "DatasetSpec") -> JsonDict:
    """One dataset's listing entry: its rows, period span and metrics (a large one unloaded)."""
    if spec.is_warehouse or estimated_memory(spec) > frames.LOAD_MAX_BYTES:
        return _large_entry(spec)
    frame = load_frame(spec)
    periods = periods_of(spec, frame)
    first = latest = None
    if periods is not None:
        valid = periods.labels[periods.order.sort_values(kind="stable").index].dropna()
        if len(valid):
            first, latest = valid.iloc[0], valid.iloc[-1]
    return {
        "name": name,
        "rows": len(frame),
        "first_period": first,
        "latest_period": latest,
        "frequency": periods.frequency if periods else None,
        "as_of": spec.as_of,
        "description": spec.description,
        "metrics": metric_candidates(spec, frame),
    }


@capability
def list_datasets(*, env: EngineEnv) -> Evidence:
    """List the workspace's datasets: name, rows, period span, frequency and description.

    Returns {"datasets": [{"name", "rows", "first_period", "latest_period", "frequency",
    "as_of", "description", "metrics"}]} and a tableRef of the same listing.
    """
    ws = workspace_of(env)
    entries = [_listing_entry(name, spec) for name, spec in sorted(ws.datasets.items())]
    columns = ["dataset", *_LISTED[1:]]
    rows = [[e[key] for key in _LISTED] for e in entries]
    ref = RefSpec(
        "tableRef",
        {
            "columns": columns,
            "rows": rows,
            "units": {"rows": "count"},
            "meta": {"workspace": ws.name, "what": "dataset listing"},
        },
        title=f"Datasets of workspace {ws.name}",
        source=f"workspace:{ws.name}",
    )
    return Evidence({"datasets": entries}, [ref])


@capability
def latest_value(dataset: str, column: str, *, env: EngineEnv) -> Evidence:
    """The most recent non-missing value of a column, with its period and as-of date.

    dataset: a dataset name (see list_datasets); column: a numeric column.
    Returns {"dataset", "column", "value", "unit", "scale", "period", "asOf"} and a valueRef
    {"values": {column: value}, "units": {column: unit}, "scale", "period", "asOf"}.
    """
    spec = dataset_spec(env, dataset)
    frame, periods = sorted_with_periods(spec, load_frame(spec))
    series = numeric_column(spec, frame, column).dropna()
    row = series.index[-1]
    return _value_evidence(spec, column, series.loc[row], periods, row, "latest")


@capability
def value_at(dataset: str, column: str, period: str, *, env: EngineEnv) -> Evidence:
    """The value of a column in one period ("2008Q4", "2008", "2008-12" or a date).

    Returns {"dataset", "column", "value", "unit", "scale", "period", "asOf"} and a valueRef.
    """
    spec = dataset_spec(env, dataset)
    frame, periods = sorted_with_periods(spec, load_frame(spec))
    series = numeric_column(spec, frame, column)
    row = find_period(periods, period, frame.index)
    if _num(series.loc[row]) is None:
        raise ValueError(f"{dataset}.{column} is missing in {periods.labels.loc[row]}")
    return _value_evidence(spec, column, series.loc[row], periods, row, "at")


def _value_evidence_of(spec, data: Mapping[str, object], payload: JsonDict, title: str) -> Evidence:
    """A capability's data, backed by one valueRef of the dataset."""
    return Evidence(
        data, [RefSpec("valueRef", payload, title=title, source=f"dataset:{spec.name}")]
    )


def _value_evidence(spec, column, raw, periods: "Periods", row, how: str) -> Evidence:
    unit, scale = unit_of(spec, column)
    value = _num(raw)
    label, as_of = periods.labels.loc[row], periods.as_of.loc[row]
    payload: JsonDict = {
        "values": {column: value},
        "units": {column: unit} if unit else {},
        "period": label,
        "asOf": as_of,
        "meta": {"dataset": spec.name, "column": column, "frequency": periods.frequency},
    }
    if scale:
        payload["scale"] = scale
    data = {
        "dataset": spec.name,
        "column": column,
        "value": value,
        "unit": unit,
        "scale": scale,
        "period": label,
        "asOf": as_of,
    }
    title = f"{spec.name}.{column} {'latest' if how == 'latest' else 'in'} {label}"
    return _value_evidence_of(spec, data, payload, title)


def _series_index(index, periods: "Periods", start: str | None, end: str | None, last: int | None):
    """The rows of a series between ``start`` and ``end`` (inclusive), the ``last`` of them."""
    if start is not None:
        pos = list(index).index(find_period(periods, start, index))
        index = index[pos:]
    if end is not None:
        pos = list(index).index(find_period(periods, end, index))
        index = index[: pos + 1]
    if last is not None:
        if not isinstance(last, int) or last < 1:
            raise ValueError("last must be a whole number >= 1")
        index = index[-last:]
    return index


@capability
def series(
    dataset: str,
    column: str,
    start: str | None = None,
    end: str | None = None,
    last: int | None = None,
    *,
    env: EngineEnv,
) -> Evidence:
    """A column over time as a table of (period, value), oldest first.

    start/end: optional period bounds, inclusive ("1990Q1", "2000", "2008-06"); last: keep only
    the last N rows. At most 2000 rows. Returns {"columns": ["period", column], "rows", "unit",
    "scale"} and a tableRef whose units fold in the scale ("USD billion").
    """
    spec = dataset_spec(env, dataset)
    frame, periods = sorted_with_periods(spec, load_frame(spec))
    values = numeric_column(spec, frame, column)
    index = _series_index(frame.index, periods, start, end, last)
    if len(index) > MAX_TABLE_ROWS:
        raise ValueError(
            f"{len(index)} rows; a series returns at most {MAX_TABLE_ROWS}: narrow start/end or "
            "use last="
        )
    rows = [[periods.labels.loc[i], _num(values.loc[i])] for i in index]
    unit, scale = unit_of(spec, column)
    label = unit_label(unit, scale)
    first = rows[0][0] if rows else None
    final = rows[-1][0] if rows else None
    payload = {
        "columns": ["period", column],
        "rows": rows,
        "units": {column: label} if label else {},
        "meta": {
            "dataset": spec.name,
            "metric": column,
            "frequency": periods.frequency,
            "start": first,
            "end": final,
            "asOf": periods.as_of.loc[index[-1]] if len(index) else None,
            "scale": scale,
        },
    }
    ref = RefSpec(
        "tableRef",
        payload,
        title=f"{spec.name}.{column}, {first} to {final}",
        source=f"dataset:{spec.name}",
    )
    return Evidence(
        {"columns": ["period", column], "rows": rows, "unit": unit, "scale": scale}, [ref]
    )


def _within_period(frame, values, periods: "Periods", period: str | None):
    """The rows of one period (``period``, else the latest with a value) of a labelled
    dataset, their values, and the filter that says so."""
    if period is None:
        latest = periods.order.loc[values.dropna().index].max()
        index = frame.index[periods.order == latest]
    else:
        label = periods.labels.loc[find_period(periods, period, frame.index)]
        index = frame.index[periods.labels == label]
    return frame.loc[index], values.loc[index], f"period = {periods.labels.loc[index[0]]}"


def _ranking_rows(ordered, frame, labels: list[str], periods: "Periods | None") -> list[list[Cell]]:
    """One row per ranked value: its rank, its labels (or its period), the value."""
    rows: list[list[Cell]] = []
    for rank, (idx, value) in enumerate(ordered.items(), start=1):
        if labels:
            ids = [None if frame.at[idx, c] is None else str(frame.at[idx, c]) for c in labels]
        else:
            ids = [periods.labels.loc[idx] if periods is not None else str(idx)]
        rows.append([rank, *ids, _num(value)])
    return rows


def _ranking_as_of(spec, periods: "Periods | None", labels: list[str], ordered) -> str | None:
    """A ranking's as-of date: the ranked period's, the dataset's when it has no periods."""
    if periods is not None and labels:
        return periods.as_of.loc[ordered.index[0]] if len(ordered) else None
    if periods is None:
        return spec.as_of
    return None


@capability
def top_n(
    dataset: str,
    column: str,
    n: int = 10,
    ascending: bool = False,
    period: str | None = None,
    *,
    env: EngineEnv,
) -> Evidence:
    """Rank the rows of a dataset by a numeric column; returns a ranking table with a rank column.

    n: how many rows (1-100); ascending: True ranks the smallest first. Rows missing the value are
    left out (counted in meta.excluded_missing). For a dataset with identifier labels (sp500:
    Symbol, Name, Sector) the rows are entities; for a time series they are periods. period:
    optional, for a dataset with both labels and periods, the period to rank within.
    Returns {"columns": ["rank", labels..., column], "rows", "universe", "excluded_missing"} and
    a tableRef with meta {metric, order, universe, filter, asOf}.
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100:
        raise ValueError("n must be a whole number from 1 to 100")
    spec = dataset_spec(env, dataset)
    frame = load_frame(spec)
    values = numeric_column(spec, frame, column)
    periods = periods_of(spec, frame)
    labels = [c for c in spec.labels if c in frame.columns]
    filter_text = None
    if labels and periods is not None:
        frame, values, filter_text = _within_period(frame, values, periods, period)
    elif period is not None:
        raise ValueError(f"dataset {dataset!r} has no labelled rows per period; drop period=")
    universe = len(values)
    valid = values.dropna()
    ordered = valid.sort_values(ascending=ascending, kind="stable").iloc[:n]
    unit, scale = unit_of(spec, column)
    columns = ["rank", *labels, column] if labels else ["rank", "period", column]
    rows = _ranking_rows(ordered, frame, labels, periods)
    as_of = _ranking_as_of(spec, periods, labels, ordered)
    meta = {
        "dataset": spec.name,
        "metric": column,
        "order": "ascending" if ascending else "descending",
        "n": n,
        "universe": universe,
        "excluded_missing": universe - len(valid),
        "filter": filter_text,
        "asOf": as_of,
        "scale": scale,
    }
    return _ranking_evidence(spec, column, columns, rows, meta)


def _ranking_evidence(
    spec: "DatasetSpec", column: str, columns: list[str], rows: list[list[Cell]], meta: JsonDict
) -> Evidence:
    """A ranking's data and the tableRef that backs it."""
    unit, scale = unit_of(spec, column)
    label = unit_label(unit, scale)
    ref = RefSpec(
        "tableRef",
        {"columns": columns, "rows": rows, "units": {column: label} if label else {}, "meta": meta},
        title=f"Top {len(rows)} of {spec.name} by {column} ({meta['order']})",
        source=f"dataset:{spec.name}",
    )
    data = {
        "columns": columns,
        "rows": rows,
        "unit": unit,
        "scale": scale,
        **{k: meta[k] for k in ("universe", "excluded_missing", "filter", "asOf", "order")},
    }
    return Evidence(data, [ref])


def _change_rows(frame, values, per: "Periods", periods: int, start, end) -> tuple:
    """The start and end rows of a change: as given, else the latest value and ``periods``
    rows before it."""
    valid_index = values.dropna().index
    end_row = find_period(per, end, frame.index) if end is not None else valid_index[-1]
    if start is not None:
        return find_period(per, start, frame.index), end_row
    positions = list(frame.index)
    pos = positions.index(end_row) - periods
    if pos < 0:
        raise ValueError(f"no period {periods} rows before {per.labels.loc[end_row]}")
    return positions[pos], end_row


def _change_values(
    v0: float | int,
    v1: float | int,
    change: float | None,
    pct: float | None,
    unit: str | None,
    change_unit: str | None,
) -> tuple[dict[str, float | int | None], dict[str, str]]:
    """A change's valueRef values (start, end, change, percent change) and their units."""
    values_out: dict[str, float | int | None] = {
        "start_value": v0,
        "end_value": v1,
        "change": change,
    }
    units_out = {
        k: u for k, u in (("start_value", unit), ("end_value", unit), ("change", change_unit)) if u
    }
    if pct is not None:
        values_out["pct_change"] = pct
        units_out["pct_change"] = "%"
    return values_out, units_out


def _endpoint_values(
    values, per: "Periods", start_row: object, end_row: object, what: str
) -> tuple[float | int, float | int]:
    """The values at the start and end rows of a change; a missing one is an error."""
    v0, v1 = _num(values.loc[start_row]), _num(values.loc[end_row])
    if v0 is None or v1 is None:
        missing = per.labels.loc[start_row] if v0 is None else per.labels.loc[end_row]
        raise ValueError(f"{what} is missing in {missing}")
    return v0, v1


@capability
def period_change(
    dataset: str,
    column: str,
    periods: int = 1,
    start: str | None = None,
    end: str | None = None,
    *,
    env: EngineEnv,
) -> Evidence:
    """Change of a column between two periods: absolute change and percent change.

    By default end is the latest period with a value and start is `periods` rows earlier
    (periods=1: the previous quarter/month/year; periods=4 on quarterly data: a year earlier).
    start/end: explicit periods ("2007Q4", "2009Q2"). For a column in percent the change is in
    percentage points. Returns {"start": {"period", "value"}, "end": {...}, "change",
    "pct_change", "unit"} and a valueRef with values start_value, end_value, change, pct_change.
    """
    if isinstance(periods, bool) or not isinstance(periods, int) or periods < 1:
        raise ValueError("periods must be a whole number >= 1")
    spec = dataset_spec(env, dataset)
    frame, per = sorted_with_periods(spec, load_frame(spec))
    values = numeric_column(spec, frame, column)
    start_row, end_row = _change_rows(frame, values, per, periods, start, end)
    v0, v1 = _endpoint_values(values, per, start_row, end_row, f"{dataset}.{column}")
    change = _round(v1 - v0)
    pct = _round((v1 - v0) / abs(v0) * 100, 4) if v0 else None
    unit, scale = unit_of(spec, column)
    change_unit = "percentage points" if unit in ("%", "percent") else unit
    values_out, units_out = _change_values(v0, v1, change, pct, unit, change_unit)
    s_label, e_label = per.labels.loc[start_row], per.labels.loc[end_row]
    payload: JsonDict = {
        "values": values_out,
        "units": units_out,
        "period": f"{s_label} to {e_label}",
        "asOf": per.as_of.loc[end_row],
        "start": per.as_of.loc[start_row],
        "end": per.as_of.loc[end_row],
        "meta": {
            "dataset": spec.name,
            "column": column,
            "start_period": s_label,
            "end_period": e_label,
            "frequency": per.frequency,
        },
    }
    if scale:
        payload["scale"] = {"start_value": scale, "end_value": scale, "change": scale}
    data = {
        "dataset": spec.name,
        "column": column,
        "start": {"period": s_label, "value": v0},
        "end": {"period": e_label, "value": v1},
        "change": change,
        "pct_change": pct,
        "unit": unit,
        "change_unit": change_unit,
        "scale": scale,
    }
    title = f"{spec.name}.{column}: {s_label} to {e_label}"
    return _value_evidence_of(spec, data, payload, title)


@capability
def column_stats(dataset: str, column: str, *, env: EngineEnv) -> Evidence:
    """Summary of a numeric column: count, mean, median, min and max (with the periods or rows
    where the min and max occur).

    Returns {"count", "mean", "median", "min": {"value", "at"}, "max": {"value", "at"}, "unit"}
    and a valueRef with values count, mean, median, min, max.
    """
    spec = dataset_spec(env, dataset)
    frame = load_frame(spec)
    values = numeric_column(spec, frame, column).dropna()
    periods = periods_of(spec, frame)
    labels = [c for c in spec.labels if c in frame.columns]

    def where(idx):
        if periods is not None:
            return periods.labels.loc[idx]
        if labels:
            return str(frame.at[idx, labels[0]])
        return f"row {idx}"

    lo, hi = values.idxmin(), values.idxmax()
    unit, scale = unit_of(spec, column)
    out = {
        "count": len(values),
        "mean": _round(float(values.mean())),
        "median": _round(float(values.median())),
        "min": _num(values.min()),
        "max": _num(values.max()),
    }
    units = {k: unit for k in ("mean", "median", "min", "max")} if unit else {}
    units["count"] = "count"
    payload: JsonDict = {
        "values": out,
        "units": units,
        "meta": {"dataset": spec.name, "column": column, "min_at": where(lo), "max_at": where(hi)},
    }
    if scale:
        payload["scale"] = {k: scale for k in ("mean", "median", "min", "max")}
    if spec.as_of and periods is None:
        payload["asOf"] = spec.as_of
    data = {
        "dataset": spec.name,
        "column": column,
        "count": out["count"],
        "mean": out["mean"],
        "median": out["median"],
        "min": {"value": out["min"], "at": where(lo)},
        "max": {"value": out["max"], "at": where(hi)},
        "unit": unit,
        "scale": scale,
    }
    return _value_evidence_of(spec, data, payload, f"{spec.name}.{column} summary")


#: The dataset capabilities, registered by ``refgate.tools.registry`` (the tools layer's list).
CAPABILITIES = (
    list_datasets,
    latest_value,
    value_at,
    series,
    top_n,
    period_change,
    column_stats,
)

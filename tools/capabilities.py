"""Data capabilities over a workspace's datasets (registered in the engine catalog).

Each function below is a capability: callable by ``EngineCall`` with JSON arguments, as
``engine.<name>(...)`` inside RunPython, and listed by ``ReadCapability`` from its signature and
docstring (the docstrings are the API's documentation; keep them exact). Each returns ``Evidence``
whose ref specs follow the payload conventions of ``refgate.refs``: a valueRef carries
``values``, ``units``, ``scale``, ``period`` and ``asOf``; a tableRef carries ``columns``,
``rows``, ``units`` (scale folded in, e.g. ``"USD billion"``) and ``meta``.

The module also holds the dataset helpers shared by InspectDataset: loading a dataset (cached by
file size and mtime), reading its periods (``1959Q1``, ``2026-01``, ``2009``) and its units.
"""

import math
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from refgate.engine import EngineEnv, Evidence, RefSpec, capability
from refgate.tools.dataset_scan import count_rows, estimated_memory
from refgate.tools.warehouse import load_table, table_rows

if TYPE_CHECKING:
    import pandas as pd

    from refgate.workspace import DatasetSpec, Workspace

#: Most rows a capability puts in one tableRef.
MAX_TABLE_ROWS = 2000
#: Largest estimated in-memory size of a dataset the capabilities load whole into pandas.
LOAD_MAX_BYTES = 1 << 30

_FRAMES: dict[tuple, Any] = {}
_FRAMES_LOCK = threading.Lock()


# --------------------------------------------------------------------------- dataset helpers


def _workspace(env: EngineEnv | None) -> "Workspace":
    ws = env.workspace if env is not None else None
    if ws is None:
        raise ValueError("no workspace is loaded, so there are no datasets to read")
    return ws


def dataset_spec(env: EngineEnv | None, name: str) -> "DatasetSpec":
    ws = _workspace(env)
    if not isinstance(name, str) or name not in ws.datasets:
        known = ", ".join(sorted(ws.datasets)) or "none"
        raise ValueError(f"unknown dataset {name!r}; datasets: {known}")
    return ws.datasets[name]


def load_frame(spec: "DatasetSpec") -> "pd.DataFrame":
    """The dataset as a DataFrame (date-unit columns parsed); cached until the file changes."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    if spec.is_warehouse:  # a table in a database: loaded whole only when it is small
        return load_table(spec)
    size = estimated_memory(spec)
    if size > LOAD_MAX_BYTES:
        raise ValueError(
            f"dataset {spec.name!r} is about {size / (1 << 30):.1f} GB in memory, too large to "
            "load whole for this capability: compute with RunPython and sql('SELECT ... FROM "
            f'"{spec.name}" ...\')'
        )
    path = spec.checked_path()  # confined at load time; refused if swapped for a symlink since
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns, spec.date_columns)
    with _FRAMES_LOCK:
        cached = _FRAMES.get(key)
    if cached is not None:
        return cached
    frame = pd.read_parquet(path) if spec.format == "parquet" else pd.read_csv(path)
    for col in spec.date_columns:
        if col in frame.columns:
            frame[col] = pd.to_datetime(frame[col], errors="coerce")
    with _FRAMES_LOCK:
        for old in [k for k in _FRAMES if k[0] == key[0]]:
            del _FRAMES[old]
        _FRAMES[key] = frame
    return frame


def unit_of(spec: "DatasetSpec", column: str) -> tuple[str | None, str | None]:
    """``(unit, scale)`` declared for ``column`` in refgate.toml (``(None, None)`` if none)."""
    col = spec.columns.get(column)
    return (col.unit, col.scale) if col else (None, None)


def unit_label(unit: str | None, scale: str | None) -> str | None:
    """One unit string with the scale folded in (``"USD billion"``), as tableRef units use."""
    if unit and scale:
        return f"{unit} {scale}"
    return unit or scale


@dataclass
class Periods:
    """The period of each row: labels (``1959Q1``), as-of dates (ISO) and a sort order."""

    columns: tuple[str, ...]
    frequency: str | None
    labels: "pd.Series"
    as_of: "pd.Series"
    order: "pd.Series"


def _infer_period_columns(spec: "DatasetSpec", frame: "pd.DataFrame") -> tuple[str, ...]:
    if spec.period:
        return spec.period
    lower = {c.lower(): c for c in frame.columns}
    if "year" in lower and "quarter" in lower:
        return (lower["year"], lower["quarter"])
    if "year" in lower and "month" in lower:
        return (lower["year"], lower["month"])
    if spec.date_columns:
        return (spec.date_columns[0],)
    for name in ("date", "period", "month"):
        if name in lower:
            return (lower[name],)
    if "year" in lower:
        return (lower["year"],)
    return ()


def periods_of(spec: "DatasetSpec", frame: "pd.DataFrame") -> "Periods | None":
    """Each row's period, or None for a dataset without one (a snapshot such as sp500)."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    cols = _infer_period_columns(spec, frame)
    if not cols:
        return None
    freq = spec.frequency
    if len(cols) == 2:
        year = pd.to_numeric(frame[cols[0]], errors="coerce")
        sub = pd.to_numeric(frame[cols[1]], errors="coerce")
        quarterly = cols[1].lower() == "quarter" or freq == "quarterly"
        freq = "quarterly" if quarterly else "monthly"
        ok = year.notna() & sub.notna()
        y = year.where(ok, 1970).astype(int)
        s = sub.where(ok, 1).astype(int)
        if quarterly:
            index = pd.PeriodIndex.from_fields(year=y, quarter=s, freq="Q")
        else:
            index = pd.PeriodIndex.from_fields(year=y, month=s, freq="M")
        labels = pd.Series(index.astype(str), index=frame.index).where(ok, None)
        ends = pd.Series(index.end_time.normalize().strftime("%Y-%m-%d"), index=frame.index).where(
            ok, None
        )
        return Periods(cols, freq, labels, ends, year * 100 + sub)
    col = cols[0]
    series = frame[col]
    if col.lower() == "year" or (freq == "annual" and pd.api.types.is_numeric_dtype(series)):
        year = pd.to_numeric(series, errors="coerce")
        labels = year.map(lambda y: None if pd.isna(y) else str(int(y)))
        ends = year.map(lambda y: None if pd.isna(y) else f"{int(y)}-12-31")
        return Periods(cols, "annual", labels, ends, year)
    stamps = (
        series
        if pd.api.types.is_datetime64_any_dtype(series)
        else pd.to_datetime(series, errors="coerce")
    )
    if freq is None:
        gaps = stamps.dropna().sort_values().diff().dt.days.dropna()
        median = float(gaps.median()) if len(gaps) else 0.0
        freq = (
            "annual"
            if median >= 360
            else "quarterly"
            if median >= 85
            else "monthly"
            if median >= 27
            else "weekly"
            if median >= 6
            else "daily"
        )
    fmt = {"annual": "%Y", "monthly": "%Y-%m"}.get(freq, "%Y-%m-%d")
    valid = stamps.notna()
    if freq == "quarterly":
        labels = stamps.dt.to_period("Q").astype(str)
    else:
        labels = stamps.dt.strftime(fmt)
    labels = labels.where(valid, None)
    ends = stamps.dt.strftime("%Y-%m-%d").where(valid, None)
    return Periods(cols, freq, labels, ends, stamps)


def metric_candidates(spec: "DatasetSpec", frame: "pd.DataFrame") -> list[str]:
    """Numeric columns that are measurements (not periods, identifiers, years or dates)."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    skip = set(_infer_period_columns(spec, frame)) | set(spec.labels)
    out = []
    for col in frame.columns:
        if col in skip or not pd.api.types.is_numeric_dtype(frame[col]):
            continue
        if pd.api.types.is_bool_dtype(frame[col]):
            continue
        unit, _ = unit_of(spec, col)
        if unit in ("date", "years", "text"):
            continue
        out.append(str(col))
    return out


def _numeric_column(spec: "DatasetSpec", frame: "pd.DataFrame", column: str) -> "pd.Series":
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    if not isinstance(column, str) or column not in frame.columns:
        raise ValueError(
            f"dataset {spec.name!r} has no column {column!r}; columns: {', '.join(map(str, frame.columns))}"
        )
    series = pd.to_numeric(frame[column], errors="coerce")
    if series.notna().sum() == 0:
        raise ValueError(f"column {column!r} of {spec.name!r} has no numeric values")
    return series


def _sorted_with_periods(
    spec: "DatasetSpec", frame: "pd.DataFrame"
) -> "tuple[pd.DataFrame, Periods]":
    periods = periods_of(spec, frame)
    if periods is None:
        as_of = f" (a snapshot as of {spec.as_of})" if spec.as_of else ""
        raise ValueError(
            f"dataset {spec.name!r} has no period column{as_of}; use top_n for rankings or "
            "RunPython for lookups"
        )
    order = periods.order.sort_values(kind="stable").index
    return frame.loc[order], periods


def find_period(periods: "Periods", text: Any, index) -> Any:
    """The row label (index) of the period named ``text`` (``2008Q4``, ``2008``, ``2008-12``)."""
    # deferred: pandas is heavy to import; paid on first use
    import pandas as pd

    wanted = str(text).strip()
    labels = periods.labels.loc[index]
    hits = labels[labels == wanted]
    if len(hits):
        return hits.index[-1]
    match = re.fullmatch(r"(\d{4})\s*-?\s*[Qq]([1-4])", wanted)
    try:
        if match:
            target = pd.Period(f"{match.group(1)}Q{match.group(2)}", freq="Q")
        else:
            target = pd.Period(wanted)
    except (ValueError, TypeError):
        target = None
    if target is not None:
        ends = pd.to_datetime(periods.as_of.loc[index], errors="coerce")
        inside = ends[(ends >= target.start_time) & (ends <= target.end_time)]
        if len(inside):
            return inside.index[-1]
    valid = labels.dropna()
    span = f"{valid.iloc[0]} to {valid.iloc[-1]}" if len(valid) else "none"
    raise ValueError(f"no period {wanted!r} in this dataset (periods run {span})")


def _num(value: Any) -> float | int | None:
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


def _large_entry(spec: "DatasetSpec") -> dict[str, Any]:
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


@capability
def list_datasets(*, env: EngineEnv) -> Evidence:
    """List the workspace's datasets: name, rows, period span, frequency and description.

    Returns {"datasets": [{"name", "rows", "first_period", "latest_period", "frequency",
    "as_of", "description", "metrics"}]} and a tableRef of the same listing.
    """
    ws = _workspace(env)
    entries = []
    for name, spec in sorted(ws.datasets.items()):
        if spec.is_warehouse or estimated_memory(spec) > LOAD_MAX_BYTES:
            entries.append(_large_entry(spec))
            continue
        frame = load_frame(spec)
        periods = periods_of(spec, frame)
        first = latest = None
        if periods is not None:
            valid = periods.labels[periods.order.sort_values(kind="stable").index].dropna()
            if len(valid):
                first, latest = valid.iloc[0], valid.iloc[-1]
        entries.append(
            {
                "name": name,
                "rows": len(frame),
                "first_period": first,
                "latest_period": latest,
                "frequency": periods.frequency if periods else None,
                "as_of": spec.as_of,
                "description": spec.description,
                "metrics": metric_candidates(spec, frame),
            }
        )
    columns = [
        "dataset",
        "rows",
        "first_period",
        "latest_period",
        "frequency",
        "as_of",
        "description",
    ]
    rows = [
        [
            e["name"],
            e["rows"],
            e["first_period"],
            e["latest_period"],
            e["frequency"],
            e["as_of"],
            e["description"],
        ]
        for e in entries
    ]
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
    frame, periods = _sorted_with_periods(spec, load_frame(spec))
    series = _numeric_column(spec, frame, column).dropna()
    row = series.index[-1]
    return _value_evidence(spec, column, series.loc[row], periods, row, "latest")


@capability
def value_at(dataset: str, column: str, period: str, *, env: EngineEnv) -> Evidence:
    """The value of a column in one period ("2008Q4", "2008", "2008-12" or a date).

    Returns {"dataset", "column", "value", "unit", "scale", "period", "asOf"} and a valueRef.
    """
    spec = dataset_spec(env, dataset)
    frame, periods = _sorted_with_periods(spec, load_frame(spec))
    series = _numeric_column(spec, frame, column)
    row = find_period(periods, period, frame.index)
    if _num(series.loc[row]) is None:
        raise ValueError(f"{dataset}.{column} is missing in {periods.labels.loc[row]}")
    return _value_evidence(spec, column, series.loc[row], periods, row, "at")


def _value_evidence(spec, column, raw, periods: "Periods", row, how: str) -> Evidence:
    unit, scale = unit_of(spec, column)
    value = _num(raw)
    label, as_of = periods.labels.loc[row], periods.as_of.loc[row]
    payload: dict[str, Any] = {
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
    return Evidence(
        data, [RefSpec("valueRef", payload, title=title, source=f"dataset:{spec.name}")]
    )


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
    frame, periods = _sorted_with_periods(spec, load_frame(spec))
    values = _numeric_column(spec, frame, column)
    index = frame.index
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
    values = _numeric_column(spec, frame, column)
    periods = periods_of(spec, frame)
    labels = [c for c in spec.labels if c in frame.columns]
    filter_text = None
    if labels and periods is not None:
        index = frame.index
        if period is None:
            latest = periods.order.loc[values.dropna().index].max()
            index = frame.index[periods.order == latest]
        else:
            label = periods.labels.loc[find_period(periods, period, frame.index)]
            index = frame.index[periods.labels == label]
        frame, values = frame.loc[index], values.loc[index]
        filter_text = f"period = {periods.labels.loc[index[0]]}"
    elif period is not None:
        raise ValueError(f"dataset {dataset!r} has no labelled rows per period; drop period=")
    universe = len(values)
    valid = values.dropna()
    ordered = valid.sort_values(ascending=ascending, kind="stable").iloc[:n]
    unit, scale = unit_of(spec, column)
    columns = ["rank", *labels, column] if labels else ["rank", "period", column]
    rows = []
    for rank, (idx, value) in enumerate(ordered.items(), start=1):
        if labels:
            ids = [None if frame.at[idx, c] is None else str(frame.at[idx, c]) for c in labels]
        else:
            ids = [periods.labels.loc[idx] if periods is not None else str(idx)]
        rows.append([rank, *ids, _num(value)])
    if periods is not None and labels:
        as_of = periods.as_of.loc[ordered.index[0]] if len(ordered) else None
    elif periods is None:
        as_of = spec.as_of
    else:
        as_of = None
    label = unit_label(unit, scale)
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
    frame, per = _sorted_with_periods(spec, load_frame(spec))
    values = _numeric_column(spec, frame, column)
    valid_index = values.dropna().index
    end_row = find_period(per, end, frame.index) if end is not None else valid_index[-1]
    if start is not None:
        start_row = find_period(per, start, frame.index)
    else:
        positions = list(frame.index)
        pos = positions.index(end_row) - periods
        if pos < 0:
            raise ValueError(f"no period {periods} rows before {per.labels.loc[end_row]}")
        start_row = positions[pos]
    v0, v1 = _num(values.loc[start_row]), _num(values.loc[end_row])
    if v0 is None or v1 is None:
        missing = per.labels.loc[start_row] if v0 is None else per.labels.loc[end_row]
        raise ValueError(f"{dataset}.{column} is missing in {missing}")
    change = _round(v1 - v0)
    pct = _round((v1 - v0) / abs(v0) * 100, 4) if v0 else None
    unit, scale = unit_of(spec, column)
    change_unit = "percentage points" if unit in ("%", "percent") else unit
    values_out = {"start_value": v0, "end_value": v1, "change": change}
    units_out = {
        k: u for k, u in (("start_value", unit), ("end_value", unit), ("change", change_unit)) if u
    }
    if pct is not None:
        values_out["pct_change"] = pct
        units_out["pct_change"] = "%"
    s_label, e_label = per.labels.loc[start_row], per.labels.loc[end_row]
    payload: dict[str, Any] = {
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
    return Evidence(
        data, [RefSpec("valueRef", payload, title=title, source=f"dataset:{spec.name}")]
    )


@capability
def column_stats(dataset: str, column: str, *, env: EngineEnv) -> Evidence:
    """Summary of a numeric column: count, mean, median, min and max (with the periods or rows
    where the min and max occur).

    Returns {"count", "mean", "median", "min": {"value", "at"}, "max": {"value", "at"}, "unit"}
    and a valueRef with values count, mean, median, min, max.
    """
    spec = dataset_spec(env, dataset)
    frame = load_frame(spec)
    values = _numeric_column(spec, frame, column).dropna()
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
    payload: dict[str, Any] = {
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
    return Evidence(
        data,
        [
            RefSpec(
                "valueRef",
                payload,
                title=f"{spec.name}.{column} summary",
                source=f"dataset:{spec.name}",
            )
        ],
    )

"""Dataset frames for the data capabilities and InspectDataset: a dataset loaded as a DataFrame
(cached by file size and mtime, refused when too large for memory), its periods (``1959Q1``,
``2026-01``, ``2009``: labels, as-of dates, order) and its declared units."""

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from refgate.catalog.capabilities import EngineEnv
from refgate.tools.dataset_scan import estimated_memory
from refgate.tools.warehouse import load_table

if TYPE_CHECKING:
    import pandas as pd

    from refgate.workspace import DatasetSpec, Workspace

#: Largest estimated in-memory size of a dataset the capabilities load whole into pandas.
LOAD_MAX_BYTES = 1 << 30

_FRAMES: dict[tuple, Any] = {}
_FRAMES_LOCK = threading.Lock()


def workspace_of(env: EngineEnv | None) -> "Workspace":
    ws = env.workspace if env is not None else None
    if ws is None:
        raise ValueError("no workspace is loaded, so there are no datasets to read")
    return ws


def dataset_spec(env: EngineEnv | None, name: str) -> "DatasetSpec":
    ws = workspace_of(env)
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
    key = (str(path), st.st_size, st.st_mtime_ns, spec.date_columns, spec.header_rows)
    with _FRAMES_LOCK:
        cached = _FRAMES.get(key)
    if cached is not None:
        return cached
    frame = (
        pd.read_parquet(path)
        if spec.format == "parquet"
        else pd.read_csv(path, **spec.pandas_csv_options)
    )
    if spec.header_rows > 1:  # several header rows: one joined name per column
        frame.columns = list(spec.header)
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


def infer_period_columns(spec: "DatasetSpec", frame: "pd.DataFrame") -> tuple[str, ...]:
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

    cols = infer_period_columns(spec, frame)
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

    skip = set(infer_period_columns(spec, frame)) | set(spec.labels)
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


def numeric_column(spec: "DatasetSpec", frame: "pd.DataFrame", column: str) -> "pd.Series":
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


def sorted_with_periods(
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


def find_period(periods: "Periods", text: object, index) -> Any:
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

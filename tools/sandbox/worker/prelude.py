"""What the code sees besides pandas and numpy: ``emit_result``, ``engine.<name>(...)`` and the
private channel they talk to the host over (every frame signed by the call's seal). The host
validates every frame again (``refgate.tools.sandbox.emit``)."""

from __future__ import annotations

import datetime as _dt
import re
import socket
from collections.abc import Callable

from .protocol import FrameReader, Seal, send_frame
from .state import State


def jsonable(value):
    """A JSON-safe scalar: numpy/pandas scalars to Python, NaN/inf to None, dates to ISO text."""
    np, pd = State.np, State.pd
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if np is not None:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return jsonable(float(value))
    if pd is not None:
        if value is pd.NaT or (isinstance(value, type(pd.NA)) and value is pd.NA):
            return None
        if isinstance(value, pd.Timestamp):
            if value.tz is None and value == value.normalize():
                return value.date().isoformat()
            return value.isoformat()
        if isinstance(value, pd.Period):
            return str(value)

    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return str(value)


def table_payload(table) -> dict:
    pd = State.pd
    if isinstance(table, pd.Series):
        table = table.to_frame(name=table.name if table.name is not None else "value")
    elif isinstance(table, (dict, list)):
        table = pd.DataFrame(table)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            "emit_result(table=...) takes a pandas DataFrame or Series, a dict of columns or a "
            f"list of row dicts, not {type(table).__name__}"
        )
    frame = table
    index = frame.index
    if not isinstance(index, pd.RangeIndex) or any(n is not None for n in index.names):
        frame = frame.reset_index()
    if isinstance(frame.columns, pd.MultiIndex):
        columns = [" / ".join(str(p) for p in col if str(p)) for col in frame.columns]
    else:
        columns = [str(c) for c in frame.columns]
    rows = [[jsonable(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return {"columns": columns, "rows": rows}


def values_payload(values) -> dict:
    pd = State.pd
    if isinstance(values, pd.Series):
        values = values.to_dict()
    if not isinstance(values, dict):
        raise TypeError(
            "emit_result(values=...) takes a dict {name: number} (or a pandas Series), "
            f"not {type(values).__name__}"
        )
    out = {}
    for name, value in values.items():
        converted = jsonable(value)
        if isinstance(converted, bool) or not isinstance(converted, (int, float)):
            raise TypeError(
                f"emit_result(values=...): {name!r} must be a finite number, got {value!r}"
            )
        out[str(name)] = converted
    return out


def date_payload(date) -> dict:
    pd = State.pd
    label = None
    if isinstance(date, str):
        text = date.strip()
        match = re.fullmatch(r"(\d{4})\s*-?\s*Q([1-4])", text, re.IGNORECASE)
        if match:
            date = pd.Period(f"{match.group(1)}Q{match.group(2)}", freq="Q")
            label = text
    if isinstance(date, pd.Period):
        label = label or str(date)
        return {"date": date.end_time.date().isoformat(), "label": label}
    if isinstance(date, (_dt.date, _dt.datetime, pd.Timestamp, str)):
        try:
            stamp = pd.Timestamp(date)
        except (ValueError, TypeError):
            raise ValueError(
                f"emit_result(date=...): cannot read {date!r} as a date (use YYYY-MM-DD, "
                "a datetime, a pandas Timestamp/Period or 'YYYYQn')"
            ) from None
        if stamp is pd.NaT:
            raise ValueError("emit_result(date=...): the date is missing (NaT)")
        out = {"date": stamp.date().isoformat()}
        if isinstance(date, str) and date.strip() != out["date"]:
            out["label"] = date.strip()
        return out
    raise TypeError(f"emit_result(date=...) takes a date, not {type(date).__name__}")


class Channel:
    """The private channel to the host (request/reply frames, each signed by the seal)."""

    def __init__(self, sock: socket.socket, seal: Seal) -> None:
        self._sock = sock
        self._reader = FrameReader(sock)
        self._seal = seal

    def send(self, message: dict) -> None:
        send_frame(self._sock, self._seal.sign(message))

    def call(self, message: dict) -> dict:
        self.send(message)
        reply = self._reader.read()
        if reply is None:
            raise RuntimeError("the sandbox host closed the result channel")
        return reply


class EngineResult(dict):
    """A capability's data (a dict) plus the ids of the refs the host issued for it."""

    refs: list = []

    def frame(self):
        """The result as a pandas DataFrame (for table-shaped results with columns/rows)."""
        if "columns" in self and "rows" in self:
            return State.pd.DataFrame(self["rows"], columns=self["columns"])
        raise ValueError("this result has no columns/rows table")


class Engine:
    """``engine.<name>(...)`` calls a registered capability on the host (trusted code)."""

    def __init__(self, channel: Channel, catalog: list) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_catalog", {c["name"]: c for c in catalog})

    def __getattr__(self, name: str):
        catalog = object.__getattribute__(self, "_catalog")
        if name.startswith("_") or name not in catalog:
            known = ", ".join(sorted(catalog)) or "none"
            raise AttributeError(f"engine has no capability {name!r}; known: {known}")
        channel = object.__getattribute__(self, "_channel")
        entry = catalog[name]

        def call(*args, **kwargs):
            message = {
                "op": "engine",
                "name": name,
                "args": [plain(a) for a in args],
                "kwargs": {k: plain(v) for k, v in kwargs.items()},
            }
            reply = channel.call(message)
            if not reply.get("ok"):
                raise RuntimeError(f"engine.{name} failed: {reply.get('error')}")
            data = reply.get("data")
            if isinstance(data, dict):
                data = EngineResult(data)
                data.refs = list(reply.get("refs", []))
            return data

        call.__name__ = name
        call.__doc__ = f"{entry.get('signature', name)}\n\n{entry.get('doc', '')}"
        return call

    def __dir__(self):
        return sorted(object.__getattribute__(self, "_catalog"))

    def __setattr__(self, name, value):
        raise AttributeError("engine is read-only")

    def __repr__(self) -> str:
        return f"<engine: {', '.join(self.__dir__())}>"


def plain(value):
    """Engine arguments must be JSON: plain scalars, lists and dicts."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    out = jsonable(value)
    if out is not None and not isinstance(out, (bool, int, float, str)):
        raise TypeError(f"engine arguments must be JSON values, got {type(value).__name__}")
    if isinstance(out, str) and not isinstance(value, str) and hasattr(value, "shape"):
        raise TypeError("engine arguments must be JSON values, not arrays or DataFrames")
    return out


def make_emit(channel: Channel | None) -> Callable[..., list[str]]:
    def emit_result(
        table=None,
        values=None,
        units=None,
        date=None,
        sources=None,
        *,
        title=None,
        scale=None,
        period=None,
        date_label=None,
    ):
        """Emit evidence back to refgate (the only way results leave the sandbox).

        table=  a DataFrame/Series (or dict of columns / list of row dicts) -> a tableRef
        values= {name: number} -> a valueRef
        units=  {column_or_value_name: unit} or one unit for all values ("USD", "%", ...)
        date=   the as-of date ("2009-09-30", a Timestamp, or "2009Q3") -> a dateRef
        sources= dataset names or ref ids the result was computed from
        title=, scale= ("billion", ...), period= ("2009Q3"), date_label= optional.
        Returns the ids of the refs that will be issued.
        """
        if table is None and values is None and date is None:
            raise ValueError("emit_result needs at least one of table=, values=, date=")
        if channel is None:
            raise RuntimeError("emit_result is not connected to refgate here")
        message: dict[str, object] = {"op": "emit"}
        if table is not None:
            message["table"] = table_payload(table)
            query = (getattr(table, "attrs", None) or {}).get("sql")
            if isinstance(query, str):  # a frame returned by sql(): record its query
                message["sql"] = query[:20_000]
        if values is not None:
            message["values"] = values_payload(values)
        if date is not None:
            stamp = date_payload(date)
            if date_label is not None:
                stamp["label"] = str(date_label)
            message["date"] = stamp
        if units is not None:
            message["units"] = (
                {str(k): str(v) for k, v in units.items()}
                if isinstance(units, dict)
                else str(units)
            )
        if sources is not None:
            message["sources"] = (
                [sources] if isinstance(sources, str) else [str(s) for s in sources]
            )
        for key, value in (("title", title), ("scale", scale), ("period", period)):
            if value is not None:
                message[key] = str(value)
        reply = channel.call(message)
        if not reply.get("ok"):
            raise ValueError(f"emit_result rejected: {reply.get('error')}")
        return list(reply.get("refs", []))

    return emit_result

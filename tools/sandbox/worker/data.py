"""``datasets[...]`` in the prelude: the workspace's datasets as pandas DataFrames.

A dataset loads on first use (small ones are preloaded by the template). One whose estimated
size in memory (a CSV's file size, a parquet file's uncompressed size) is above a fifth of the
call's address-space limit is refused with an error that points at ``sql()``, which streams it;
so is a warehouse table (it lives in a database, reached through ``sql()`` only).
"""

from __future__ import annotations

from .state import State


def read_dataset(spec: dict):
    pd = State.pd
    path = spec["path"]
    if spec.get("format") == "parquet":
        frame = pd.read_parquet(path)
    elif spec.get("header_rows", 1) > 1:  # several header rows, joined into these names
        frame = pd.read_csv(path, header=list(range(spec["header_rows"])))
        frame.columns = list(spec["names"])
    else:
        frame = pd.read_csv(path)
    for col in spec.get("date_columns", ()):
        if col in frame.columns:
            frame[col] = pd.to_datetime(frame[col], errors="coerce")
    return frame


class DatasetTooLarge(MemoryError):
    """A dataset too large to load into pandas inside the sandbox: use ``sql()``."""


def frame_limit_bytes(address_space_bytes: int | None) -> int | None:
    """Largest estimated in-memory size ``datasets[...]`` loads under this address-space cap."""
    return address_space_bytes // 5 if address_space_bytes else None


def _mb(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB"


def _use_sql(name: str) -> str:
    return (
        f"query it with sql() instead, which streams it through DuckDB, e.g. "
        f'sql(\'SELECT col, SUM(x) AS total FROM "{name}" GROUP BY col ORDER BY total DESC '
        "LIMIT 10')"
    )


class Datasets(dict):
    """``datasets["name"]`` -> a pandas DataFrame of a workspace dataset (read-only files)."""

    def __init__(self, specs: dict, limits: dict | None = None, channel=None) -> None:
        super().__init__()
        self._specs = specs
        self._limit = frame_limit_bytes((limits or {}).get("as"))
        #: The call's signed channel: each dataset the code reads is reported to the host, which
        #: records it on the executionRef and the refs the call emits ("computed means computed").
        self._channel = channel

    def _refuse(self, name: str, spec: dict) -> None:
        if spec.get("kind") == "warehouse":
            raise KeyError(
                f"dataset {name!r} is a table in a database, not a file: " + _use_sql(name)
            )
        size = spec.get("memory_bytes") or 0
        if self._limit and size > self._limit and name not in State.frames:
            raise DatasetTooLarge(
                f"dataset {name!r} is about {_mb(size)} in memory, more than datasets[...] loads "
                f"in the sandbox ({_mb(self._limit)}): " + _use_sql(name)
            )

    def __missing__(self, name):
        if name not in self._specs:
            known = ", ".join(sorted(self._specs)) or "none (no workspace)"
            raise KeyError(f"no dataset {name!r}; datasets: {known}")
        self._refuse(name, self._specs[name])
        frame = State.frames.get(name)
        if frame is None:
            try:
                frame = read_dataset(self._specs[name])
            except MemoryError:
                raise DatasetTooLarge(
                    f"dataset {name!r} does not fit in the sandbox's memory as a DataFrame: "
                    + _use_sql(name)
                ) from None
        if isinstance(frame, Exception):
            raise frame
        if self._channel is not None:
            self._channel.call({"op": "read", "dataset": name})
        self[name] = frame
        return frame

    def __contains__(self, name) -> bool:
        return name in self._specs

    def keys(self):
        return self._specs.keys()

    def __iter__(self):
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def meta(self, name: str) -> dict:
        """Column metadata from refgate.toml: {column: {unit, scale, description}}."""
        if name not in self._specs:
            raise KeyError(f"no dataset {name!r}")
        return dict(self._specs[name].get("columns", {}))

    def __repr__(self) -> str:
        return f"<datasets: {', '.join(sorted(self._specs)) or 'none'}>"

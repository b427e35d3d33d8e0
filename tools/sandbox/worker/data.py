"""``datasets[...]`` in the prelude: the workspace's datasets as pandas DataFrames."""

from __future__ import annotations

from .state import State


def read_dataset(spec: dict):
    pd = State.pd
    path = spec["path"]
    frame = pd.read_parquet(path) if spec.get("format") == "parquet" else pd.read_csv(path)
    for col in spec.get("date_columns", ()):
        if col in frame.columns:
            frame[col] = pd.to_datetime(frame[col], errors="coerce")
    return frame


class Datasets(dict):
    """``datasets["name"]`` -> a pandas DataFrame of a workspace dataset (read-only files)."""

    def __init__(self, specs: dict) -> None:
        super().__init__()
        self._specs = specs

    def __missing__(self, name):
        if name not in self._specs:
            known = ", ".join(sorted(self._specs)) or "none (no workspace)"
            raise KeyError(f"no dataset {name!r}; datasets: {known}")
        frame = State.frames.get(name)
        if frame is None:
            frame = read_dataset(self._specs[name])
        if isinstance(frame, Exception):
            raise frame
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

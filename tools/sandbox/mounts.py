"""The datasets a sandbox call sees: ``DatasetMount``, re-checked at mount time, bound read-only
at ``/workspace/datasets/<name>.<ext>`` (bubblewrap), and described to the worker's template."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refgate.paths import PathEscape, recheck
from refgate.tools.dataset_scan import estimated_bytes
from refgate.tools.sandbox.errors import SandboxError

#: The call's view of the workspace under bubblewrap.
SANDBOX_ROOT = "/workspace"

#: Datasets at most this large are parsed once in the warm template (shared copy-on-write).
PRELOAD_MAX_BYTES = 32 << 20


@dataclass(frozen=True)
class DatasetMount:
    """A dataset the call sees: a file bound read-only, or (``path=None``, format
    ``"warehouse"``) a database table reached only through ``sql()`` and the host's proxy."""

    name: str
    path: Path | None
    format: str = "csv"
    date_columns: tuple[str, ...] = ()
    columns: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A CSV file's header rows and the names they give (``DatasetSpec.header_rows``).
    header_rows: int = 1
    names: tuple[str, ...] = ()

    @property
    def is_file(self) -> bool:
        return self.path is not None

    def fingerprint(self) -> tuple:
        try:
            if self.path is None:
                raise OSError("no file")
            st = self.path.stat()
            stamp: tuple = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = (None, None)
        return (
            self.name, str(self.path), self.format, self.date_columns, self.header_rows, *stamp
        )  # fmt: skip


def confined_source(mount: DatasetMount) -> str:
    """The dataset's file, re-checked at mount time: it must still resolve to the real path
    confined when the workspace was loaded (``refgate.paths.recheck``; no symlink swap)."""

    if mount.path is None:
        raise SandboxError(f"dataset {mount.name!r} is a warehouse table, not a file")
    try:
        return str(recheck(mount.path, what=f"dataset {mount.name!r}"))
    except PathEscape as exc:
        raise SandboxError(str(exc)) from exc


def sandbox_path(mount: DatasetMount) -> str:
    """Where the call finds the dataset's file under bubblewrap."""
    suffix = (mount.path.suffix.lower() if mount.path is not None else "") or ".csv"
    return f"{SANDBOX_ROOT}/datasets/{mount.name}{suffix}"


def dataset_entry(m: DatasetMount, mode: str) -> dict[str, Any]:
    """The template's description of one dataset (its ``init`` frame): a file, where the call
    finds it and whether the template preloads it, or a warehouse table."""
    columns = {k: dict(v) for k, v in m.columns.items()}
    if not m.is_file:
        return {"kind": "warehouse", "format": m.format, "columns": columns}
    return {
        "kind": "file",
        "path": sandbox_path(m) if mode == "bwrap" else str(m.path),
        "format": m.format,
        "date_columns": list(m.date_columns),
        "preload": _memory_bytes(m) <= PRELOAD_MAX_BYTES,
        "memory_bytes": _memory_bytes(m),
        "columns": columns,
        **({"header_rows": m.header_rows, "names": list(m.names)} if m.header_rows > 1 else {}),
    }


def _memory_bytes(mount: DatasetMount) -> int:
    return estimated_bytes(mount.path, mount.format) if mount.path is not None else 0

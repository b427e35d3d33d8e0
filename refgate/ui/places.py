"""Which workspaces the app may open, and what each holds (datasets, documents, index state).

The rule is the served graphs' (``refgate.workspace.load_served_workspace``): with
``REFGATE_ALLOWED_WORKSPACES`` set, any workspace inside it may be opened (and the ones given on
the command line must be inside it too); without it, only the workspaces given to
``refgate ui -w``. A folder the page names is never opened on its word alone.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

from typing_extensions import TypedDict

from refgate.paths import PathEscape, check_served, served_allowlist
from refgate.report.cards import clip
from refgate.workspace import Workspace, WorkspaceError, load_served_workspace, load_workspace

#: Files of a documents folder listed (the count is exact).
MAX_FILES = 300
#: Workspaces offered from the allowlist's folders.
MAX_CHOICES = 50


class Refusal(ValueError):
    """A workspace the app may not open (outside the allowlist, or not given)."""


class DatasetInfo(TypedDict):
    name: str
    path: str
    description: str
    columns: int


class DocumentsInfo(TypedDict):
    folder: str
    count: int
    files: list[str]


class IndexInfo(TypedDict):
    built: bool
    documents: int
    updated: str
    not_indexed: list[str]


class WorkspaceInfo(TypedDict):
    name: str
    root: str
    datasets: list[DatasetInfo]
    documents: DocumentsInfo | None
    index: IndexInfo
    web_snapshot: str


class Places:
    """The workspaces given on the command line and the allowlist's."""

    def __init__(self, given: list[Path]) -> None:
        self.given = [p.expanduser().resolve() for p in given]
        #: Loaded workspaces by folder, kept while their refgate.toml is unchanged (loading
        #: reads the toml and every dataset's header: not on each request).
        self._loaded: dict[tuple[Path, object], tuple[float, Workspace]] = {}

    def choices(self) -> list[str]:
        """Workspaces to offer: the given ones, then workspaces in the allowlist's folders."""
        found = [str(p) for p in self.given]
        try:
            allowlist = served_allowlist()
        except PathEscape:
            return found
        for entry in allowlist or []:
            candidates = [entry, *sorted(p for p in entry.iterdir() if p.is_dir())]
            for folder in candidates:
                if len(found) >= MAX_CHOICES:
                    return found
                if (folder / "refgate.toml").is_file() and str(folder) not in found:
                    found.append(str(folder))
        return found

    def open(self, path: str | Path) -> Workspace:
        """The workspace at ``path``; ``Refusal`` when the app may not open it."""
        folder = Path(str(path)).expanduser()
        if not folder.is_absolute():
            raise Refusal(f"give the workspace's absolute path, not {str(path)!r}")
        try:
            allowlist = served_allowlist()
        except PathEscape as exc:
            raise Refusal(str(exc)) from None
        try:
            if allowlist is not None:
                check_served(folder, allowlist, what="workspace")  # on every request
                return self._load(folder, load_served_workspace)
            if folder.resolve() not in self.given:
                raise Refusal(
                    f"{folder} was not given to refgate ui (-w) and REFGATE_ALLOWED_WORKSPACES is "
                    "not set: the app opens only those"
                )
            return self._load(folder.resolve(), load_workspace)
        except (PathEscape, WorkspaceError) as exc:
            raise Refusal(str(exc)) from None

    def _load(self, folder: Path, loader: Callable[[Path], Workspace]) -> Workspace:
        """``loader(folder)``, reused while the folder's refgate.toml is unchanged; the
        allowlist is checked again by ``loader`` whenever it loads."""
        try:
            stamp = (folder / "refgate.toml").stat().st_mtime
        except OSError:
            stamp = -1.0
        key = (folder.resolve(), loader)
        kept = self._loaded.get(key)
        if kept is not None and kept[0] == stamp and stamp >= 0:
            return kept[1]
        ws = loader(folder)
        self._loaded[key] = (stamp, ws)
        return ws


def describe(ws: Workspace) -> WorkspaceInfo:
    """What the workspace holds: datasets, documents, the document index and its freshness."""
    datasets: list[DatasetInfo] = [
        {
            "name": name,
            "path": str(spec.path.relative_to(ws.root))
            if spec.path is not None and ws.contains(spec.path)
            else str(spec.path or spec.table or ""),
            "description": clip(spec.description, 300),
            "columns": len(spec.header or spec.columns),
        }
        for name, spec in sorted(ws.datasets.items())
    ]
    documents: DocumentsInfo | None = None
    names: list[str] = []
    folder = ws.documents_path or (ws.root / "documents")
    if folder.is_dir():
        names = sorted(
            str(p.relative_to(folder))
            for p in folder.rglob("*")
            if p.is_file() and not p.name.startswith(".")
        )
        documents = {
            "folder": str(folder.relative_to(ws.root)) if ws.contains(folder) else str(folder),
            "count": len(names),
            "files": names[:MAX_FILES],
        }
    return {
        "name": ws.name,
        "root": str(ws.root),
        "datasets": datasets,
        "documents": documents,
        "index": _index(ws, names),
        "web_snapshot": str(ws.web_snapshot_path or ""),
    }


def _index(ws: Workspace, names: list[str]) -> IndexInfo:
    manifest = ws.state_dir / "index" / "manifest.json"
    if not manifest.is_file():
        return {"built": False, "documents": 0, "updated": "", "not_indexed": names[:20]}
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"built": False, "documents": 0, "updated": "", "not_indexed": names[:20]}
    indexed = data.get("documents") if isinstance(data, dict) else None
    keys = {str(k) for k in indexed} if isinstance(indexed, dict) else set()
    missing = [n for n in names if n not in keys and Path(n).name not in keys]
    mtime = dt.datetime.fromtimestamp(manifest.stat().st_mtime, dt.UTC)
    return {
        "built": True,
        "documents": len(keys),
        "updated": mtime.isoformat(timespec="seconds"),
        "not_indexed": missing[:20],
    }

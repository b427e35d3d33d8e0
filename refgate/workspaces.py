"""Finding the workspace a command runs on, and creating one with ``refgate init``.

No silent fallback: a workspace is the ``--workspace`` folder, else the nearest folder at or
above the current one holding a ``refgate.toml``, else ``REFGATE_WORKSPACE``; with none of them
the caller gets ``NoWorkspace`` pointing at ``refgate init`` and the sample workspace, and nothing
is written anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from refgate.workspace import Workspace, WorkspaceError, _read_header, load_workspace

NO_WORKSPACE_HELP = (
    "no workspace here: no refgate.toml in {cwd} or above, no --workspace and no "
    "REFGATE_WORKSPACE. Create one with `refgate init [DIR]` (for a folder of CSV/parquet files "
    "and documents), or try the sample: `--workspace examples/us-macro`."
)

DATA_SUFFIXES = (".csv", ".parquet", ".pq")
DOC_SUFFIXES = (".txt", ".md", ".html", ".htm", ".pdf")


class NoWorkspace(WorkspaceError):
    """No workspace was named and none was found."""


def find_workspace_root(
    start: Path | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """The nearest folder at or above ``start`` (the cwd) with a refgate.toml, else
    ``REFGATE_WORKSPACE``, else None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "refgate.toml").is_file():
            return folder
    named = (os.environ if env is None else env).get("REFGATE_WORKSPACE")
    return Path(named).expanduser().resolve() if named else None


def resolve_workspace(
    workspace: Workspace | Path | str | None = None, env: Mapping[str, str] | None = None
) -> Workspace:
    """The workspace to run on (see the module docstring); ``NoWorkspace`` when there is none."""
    if isinstance(workspace, Workspace):
        return workspace
    root = Path(workspace) if workspace is not None else find_workspace_root(env=env)
    if root is None:
        raise NoWorkspace(NO_WORKSPACE_HELP.format(cwd=Path.cwd()))
    return load_workspace(root)


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name.replace('"', '\\"') + '"'


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dataset_name(path: Path, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "_", path.stem).strip("_-") or "data"
    if not base[0].isalpha():
        base = "d_" + base
    base = base[:60]
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def init_workspace(folder: Path, *, name: str | None = None, force: bool = False) -> Path:
    """Write ``folder/refgate.toml`` for the CSV/parquet files and documents under ``folder``
    (columns read from the files, units left empty for the user), validate it, return its path.

    Refuses to overwrite an existing refgate.toml unless ``force``; on a validation failure the
    file is not left behind."""
    root = folder.expanduser().resolve()
    if not root.is_dir():
        raise WorkspaceError(f"{root}: not a folder")
    target = root / "refgate.toml"
    if target.exists() and not force:
        raise WorkspaceError(f"{target} already exists (use --force to replace it)")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    data = [p for p in files if p.suffix.lower() in DATA_SUFFIXES]
    docs = [p for p in files if p.suffix.lower() in DOC_SUFFIXES and p.name != "README.md"]
    lines = [
        '# Written by `refgate init`. Fill in each column\'s unit ("USD", "percent", "date", ...)',
        '# and scale ("thousand", "million", "billion") where it has one, and each dataset\'s',
        "# description and source: the GATE compares numbers in their units.",
        f"name = {_toml_str(name or root.name)}",
        "",
    ]
    taken: set[str] = set()
    for path in data:
        rel = path.relative_to(root).as_posix()
        header = _read_header(path, str(path))
        ds = _dataset_name(path, taken)
        lines += [
            f"[datasets.{ds}]",
            f"path = {_toml_str(rel)}",
            f"description = {_toml_str('TODO: what ' + path.name + ' holds, and its source')}",
        ]
        for col in header:
            lines += [
                f"[datasets.{ds}.columns.{_toml_key(col)}]",
                '# unit = ""',
                'description = ""',
            ]
        lines.append("")
    if docs:
        doc_dirs = sorted({p.parent for p in docs}, key=lambda p: (len(p.parts), str(p)))
        top = doc_dirs[0]
        lines += ["[documents]", f"path = {_toml_str(top.relative_to(root).as_posix() or '.')}", ""]
    lines += ["[settings]", "# work_max_rounds = 8", ""]
    target.write_text("\n".join(lines), encoding="utf-8")
    try:
        load_workspace(root)
    except WorkspaceError:
        target.unlink(missing_ok=True)
        raise
    return target

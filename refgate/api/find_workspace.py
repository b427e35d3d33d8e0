"""Finding the workspace a command runs on, and creating one with ``refgate init``.

No silent fallback: a workspace is the ``--workspace`` folder, else the nearest folder at or
above the current one holding a ``refgate.toml``, else ``REFGATE_WORKSPACE``; with none of them
the caller gets ``NoWorkspace`` pointing at ``refgate init`` and the sample workspace, and nothing
is written anywhere.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

import tomli_w

from refgate import files
from refgate.api.init_guess import guess_header_rows, guess_period, guess_unit, sample_rows
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


#: The comment heading a written refgate.toml.
INIT_HEADER = (
    '# Written by `refgate init`. Fill in each column\'s unit ("USD", "percent", "date", ...)\n'
    '# and scale ("thousand", "million", "billion") where it has one, and each dataset\'s\n'
    "# description and source: the GATE compares numbers in their units. Run settings go in a\n"
    "# [settings] table (e.g. work_max_rounds = 8).\n\n"
)
#: The comment on each unit and period line ``refgate init`` guessed.
GUESSED = "# guessed by refgate init from the column's name or values: check it"
#: The copy ``refgate init --force`` keeps of the file it replaces.
BACKUP_NAME = "refgate.toml.bak"


def workspace_config(root: Path, name: str | None = None) -> dict[str, object]:
    """The refgate.toml content for the CSV/parquet files and documents under ``root``: a
    dataset per data file (columns read from it, units and the period column guessed from
    names and values: ``refgate.init_guess``), the documents folder. Plain data, written by
    ``render_config``."""
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    data = [p for p in files if p.suffix.lower() in DATA_SUFFIXES]
    docs = [p for p in files if p.suffix.lower() in DOC_SUFFIXES and p.name != "README.md"]
    config: dict[str, object] = {"name": name or root.name}
    datasets: dict[str, object] = {}
    taken: set[str] = set()
    for path in data:
        try:
            header_rows = guess_header_rows(path)
        except Exception:  # a guess is an aid: an unreadable file guesses one header row
            header_rows = 1
        header = _read_header(path, str(path), header_rows)
        try:
            _, rows = sample_rows(path)
            rows = rows[header_rows - 1 :]
        except Exception:  # a guess is an aid: an unreadable sample guesses nothing
            rows = []
        columns: dict[str, object] = {}
        for j, col in enumerate(header):
            unit = guess_unit(col, [r[j] for r in rows if j < len(r)])
            columns[col] = {"unit": unit, "description": ""} if unit else {"description": ""}
        entry: dict[str, object] = {
            "path": path.relative_to(root).as_posix(),
            "description": f"TODO: what {path.name} holds, and its source",
        }
        if header_rows > 1:  # a caption, the years, a unit row: as the file prints them
            entry["header_rows"] = header_rows
        period = guess_period(header, rows)
        if period:
            entry["period"] = period
        entry["columns"] = columns
        datasets[_dataset_name(path, taken)] = entry
    if datasets:
        config["datasets"] = datasets
    if docs:
        doc_dirs = sorted({p.parent for p in docs}, key=lambda p: (len(p.parts), str(p)))
        config["documents"] = {"path": doc_dirs[0].relative_to(root).as_posix() or "."}
    return config


def render_config(config: Mapping[str, object]) -> str:
    """``config`` as refgate.toml text: a real TOML writer (keys and strings escaped: backslashes,
    quotes, newlines and control characters in names), under ``INIT_HEADER``."""
    text = tomli_w.dumps(dict(config))
    # every unit and period init writes is a guess (from names and values): say so on its line
    lines = [
        f"{line}  {GUESSED}"
        if line.startswith(("unit = ", "period = ", "header_rows = "))
        else line
        for line in text.split("\n")
    ]
    return INIT_HEADER + "\n".join(lines)


def init_workspace(folder: Path, *, name: str | None = None, force: bool = False) -> Path:
    """Write ``folder/refgate.toml`` for the data files and documents under ``folder``, validated
    before it is kept; return its path.

    Never loses a file: the new content goes to a temporary file beside it, is validated there
    (as this folder's), and only then renamed over ``refgate.toml``; an existing one is refused
    unless ``force``, which first keeps it as ``refgate.toml.bak``. On any failure the folder is
    as it was."""
    root = folder.expanduser().resolve()
    if not root.is_dir():
        raise WorkspaceError(f"{root}: not a folder")
    target = root / "refgate.toml"
    if target.exists() and not force:
        raise WorkspaceError(f"{target} already exists (use --force to replace it)")
    text = render_config(workspace_config(root, name))
    try:
        with files.replacing(target) as tmp:
            tmp.write_text(text, encoding="utf-8", newline="\n")
            try:
                load_workspace(root, config_file=tmp)
            except WorkspaceError as exc:
                shown = str(exc).replace(str(tmp), f"{target} (as generated, not written)")
                raise WorkspaceError(shown) from None
            if target.exists():
                shutil.copy2(target, root / BACKUP_NAME)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target

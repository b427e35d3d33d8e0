"""Data cells are data, in RunPython's output too: code that prints a dataset's text cell, or an
error that quotes one ("could not convert string to float: 'Errata: ...'"), shows third
parties' prose to the model. ``shows_cell_text`` tells RunPython to fence its output and mark
the turn (``refgate.tools.prose_cells``).

The text cells of each workspace dataset are collected once per file version (path, size,
modification time), for files small enough to scan (``SCAN_MAX_BYTES``)."""

from __future__ import annotations

import threading
from pathlib import Path

from refgate.provenance.record import normalise
from refgate.tools.prose_cells import is_text_cell

#: Largest dataset file whose text cells are collected (bytes).
SCAN_MAX_BYTES = 64 << 20
#: Shortest text cell looked for in output (characters, normalised).
MIN_CELL_CHARS = 16
_CACHE: dict[tuple[str, int, float], tuple[str, ...]] = {}
_LOCK = threading.Lock()


def _text_cells(path: Path) -> tuple[str, ...]:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    found: list[str] = []
    if stat.st_size <= SCAN_MAX_BYTES and path.suffix.lower() in (".csv", ".parquet", ".tsv"):
        # deferred: pandas is heavy to import; paid on first use
        import pandas as pd

        try:
            if path.suffix.lower() == ".parquet":
                frame = pd.read_parquet(path)
            else:
                frame = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",")
        except Exception:  # an unreadable file holds no cell we can look for
            frame = None
        if frame is not None:
            for col in frame.columns:
                series = frame[col]
                if series.dtype.kind in "biufcmM":
                    continue
                for value in series.dropna().unique():
                    if is_text_cell(value):
                        norm = normalise(str(value))
                        if len(norm) >= MIN_CELL_CHARS:
                            found.append(norm)
    cells = tuple(dict.fromkeys(found))
    with _LOCK:
        _CACHE[key] = cells
    return cells


def shows_cell_text(output: str, workspace: object) -> bool:
    """True when ``output`` carries a text cell of one of the workspace's datasets."""
    datasets = getattr(workspace, "datasets", None) or {}
    if not output.strip() or not datasets:
        return False
    text = normalise(output)
    for spec in datasets.values():
        path = getattr(spec, "path", None)
        if path is None or not Path(path).is_file():
            continue
        try:
            cells = _text_cells(Path(path))
        except OSError:
            continue
        # a cell cut by the output's width still shows its first words
        if any(cell[: MIN_CELL_CHARS * 2] in text for cell in cells):
            return True
    return False

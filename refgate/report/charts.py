"""The run's charts as inline data: each chart artifactRef's PNG, read from inside the allowed
folders only, checked against the hash SaveArtifact recorded, as a ``data:`` URI.

A chart that cannot be embedded (file gone, outside the workspace, changed since the run, not a
PNG, too large) is reported with the reason instead of a picture; nothing is fetched.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import cast

from typing_extensions import TypedDict

from refgate.errors import InputError
from refgate.paths import PathEscape, read_confined

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_CHART_BYTES = 5 * 1024 * 1024


class ChartError(InputError, ValueError):
    """A chart file that may not or cannot be embedded."""


def read_png(path: str | Path, roots: Iterable[Path], sha256: str | None = None) -> bytes:
    """The bytes of a PNG file that resolves inside one of ``roots`` (checked on the opened
    descriptor, ``refgate.paths``), unchanged since the run when ``sha256`` is given."""
    try:
        body = read_confined(path, roots, limit=MAX_CHART_BYTES + 1, what="chart")
    except PathEscape:
        raise ChartError("the file is outside the workspace") from None
    except OSError as exc:
        raise ChartError(f"cannot open the file: {exc.strerror or exc}") from None
    if len(body) > MAX_CHART_BYTES:
        raise ChartError(f"the file is larger than {MAX_CHART_BYTES // (1024 * 1024)} MB")
    if not body.startswith(PNG_MAGIC):
        raise ChartError("the file is not a PNG image")
    if sha256 and hashlib.sha256(body).hexdigest() != sha256:
        raise ChartError("the file changed since the run saved it")
    return body


def png_data_uri(body: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(body).decode("ascii")


class Chart(TypedDict):
    """A run's chart as a report embeds it: the PNG as a data URI, or why it cannot be shown."""

    ref_id: str
    title: str
    source_ref: str
    data_uri: str | None
    error: str | None


def chart_of(ref: Mapping[str, object], roots: Iterable[Path]) -> Chart | None:
    """``{ref_id, title, source_ref, data_uri | error}`` for a chart artifactRef, else None."""
    raw_p = ref.get("payload")
    p: Mapping[str, object] = raw_p if isinstance(raw_p, Mapping) else {}
    if ref.get("kind") != "artifactRef" or p.get("format") != "chart":
        return None
    listed = cast(Iterable[object], p.get("files") or [])
    files = [f for f in listed if isinstance(f, Mapping) and f.get("format") == "png"]
    out: Chart = {
        "ref_id": str(ref.get("id", "")),
        "title": str(p.get("title") or ref.get("title") or "chart"),
        "source_ref": str(p.get("source_ref") or ""),
        "data_uri": None,
        "error": None,
    }
    if not files:
        out["error"] = "the artifact lists no PNG file"
        return out
    try:
        body = read_png(str(files[0].get("path", "")), roots, files[0].get("sha256"))
    except ChartError as exc:
        out["error"] = str(exc)
    else:
        out["data_uri"] = png_data_uri(body)
    return out


def chart_roots(workspace: str | Path | None) -> list[Path]:
    """Where a run's charts may be read from: the artifacts folder SaveArtifact writes under the
    workspace's state folder (``<root>/.refgate/artifacts``); none without a workspace."""
    return [Path(workspace) / ".refgate" / "artifacts"] if workspace is not None else []


def collect_charts(refs: Mapping[str, Mapping[str, object]], roots: Iterable[Path]) -> list[Chart]:
    """Every chart of the run, in ledger order."""
    roots = [Path(r) for r in roots]
    charts: list[Chart] = []
    for ref in refs.values():
        chart = chart_of(ref, roots)
        if chart is not None:
            charts.append(chart)
    return charts

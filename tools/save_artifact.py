"""SaveArtifact (WORK, a write tool): save a tableRef as CSV + markdown, or as a PNG chart.

Files go under the run's artifacts folder, fixed by code before anything is read (boundary B2):
``ctx.artifacts_dir``, else ``<workspace>/.refgate/artifacts/<run_id>``. File names come from the
ref id, never from model or document text. A chart is drawn only when the table has at least two
comparable numeric values (one unit across the plotted columns) (a chart rule of the workbench).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.payloads import ArtifactFile, ArtifactPayload, Cell, JsonDict, JsonValue

_SAFE_ID = re.compile(r"^[a-z]{3}_[0-9a-f]{10}$")
MAX_CHART_POINTS = 5000


class SaveArtifactArgs(ToolArgs):
    ref: str = Field(description="The id of a tableRef issued in this run (e.g. 'tbl_3f9a0c12de').")
    kind: Literal["table", "chart"] = Field(
        default="table",
        description="'table' saves CSV + markdown; 'chart' saves a PNG chart of numeric columns.",
    )
    chart_type: Literal["line", "bar"] = Field(
        default="line", description="For kind='chart': 'line' for time series, 'bar' for rankings."
    )
    x: str | None = Field(
        default=None,
        description="For kind='chart': the label/period column for the x axis (default: the "
        "first non-numeric column, else 'period', else the row number).",
    )
    y: list[str] | None = Field(
        default=None,
        description="For kind='chart': numeric columns to plot, all in one unit (default: every "
        "numeric column except 'rank' and x).",
    )
    title: str | None = Field(default=None, max_length=120, description="Chart or table title.")


def artifacts_folder(ctx: ToolContext) -> Path | None:
    """The run's artifacts folder, chosen by code (never from arguments)."""
    if ctx.artifacts_dir is not None:
        return Path(ctx.artifacts_dir)
    if ctx.workspace is not None:
        return ctx.workspace.state_dir / "artifacts" / re.sub(r"[^A-Za-z0-9_-]", "_", ctx.run_id)
    return None


def _stem(ref_id: str) -> str:
    if _SAFE_ID.match(ref_id):
        return ref_id
    return "ref_" + hashlib.sha256(ref_id.encode()).hexdigest()[:16]


def _free_path(folder: Path, stem: str, suffix: str) -> Path:
    path = folder / f"{stem}{suffix}"
    n = 2
    while path.exists():
        path = folder / f"{stem}-{n}{suffix}"
        n += 1
    return path


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e18:
            return f"{value:.0f}"
        return f"{value:.10g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _markdown(
    columns: list[str], rows: list[list[Cell]], units: Mapping[str, object], title: str, ref_id: str
) -> str:
    head = [f"{c} ({units[c]})" if units.get(c) else c for c in columns]
    lines = [f"# {title}", "", "| " + " | ".join(_cell_text(h) for h in head) + " |"]
    lines.append("| " + " | ".join("---" for _ in columns) + " |")
    lines += ["| " + " | ".join(_cell_text(v) for v in row) + " |" for row in rows]
    lines += ["", f"Source: [{ref_id}]", ""]
    return "\n".join(lines)


def _file_entry(path: Path, fmt: str) -> ArtifactFile:
    body = path.read_bytes()
    return {
        "path": str(path),
        "format": fmt,
        "bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
    }


def _chart_plan(
    args: SaveArtifactArgs, columns: list[str], rows: list[list[Cell]], units: Mapping[str, object]
) -> tuple[str | None, list[str]]:
    """Pick x and y columns and check the chart rule; raise ValueError with the reason."""
    numeric = [
        c
        for j, c in enumerate(columns)
        if any(_is_number(r[j]) for r in rows)
        and all(r[j] is None or _is_number(r[j]) for r in rows)
    ]
    x = args.x
    if x is not None and x not in columns:
        raise ValueError(f"x={x!r} is not a column of the table ({', '.join(columns)})")
    if x is None:
        text_cols = [c for c in columns if c not in numeric]
        x = text_cols[0] if text_cols else ("period" if "period" in columns else None)
    if args.y:
        missing = [c for c in args.y if c not in columns]
        if missing:
            raise ValueError(f"y names unknown column(s) {', '.join(missing)}")
        not_numeric = [c for c in args.y if c not in numeric]
        if not_numeric:
            raise ValueError(f"y column(s) {', '.join(not_numeric)} are not numeric")
        ys = list(args.y)
    else:
        ys = [c for c in numeric if c not in ("rank", x)]
    if not ys:
        raise ValueError("the table has no numeric column to plot")
    unit_set = {units.get(c) for c in ys}
    if len(ys) > 1 and (len(unit_set) > 1 or None in unit_set):
        shown = ", ".join(f"{c}: {units.get(c) or 'no unit'}" for c in ys)
        raise ValueError(
            f"the columns are not comparable on one axis ({shown}); chart one column or columns "
            "sharing one unit"
        )
    counts = [sum(1 for r in rows if _is_number(r[columns.index(c)])) for c in ys]
    if max(counts) < 2:
        raise ValueError(
            "a chart needs at least two comparable numeric values; this table has fewer. Save it "
            "as a table instead"
        )
    if len(rows) * len(ys) > MAX_CHART_POINTS:
        raise ValueError(f"too many points for one chart (at most {MAX_CHART_POINTS})")
    return x, ys


def _draw(path: Path, args: SaveArtifactArgs, columns, rows, units, x, ys, title) -> None:
    # deferred: matplotlib is heavy to import; paid on first use
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    labels = (
        [_cell_text(r[columns.index(x)]) for r in rows]
        if x
        else [str(i + 1) for i in range(len(rows))]
    )
    positions = list(range(len(rows)))
    width = 0.8 / len(ys)
    for k, col in enumerate(ys):
        j = columns.index(col)
        values = [r[j] if _is_number(r[j]) else float("nan") for r in rows]
        if args.chart_type == "bar":
            ax.bar(
                [p + (k - (len(ys) - 1) / 2) * width for p in positions], values, width, label=col
            )
        else:
            ax.plot(positions, values, marker="o" if len(rows) <= 40 else None, label=col)
    step = max(1, len(rows) // 20)
    ax.set_xticks(positions[::step])
    ax.set_xticklabels(
        labels[::step],
        rotation=45 if len(rows) > 6 else 0,
        ha="right" if len(rows) > 6 else "center",
        fontsize=8,
    )
    if x:
        ax.set_xlabel(x)
    unit = units.get(ys[0])
    ax.set_ylabel(f"{ys[0] if len(ys) == 1 else 'value'}" + (f" ({unit})" if unit else ""))
    if len(ys) > 1:
        ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")


@dataclass(frozen=True)
class _Table:
    """The tableRef being saved: its columns, rows, units and the artifact's title."""

    columns: list[str]
    rows: list[list[Cell]]
    units: Mapping[str, JsonValue]
    title: str


def _write_table(folder: Path, stem: str, table: _Table, ref_id: str) -> list[ArtifactFile]:
    """The table as CSV and as markdown (with its units and source), in fresh files."""
    columns, rows, units, title = table.columns, table.rows, table.units, table.title
    folder.mkdir(parents=True, exist_ok=True)
    csv_path = _free_path(folder, stem, ".csv")
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(columns)
    writer.writerows([["" if v is None else v for v in r] for r in rows])
    csv_path.write_text(buf.getvalue(), encoding="utf-8")
    md_path = _free_path(folder, stem, ".md")
    md_path.write_text(_markdown(columns, rows, units, title, ref_id), encoding="utf-8")
    return [_file_entry(csv_path, "csv"), _file_entry(md_path, "markdown")]


def _write_chart(
    args: SaveArtifactArgs, folder: Path, stem: str, table: _Table
) -> tuple[list[ArtifactFile], dict[str, JsonValue]]:
    """The table drawn as a PNG chart (planned first: an unchartable table writes nothing)."""
    columns, rows, units, title = table.columns, table.rows, table.units, table.title
    x, ys = _chart_plan(args, columns, rows, units)
    folder.mkdir(parents=True, exist_ok=True)
    png_path = _free_path(folder, f"{stem}-chart", ".png")
    _draw(png_path, args, columns, rows, units, x, ys, title)
    chart: dict[str, JsonValue] = {
        "type": args.chart_type,
        "x": x,
        "y": ys,
        "unit": units.get(ys[0]),
    }
    return [_file_entry(png_path, "png")], chart


def save_artifact(args: SaveArtifactArgs, ctx: ToolContext) -> ToolResult:
    ref = ctx.ledger.get(args.ref)
    if ref is None:
        return ToolResult.failure(
            f"no ref {args.ref!r} in this run; pass a tableRef id you were given"
        )
    if ref.kind != "tableRef":
        return ToolResult.failure(f"{args.ref} is a {ref.kind}; SaveArtifact saves tableRefs only")
    columns = ref.payload.get("columns")
    rows = ref.payload.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list) or not columns or not rows:
        return ToolResult.failure(
            f"{args.ref} has no table to save (columns/rows missing or empty)"
        )
    if any(not isinstance(r, list) or len(r) != len(columns) for r in rows):
        return ToolResult.failure(f"{args.ref} has malformed rows")
    columns = [str(c) for c in columns]
    raw_units = ref.payload.get("units")
    units: dict[str, JsonValue] = raw_units if isinstance(raw_units, dict) else {}
    folder = artifacts_folder(ctx)
    if folder is None:
        return ToolResult.failure("no artifacts folder is set for this run (no workspace loaded)")
    title = args.title or ref.title or f"Table {ref.id}"
    stem = _stem(ref.id)
    try:
        table = _Table(columns, rows, units, title)
        if args.kind == "table":
            files, chart = _write_table(folder, stem, table, ref.id), None
        else:
            files, chart = _write_chart(args, folder, stem, table)
    except ValueError as exc:
        return ToolResult.failure(f"cannot chart {args.ref}: {exc}")
    except OSError as exc:
        return ToolResult.failure(f"cannot write the artifact: {exc}")
    payload: ArtifactPayload = {
        "format": args.kind,
        "files": files,
        "path": files[0]["path"],
        "source_ref": ref.id,
        "rows": len(rows),
        "columns": columns,
        "title": title,
    }
    if chart:
        payload["chart"] = chart
    art = ctx.issue(
        "artifactRef",
        payload,
        title=f"{'Chart' if args.kind == 'chart' else 'Table'} of {ref.id}",
        source=f"SaveArtifact:{ref.id}",
    )
    data: JsonDict = {
        "ref": art.id,
        "files": [{"path": f["path"], "format": f["format"], "bytes": f["bytes"]} for f in files],
        "source_ref": ref.id,
    }
    if chart:
        data["chart"] = chart
    return ToolResult(ok=True, data=data, refs=[art])


SPEC = ToolSpec(
    name="SaveArtifact",
    description=(
        "Save a tableRef from this run as a file: kind='table' writes CSV + markdown; "
        "kind='chart' draws a PNG (line or bar) of numeric columns sharing one unit, and only "
        "when there are at least two comparable values. The folder and file names are fixed by "
        "refgate. Issues an artifactRef."
    ),
    args_schema=SaveArtifactArgs,
    func=save_artifact,
    read_only=False,
    issues=("artifactRef",),
)

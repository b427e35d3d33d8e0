"""CSV datasets with several header rows (issue 47): a caption, the years, a unit row, as an
annual report's table is exported. ``refgate init`` proposes ``header_rows``; the workspace joins
the rows into one name per column; pandas (``tools.frames``, the sandbox's ``datasets[...]``) and
DuckDB (``sql()``, InspectDataset's scans) read the body under those names. The table is TAT-QA
dev's 593a6ce0 shape (CC BY 4.0), cut to three rows."""

from __future__ import annotations

import tomllib
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.tools.dataset_scan import source_sql
from refgate.tools.frames import load_frame
from refgate.tools.sandbox.worker.sql import view_sql
from refgate.workspace import WorkspaceError, joined_header, load_workspace

CSV = (
    ',"Years Ended December 31,",\n'
    ",2019,2018\n"
    ",(in thousands),\n"
    "Telecommunication - Maintenance,86.8,87.0\n"
    "Telecommunication - Installation,33.2,41.5\n"
    "Total revenue,120.0,128.5\n"
)
NAMES = [
    "column 1",
    "Years Ended December 31, (in thousands) 2019",
    "Years Ended December 31, 2018",
]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ar"
    folder.mkdir()
    (folder / "revenue.csv").write_text(CSV, encoding="utf-8")
    (folder / "plain.csv").write_text("country,year,gdp\nKorea,2019,1.6\nJapan,2019,5.1\n")
    return folder


def test_init_proposes_the_header_rows_and_every_reader_uses_them(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    result = CliRunner().invoke(app, ["init", str(folder)])
    assert result.exit_code == 0, result.output
    text = (folder / "refgate.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    assert raw["datasets"]["revenue"]["header_rows"] == 3
    assert "header_rows" not in raw["datasets"]["plain"]  # a long table: its first row
    assert "header_rows = 3  #" in text  # marked as a guess
    spec = load_workspace(folder).datasets["revenue"]
    assert list(spec.header) == NAMES
    frame = load_frame(spec)
    assert list(frame.columns) == NAMES and len(frame) == 3
    assert frame.iloc[0, 1] == pytest.approx(86.8)
    con = duckdb.connect()
    rows = con.execute(f"SELECT * FROM {source_sql(spec)}").fetchall()
    assert rows[0] == ("Telecommunication - Maintenance", 86.8, 87.0) and len(rows) == 3
    con.execute(view_sql("rev", {"path": str(spec.path), "format": "csv", "header_rows": 3,
                                 "names": NAMES}))  # fmt: skip
    got = con.execute(f'SELECT "{NAMES[2]}" FROM rev WHERE "column 1" = \'Total revenue\'')
    assert got.fetchone() == (128.5,)


def test_header_rows_is_checked(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    for bad, why in (
        (0, "from 1 to 6"),
        (7, "from 1 to 6"),
        ("2", "whole number"),
        (True, "whole"),
    ):
        value = f'"{bad}"' if isinstance(bad, str) else str(bad).lower()
        (folder / "refgate.toml").write_text(
            f'name = "ar"\n[datasets.rev]\npath = "revenue.csv"\nheader_rows = {value}\n'
        )
        with pytest.raises(WorkspaceError, match=why):
            load_workspace(folder)


def test_joined_header_spans_a_period_over_its_measures() -> None:
    rows = [["", "2019", "", "2018", ""], ["Item", "Amount", "%", "Amount", "%"]]
    assert joined_header(rows) == ["Item", "Amount 2019", "% 2019", "Amount 2018", "% 2018"]
    assert joined_header([["a", "a"], ["", ""]]) == ["a", "a (2)"]

"""Workspace loading: the sample validates; malformed files fail with the file and the field."""

from pathlib import Path

import pytest

from refgate.workspace import WorkspaceError, load_workspace
from tests.support.sandbox import SAMPLE


def test_sample_workspace_declares_periods_labels_and_units():
    ws = load_workspace(SAMPLE)
    assert set(ws.datasets) == {"macro", "cpi", "treasury10y", "employment", "sp500"}
    macro = ws.datasets["macro"]
    assert macro.period == ("year", "quarter") and macro.frequency == "quarterly"
    assert macro.header[:3] == ("year", "quarter", "realgdp")
    assert macro.columns["realgdp"].unit == "USD" and macro.columns["realgdp"].scale == "billion"
    assert ws.datasets["cpi"].date_columns == ("Date",)
    assert ws.datasets["sp500"].labels == ("Symbol", "Name", "Sector")
    assert ws.datasets["sp500"].as_of == "2026-08-22"
    assert "ODC-PDDL" in ws.datasets["sp500"].source
    assert ws.dataset("macro") is macro
    with pytest.raises(WorkspaceError, match="no dataset 'nope'; datasets: cpi"):
        ws.dataset("nope")


def _ws(tmp_path: Path, toml: str, csv: str = "year,v\n2020,1\n") -> Path:
    (tmp_path / "d.csv").write_text(csv)
    (tmp_path / "refgate.toml").write_text(toml)
    return tmp_path


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ('[datasets.a]\npath = "missing.csv"\n', "datasets.a.path: file not found"),
        ('[datasets.a]\ndescription = "x"\n', "datasets.a.path is required"),
        (
            '[datasets.a]\npath = "d.csv"\n[datasets.a.columns.w]\nunit = "%"\n',
            "datasets.a.columns.w: unknown column",
        ),
        (
            '[datasets.a]\npath = "d.csv"\n[datasets.a.columns.v]\nunit = "furlongs"\n',
            "bad unit 'furlongs'",
        ),
        (
            '[datasets.a]\npath = "d.csv"\n[datasets.a.columns.v]\nscale = "zillion"\n',
            "bad scale 'zillion'",
        ),
        (
            '[datasets.a]\npath = "d.csv"\n[datasets.a.columns.v]\nunits = "%"\n',
            "unknown key(s) units",
        ),
        (
            '[datasets.a]\npath = "d.csv"\nperiod = ["month"]\n',
            "datasets.a.period: unknown column 'month'",
        ),
        ('[datasets.a]\npath = "d.csv"\nfrequency = "hourly"\n', "bad frequency 'hourly'"),
        ('[datasets.a]\npath = "d.csv"\nas_of = "last week"\n', "as_of: expected an ISO date"),
        ('[datasets.a]\npath = "d.csv"\nlabels = [1]\n', "expected a column name"),
        ('[datasets.a]\npath = "d.csv"\nperiods = ["year"]\n', "unknown key(s) periods"),
        ('[datasets."../x"]\npath = "d.csv"\n', "a dataset name is a letter"),
        ('[datasets.a]\npath = "refgate.toml"\n', "expected .csv or .parquet"),
        ("[datasets.a\n", "not valid TOML"),
        (
            '[settings]\nsandbox = "docker"\n',
            "[settings] sandbox: Input should be 'bwrap' or 'rlimits'",
        ),
    ],
)
def test_malformed_workspaces_name_the_file_and_field(tmp_path, toml, fragment):
    root = _ws(tmp_path, toml)
    with pytest.raises(WorkspaceError) as err:
        load_workspace(root)
    assert fragment in str(err.value)
    assert str(root / "refgate.toml") in str(err.value) or "folder" in str(err.value)


def test_an_empty_or_unreadable_dataset_file_is_an_error(tmp_path):
    root = _ws(tmp_path, '[datasets.a]\npath = "d.csv"\n', csv="")
    with pytest.raises(WorkspaceError, match="has no columns"):
        load_workspace(root)
    (tmp_path / "d.csv").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(WorkspaceError, match="cannot read the header"):
        load_workspace(root)


def test_missing_folder_and_config(tmp_path):
    with pytest.raises(WorkspaceError, match="workspace folder not found"):
        load_workspace(tmp_path / "nope")
    with pytest.raises(WorkspaceError, match="missing"):
        load_workspace(tmp_path)


def test_refgate_toml_nested_too_deeply_or_not_utf8_is_a_workspace_error(tmp_path):
    (tmp_path / "refgate.toml").write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(WorkspaceError, match="nested too deeply"):
        load_workspace(tmp_path)
    (tmp_path / "refgate.toml").write_bytes(b'name = "\xff\xfe"\n')
    with pytest.raises(WorkspaceError, match="not UTF-8"):
        load_workspace(tmp_path)

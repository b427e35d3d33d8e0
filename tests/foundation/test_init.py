"""`refgate init [DIR]`: a refgate.toml for a folder of data files and documents, columns read
from the files, units left for the user, validated; never overwrites; clear errors."""

import shutil
import tomllib
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from refgate.cli import app
from refgate.workspace import load_workspace

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "us-macro"


def test_init_writes_a_valid_workspace_with_the_files_columns(tmp_path):
    folder = tmp_path / "analysis"
    (folder / "raw").mkdir(parents=True)
    (folder / "notes").mkdir()
    shutil.copy(SAMPLE / "data" / "statsmodels_macrodata.csv", folder / "raw" / "macro data.csv")
    pd.DataFrame({"ticker": ["A", "B"], "price": [1.5, 2.0]}).to_parquet(folder / "px.parquet")
    (folder / "notes" / "memo.md").write_text("# Memo\nGDP grew.", encoding="utf-8")
    (folder / ".hidden.csv").write_text("x\n1\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["init", str(folder)])
    assert result.exit_code == 0, result.output
    raw = tomllib.loads((folder / "refgate.toml").read_text(encoding="utf-8"))
    assert raw["name"] == "analysis"
    assert set(raw["datasets"]) == {"macro_data", "px"}
    assert raw["datasets"]["macro_data"]["path"] == "raw/macro data.csv"
    assert set(raw["datasets"]["px"]["columns"]) == {"ticker", "price"}
    assert all("unit" not in c for c in raw["datasets"]["px"]["columns"].values())
    assert raw["documents"]["path"] == "notes"
    ws = load_workspace(folder)
    header = pd.read_csv(folder / "raw" / "macro data.csv", nrows=0).columns.tolist()
    assert list(ws.datasets["macro_data"].header) == header
    assert "2 dataset(s)" in " ".join(result.output.split())


def test_init_refuses_to_overwrite_and_reports_bad_folders(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "refgate.toml").write_text('name = "mine"\n', encoding="utf-8")
    again = CliRunner().invoke(app, ["init", str(folder)])
    assert again.exit_code == 2 and "already exists" in " ".join(again.output.split())
    assert (folder / "refgate.toml").read_text(encoding="utf-8") == 'name = "mine"\n'
    missing = CliRunner().invoke(app, ["init", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "not a folder" in " ".join(missing.output.split())


def test_init_keeps_no_file_when_a_data_file_is_unreadable(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "broken.parquet").write_bytes(b"not parquet at all")
    result = CliRunner().invoke(app, ["init", str(folder)])
    assert result.exit_code == 2 and "broken.parquet" in "".join(result.output.split())
    assert not (folder / "refgate.toml").exists()


def test_init_defaults_to_the_current_folder(tmp_path, monkeypatch):
    shutil.copy(SAMPLE / "data" / "statsmodels_macrodata.csv", tmp_path / "macro.csv")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "--name", "here"])
    assert result.exit_code == 0, result.output
    assert load_workspace(tmp_path).name == "here"


def test_init_force_never_loses_the_users_file(tmp_path):
    """``--force`` overwrote refgate.toml before validating, then deleted the failed new one: the
    user's file was gone (issue 31, item 4). Now the new file is validated beside it first, and
    the replaced one is kept as refgate.toml.bak."""
    folder = tmp_path / "w"
    folder.mkdir()
    mine = 'name = "mine"\n# my notes\n'
    (folder / "refgate.toml").write_text(mine, encoding="utf-8")
    outside = tmp_path / "outside.csv"
    outside.write_text("x\n1\n", encoding="utf-8")
    (folder / "linked.csv").symlink_to(outside)  # a dataset escaping the folder: fails validation
    failed = CliRunner().invoke(app, ["init", "--force", str(folder)])
    assert failed.exit_code == 2, failed.output
    assert (folder / "refgate.toml").read_text(encoding="utf-8") == mine
    assert sorted(p.name for p in folder.iterdir()) == ["linked.csv", "refgate.toml"]
    (folder / "linked.csv").unlink()
    shutil.copy(SAMPLE / "data" / "statsmodels_macrodata.csv", folder / "macro.csv")
    replaced = CliRunner().invoke(app, ["init", "--force", str(folder)])
    assert replaced.exit_code == 0, replaced.output
    assert (folder / "refgate.toml.bak").read_text(encoding="utf-8") == mine
    assert "macro" in load_workspace(folder).datasets
    assert "refgate.toml.bak" in "".join(replaced.output.split())


def test_init_writes_backslashes_quotes_and_newlines_in_names_as_toml(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    columns = ["C:\\temp\\x", 'say "hi"', "two\nlines", "tab\there", "plain"]
    pd.DataFrame([[1, 2, 3, 4, 5]], columns=columns).to_parquet(folder / "odd.parquet")
    result = CliRunner().invoke(app, ["init", "--name", 'a\\b "c"\nd', str(folder)])
    assert result.exit_code == 0, result.output
    raw = tomllib.loads((folder / "refgate.toml").read_text(encoding="utf-8"))
    assert raw["name"] == 'a\\b "c"\nd'
    assert list(raw["datasets"]["odd"]["columns"]) == columns
    assert list(load_workspace(folder).datasets["odd"].header) == columns


def test_init_guesses_units_and_the_period_column_and_marks_them(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "memo.txt").write_text("a memo", encoding="utf-8")
    (tmp_path / "sales.csv").write_text(
        "month,revenue_usd,margin,price,growth_pct,units_sold\n"
        "2024-01,100,12%,$5.00,1.5,7\n2024-02,120,13%,$5.50,2.0,8\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "refgate.toml").read_text(encoding="utf-8")
    ws = load_workspace(tmp_path)
    cols = ws.datasets["sales"].columns
    assert {c: cols[c].unit for c in cols} == {
        "month": None,
        "revenue_usd": "USD",  # from the name
        "margin": "%",  # from the values
        "price": "USD",  # from the currency symbol
        "growth_pct": "%",
        "units_sold": None,
    }
    assert 'period = "month"  # guessed by refgate init' in text
    assert 'unit = "USD"  # guessed by refgate init' in text
    assert "# unit" not in text  # written, not commented out
    said = " ".join(result.output.split())
    assert f"refgate index --workspace {tmp_path}" in said
    assert said.index("refgate index") < said.index("refgate ask")

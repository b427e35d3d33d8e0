"""InspectDataset, EngineCall, SaveArtifact and ReadCapability through their catalog SPECs."""

import csv
import json
from pathlib import Path

import pytest

from refgate.catalog.toolspec import ToolContext
from refgate.tools.registry import get_spec, write_tools
from tests.support.sandbox import SAMPLE


def run(tool: str, ctx: ToolContext, **kwargs):
    spec = get_spec(tool)
    return spec.func(spec.args_schema(**kwargs), ctx)


# ----------------------------------------------------------------------------- InspectDataset


def test_inspect_dataset_reports_schema_periods_metrics_and_samples(ctx):
    result = run("InspectDataset", ctx, dataset="macro")
    assert result.ok, result.error
    data = result.data
    assert data["rows"] == 203
    assert (data["first_period"], data["latest_period"], data["asOf"]) == (
        "1959Q1",
        "2009Q3",
        "2009-09-30",
    )
    assert data["frequency"] == "quarterly"
    columns = {c["column"]: c for c in data["columns"]}
    assert columns["realgdp"]["unit"] == "USD" and columns["realgdp"]["scale"] == "billion"
    assert columns["unemp"]["description"].startswith("Seasonally adjusted unemployment")
    assert columns["unemp"]["max"] == 10.7
    assert "realgdp" in data["metric_candidates"]
    assert "year" not in data["metric_candidates"] and "quarter" not in data["metric_candidates"]
    assert data["latest_values"]["unemp"] == {"value": 9.6, "period": "2009Q3"}
    assert [h["period"] for h in data["head"]] == ["1959Q1", "1959Q2", "1959Q3"]
    assert data["tail"][-1]["period"] == "2009Q3"
    (ref,) = result.refs
    assert ref.kind == "tableRef" and ref.id == data["ref"]
    assert ref.payload["columns"][:3] == ["column", "dtype", "unit"]
    assert len(ref.payload["rows"]) == 14
    assert ref.payload["meta"]["latest_period"] == "2009Q3"
    assert ref.payload["meta"]["latest_values"]["unemp"] == {"value": 9.6, "period": "2009Q3"}
    assert ref.payload["meta"]["column_units"]["realgdp"] == "USD billion"
    json.dumps(result.envelope())  # what the model receives is plain JSON


def test_inspect_dataset_on_a_snapshot_and_on_dates(ctx):
    sp = run("InspectDataset", ctx, dataset="sp500", sample_rows=1).data
    assert sp["latest_period"] is None and sp["asOf"] == "2026-08-22"
    assert len(sp["head"]) == 1 and len(sp["tail"]) == 1
    assert "Market Cap" in sp["metric_candidates"] and "Symbol" not in sp["metric_candidates"]
    cpi = run("InspectDataset", ctx, dataset="cpi", sample_rows=0).data
    with (SAMPLE / "data" / "datahub_cpi_us_cpiai.csv").open() as fh:
        last_date = list(csv.DictReader(fh))[-1]["Date"]
    assert cpi["latest_period"] == last_date[:7] and cpi["asOf"] == last_date
    assert cpi["head"] == [] and cpi["tail"] == []


def test_inspect_dataset_errors(ctx, settings, ledger):
    bad = run("InspectDataset", ctx, dataset="nope")
    assert not bad.ok and "unknown dataset 'nope'" in bad.error and "macro" in bad.error
    empty = run("InspectDataset", ToolContext("work", ledger, settings), dataset="macro")
    assert not empty.ok and "no workspace" in empty.error
    with pytest.raises(ValueError):
        get_spec("InspectDataset").args_schema(dataset="macro", sample_rows=50)


# ----------------------------------------------------------------------------- EngineCall


def test_engine_call_issues_an_execution_ref_plus_the_capability_refs(ctx):
    result = run(
        "EngineCall", ctx, name="latest_value", arguments={"dataset": "macro", "column": "unemp"}
    )
    assert result.ok, result.error
    exe, value = result.refs
    assert exe.kind == "executionRef" and value.kind == "valueRef"
    assert exe.payload["capability"] == "latest_value" and exe.payload["ok"] is True
    assert exe.payload["refs"] == [value.id]
    assert value.payload["values"] == {"unemp": 9.6}
    assert result.data["result"]["period"] == "2009Q3"
    assert result.data["refs"][0]["id"] == value.id
    assert ctx.ledger.get(value.id) == value and value.created_by == "work"


def test_engine_call_failures_still_record_an_execution_ref(ctx):
    for name, arguments, fragment in [
        ("nope", {}, "unknown capability 'nope'"),
        ("top_n", {"dataset": "sp500"}, "missing a required argument: 'column'"),
        ("top_n", {"dataset": "sp500", "column": "Price", "bogus": 1}, "unexpected keyword"),
        ("top_n", {"dataset": "sp500", "column": "Price", "env": 1}, "supplied by refgate"),
        ("latest_value", {"dataset": "macro", "column": "zzz"}, "has no column 'zzz'"),
    ]:
        result = run("EngineCall", ctx, name=name, arguments=arguments)
        assert not result.ok, name
        assert fragment in result.error, result.error
        (exe,) = result.refs
        assert exe.kind == "executionRef" and exe.payload["ok"] is False
        assert exe.payload["error"] == result.error


def test_engine_call_truncates_large_results_for_the_model(ctx):
    result = run("EngineCall", ctx, name="series", arguments={"dataset": "cpi", "column": "Index"})
    assert result.ok
    assert result.data.get("truncated") is True
    assert result.data["result"]["rows_total"] == 1360
    assert len(result.refs[1].payload["rows"]) == 1360  # the ref keeps everything


# ----------------------------------------------------------------------------- SaveArtifact


def _ranking(ctx, n=5):
    result = run(
        "EngineCall",
        ctx,
        name="top_n",
        arguments={"dataset": "sp500", "column": "Market Cap", "n": n},
    )
    return result.refs[1]


def test_save_artifact_is_a_write_tool():
    assert "SaveArtifact" in write_tools()
    assert not get_spec("SaveArtifact").read_only


def test_save_table_as_csv_and_markdown(ctx):
    table = _ranking(ctx)
    result = run("SaveArtifact", ctx, ref=table.id)
    assert result.ok, result.error
    (art,) = result.refs
    assert art.kind == "artifactRef" and art.payload["source_ref"] == table.id
    paths = [f["path"] for f in art.payload["files"]]
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"{table.id}.csv", f"{table.id}.md"]
    for path in paths:
        assert path.startswith(str(ctx.artifacts_dir))
    with open(paths[0], newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == table.payload["columns"]
    assert [r[1] for r in rows[1:]] == [r[1] for r in table.payload["rows"]]
    markdown = Path(paths[1]).read_text()
    assert "| rank | Symbol | Name | Sector | Market Cap (USD) |" in markdown
    assert f"Source: [{table.id}]" in markdown
    assert "5200733011968" in markdown  # full value, not 5.2e+12


def test_save_chart_as_png(ctx):
    table = _ranking(ctx)
    result = run("SaveArtifact", ctx, ref=table.id, kind="chart", chart_type="bar", x="Symbol")
    assert result.ok, result.error
    (art,) = result.refs
    path = art.payload["files"][0]["path"]
    assert path.endswith(f"{table.id}-chart.png")
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert art.payload["chart"] == {
        "type": "bar",
        "x": "Symbol",
        "y": ["Market Cap"],
        "unit": "USD",
    }
    again = run("SaveArtifact", ctx, ref=table.id, kind="chart")
    assert again.refs[0].payload["files"][0]["path"].endswith(f"{table.id}-chart-2.png")


def test_chart_needs_two_comparable_values(ctx):
    one_row = _ranking(ctx, n=1)
    result = run("SaveArtifact", ctx, ref=one_row.id, kind="chart")
    assert not result.ok and "at least two comparable numeric values" in result.error
    mixed = ctx.issue(
        "tableRef",
        {
            "columns": ["period", "gdp", "unemp"],
            "rows": [["a", 1.0, 5.0], ["b", 2.0, 6.0]],
            "units": {"gdp": "USD billion", "unemp": "%"},
        },
    )
    result = run("SaveArtifact", ctx, ref=mixed.id, kind="chart")
    assert not result.ok and "not comparable" in result.error
    ok = run("SaveArtifact", ctx, ref=mixed.id, kind="chart", y=["unemp"])
    assert ok.ok, ok.error
    assert not list(ctx.artifacts_dir.glob("*-chart-2.png"))


def test_save_artifact_rejects_other_refs_and_unknown_ids(ctx):
    value = run(
        "EngineCall", ctx, name="latest_value", arguments={"dataset": "macro", "column": "unemp"}
    ).refs[1]
    result = run("SaveArtifact", ctx, ref=value.id)
    assert not result.ok and "saves tableRefs only" in result.error
    result = run("SaveArtifact", ctx, ref="../../etc/passwd")
    assert not result.ok and "no ref" in result.error
    assert not (ctx.artifacts_dir / ".." / ".." / "etc").exists()


def test_artifact_names_never_come_from_the_ref_id_text(ctx):
    from refgate.refs import Ref

    odd = ctx.ledger.add(
        Ref(id="tbl_../../escape", kind="tableRef", payload={"columns": ["a"], "rows": [[1], [2]]})
    )
    result = run("SaveArtifact", ctx, ref=odd.id)
    assert result.ok, result.error
    for f in result.refs[0].payload["files"]:
        assert "/" not in f["path"][len(str(ctx.artifacts_dir)) + 1 :]
        assert "escape" not in f["path"]


def test_artifacts_default_to_the_workspace_state_folder(
    sample_ws, ledger, settings, tmp_path, monkeypatch
):
    from dataclasses import replace

    ws = replace(sample_ws, root=tmp_path)
    ctx = ToolContext("work", ledger, settings, ws, run_id="run/../x")
    table = _ranking(ctx)
    result = run("SaveArtifact", ctx, ref=table.id)
    assert result.ok
    assert (
        result.refs[0]
        .payload["path"]
        .startswith(str(tmp_path / ".refgate" / "artifacts" / "run____x"))
    )
    no_ws = ToolContext("work", ledger, settings)
    result = run("SaveArtifact", no_ws, ref=table.id)
    assert not result.ok and "no artifacts folder" in result.error


# ----------------------------------------------------------------------------- ReadCapability


def test_read_capability_by_name_issues_an_api_ref(ctx):
    result = run("ReadCapability", ctx, name="top_n")
    assert result.ok
    (ref,) = result.refs
    assert ref.kind == "apiRef"
    assert ref.payload["signature"].startswith("top_n(dataset: str, column: str")
    from refgate.catalog.capabilities import get_capability

    assert ref.payload["doc"] == get_capability("top_n").doc  # the docstring is the doc
    assert result.data["matches"][0]["ref"] == ref.id


def test_read_capability_search_ranks_by_meaning_words(ctx):
    result = run("ReadCapability", ctx, query="rank companies top market cap", limit=3)
    assert result.data["matches"][0]["name"] == "top_n"
    assert len(result.refs) == len(result.data["matches"]) <= 3
    change = run("ReadCapability", ctx, query="change between two quarters")
    assert change.data["matches"][0]["name"] == "period_change"
    emit = run("ReadCapability", ctx, name="emit_result")
    assert emit.data["matches"][0]["kind"] == "prelude"
    assert "tableRef" in emit.refs[0].payload["doc"]


def test_read_capability_lists_everything_and_handles_misses(ctx):
    everything = run("ReadCapability", ctx)
    names = {m["name"] for m in everything.data["matches"]}
    assert {"list_datasets", "latest_value", "top_n", "emit_result"} <= names
    assert len(everything.refs) == len(names)
    miss = run("ReadCapability", ctx, name="topn")
    assert not miss.ok and "no capability named 'topn'" in miss.error and "top_n" in miss.error
    none = run("ReadCapability", ctx, query="zzzz qqqq")
    assert none.ok and none.data["matches"] == [] and none.refs == []


def test_parquet_datasets_work_in_inspect_and_in_the_sandbox(tmp_path, ledger, settings):
    import shutil as _shutil

    import pandas as pd

    from refgate.tools.run_python import run_python
    from refgate.workspace import load_workspace

    frame = pd.DataFrame({"year": [2020, 2021, 2022], "sales": [1.5, 2.5, 4.0]})
    frame.to_parquet(tmp_path / "s.parquet")
    (tmp_path / "refgate.toml").write_text(
        '[datasets.s]\npath = "s.parquet"\n[datasets.s.columns.sales]\nunit = "USD"\n'
        'scale = "million"\n'
    )
    ws = load_workspace(tmp_path)
    ctx = ToolContext("work", ledger, settings, ws)
    data = run("InspectDataset", ctx, dataset="s").data
    assert data["latest_period"] == "2022" and data["latest_values"]["sales"]["value"] == 4.0
    if _shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    result = run_python(
        "emit_result(values={'sales': datasets['s'].sales.sum()}, sources=['s'])",
        workspace=ws,
        settings=settings,
    )
    assert result.ok, result.error
    assert result.refs[1].payload["values"] == {"sales": 8.0}
    assert result.refs[1].payload["scale"] == {"sales": "million"}


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("f(a: 'str', k: 'int' = 10) -> 'Evidence'", "f(a: str, k: int = 10)"),
        ("g(x: str = 'a:b') -> refgate.catalog.capabilities.Evidence", "g(x: str = 'a:b')"),
        ("h()", "h()"),
    ],
)
def test_capability_signatures_are_shown_plainly(raw, shown):
    from refgate.tools.read_capability import clean_signature

    assert clean_signature(raw) == shown

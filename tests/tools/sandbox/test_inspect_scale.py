"""InspectDataset and workspace loading on data of any size (issue 19): large datasets are
profiled by DuckDB without loading them into pandas, in bounded time; pathological headers are
refused quickly with a short, clear message."""

import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import refgate.tools.inspect_dataset as inspect_mod
from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.refs import RefLedger
from refgate.tools.registry import get_spec
from refgate.workspace import WorkspaceError, load_workspace
from tests.support.sandbox import SAMPLE


def _inspect(ws, name: str, sample_rows: int = 3):
    spec = get_spec("InspectDataset")
    ctx = ToolContext("work", RefLedger(), Settings(model="scripted", api_key="k"), ws)
    return spec.func(spec.args_schema(dataset=name, sample_rows=sample_rows), ctx)


def _forbid_pandas(monkeypatch):
    def refuse(spec):
        raise AssertionError(f"{spec.name} was loaded into pandas")

    monkeypatch.setattr(inspect_mod, "IN_MEMORY_MAX_BYTES", -1)
    monkeypatch.setattr(inspect_mod, "load_frame", refuse)


@pytest.mark.parametrize("name", ["macro", "cpi", "employment", "sp500"])
def test_the_duckdb_profile_agrees_with_the_pandas_one(sample_ws, monkeypatch, name):
    in_memory = _inspect(sample_ws, name)
    assert in_memory.ok, in_memory.error
    _forbid_pandas(monkeypatch)
    scanned = _inspect(sample_ws, name)
    assert scanned.ok, scanned.error
    a, b = dict(in_memory.data), dict(scanned.data)
    a.pop("ref"), b.pop("ref")
    columns_a, columns_b = a.pop("columns"), b.pop("columns")
    assert a == b
    for ca, cb in zip(columns_a, columns_b, strict=True):
        if ca["dtype"] == "float64" and cb["dtype"] == "Int64":  # integers with gaps: exact
            ca, cb = dict(ca, dtype=None), dict(cb, dtype=None)
        assert ca == cb


def test_a_large_parquet_is_profiled_without_pandas(tmp_path, monkeypatch):
    rows = 2_000_000
    year = pa.array([2000 + (i % 20) for i in range(rows)], pa.int64())
    value = pa.array([float(i % 1000) for i in range(rows)], pa.float64())
    pq.write_table(pa.table({"year": year, "sales": value}), tmp_path / "big.parquet")
    (tmp_path / "refgate.toml").write_text(
        '[datasets.big]\npath = "big.parquet"\n[datasets.big.columns.sales]\nunit = "USD"\n'
    )
    ws = load_workspace(tmp_path)
    _forbid_pandas(monkeypatch)
    result = _inspect(ws, "big", sample_rows=2)
    assert result.ok, result.error
    data = result.data
    assert data["rows"] == rows
    assert (data["first_period"], data["latest_period"]) == ("2000", "2019")
    columns = {c["column"]: c for c in data["columns"]}
    assert columns["sales"]["non_null"] == rows and columns["sales"]["max"] == 999.0
    assert data["latest_values"]["sales"]["period"] == "2019"
    assert [h["period"] for h in data["head"]] == ["2000", "2000"]
    assert [t["period"] for t in data["tail"]] == ["2019", "2019"]


def test_a_scan_past_its_deadline_stops_with_a_clear_message(sample_ws, monkeypatch):
    _forbid_pandas(monkeypatch)
    monkeypatch.setattr(inspect_mod, "SCAN_SECONDS", 0.0005)
    result = _inspect(sample_ws, "macro")
    assert not result.ok
    assert "bounded time" in result.error and "sql(" in result.error


def test_a_60_mb_header_is_refused_fast_with_a_short_message(tmp_path):
    header = ",".join(f"c{i}" for i in range(6_700_000))  # ~60 MB, 6.7 million columns
    (tmp_path / "wide.csv").write_text(header + "\n" + "1," * 10 + "1\n")
    (tmp_path / "refgate.toml").write_text('[datasets.wide]\npath = "wide.csv"\n')
    t0 = time.perf_counter()
    with pytest.raises(WorkspaceError) as err:
        load_workspace(tmp_path)
    assert time.perf_counter() - t0 < 2.0
    message = str(err.value)
    assert "datasets.wide.path" in message and "at most 10,000 columns" in message
    assert len(message) < 600


def test_a_declared_unknown_column_of_a_wide_file_gives_a_short_message(tmp_path):
    header = ",".join(f"column_{i}" for i in range(9_000))
    (tmp_path / "w.csv").write_text(header + "\n" + ",".join(["1"] * 9_000) + "\n")
    (tmp_path / "refgate.toml").write_text(
        '[datasets.w]\npath = "w.csv"\nperiod = "nope"\n'
        '[datasets.w.columns.missing]\nunit = "USD"\n'
    )
    with pytest.raises(WorkspaceError) as err:
        load_workspace(tmp_path)
    message = str(err.value)
    assert "unknown column" in message and "and 8980 more" in message
    assert len(message) < 2500


def test_a_parquet_with_too_many_columns_is_refused(tmp_path):
    table = pa.table({f"c{i}": pa.array([1], pa.int8()) for i in range(10_001)})
    pq.write_table(table, tmp_path / "w.parquet")
    (tmp_path / "refgate.toml").write_text('[datasets.w]\npath = "w.parquet"\n')
    with pytest.raises(WorkspaceError, match="10,001 columns"):
        load_workspace(tmp_path)


def test_the_sample_workspace_still_loads():
    assert {"macro", "cpi", "employment", "sp500"} <= set(load_workspace(SAMPLE).datasets)


def test_engine_capabilities_never_load_a_huge_dataset_on_the_host(tmp_path, monkeypatch):
    import refgate.tools.frames as caps
    from refgate.catalog.capabilities import EngineEnv
    from refgate.refs import RefLedger
    from refgate.tools.engine_call import CapabilityError, invoke_capability

    pq.write_table(
        pa.table({"year": pa.array(range(1990, 2020)), "sales": pa.array([1.0] * 30)}),
        tmp_path / "s.parquet",
    )
    (tmp_path / "refgate.toml").write_text('[datasets.s]\npath = "s.parquet"\n')
    env = EngineEnv(workspace=load_workspace(tmp_path))
    ledger = RefLedger()
    monkeypatch.setattr(caps, "LOAD_MAX_BYTES", 1)  # as if the file were larger than memory
    monkeypatch.setattr(caps, "_FRAMES", {})
    with pytest.raises(CapabilityError, match=r"too large to load whole.*sql\("):
        invoke_capability(
            "latest_value", [], {"dataset": "s", "column": "sales"}, env=env, issue=ledger.issue
        )
    listed = invoke_capability("list_datasets", env=env, issue=ledger.issue)
    (entry,) = listed.data["datasets"]
    assert entry["rows"] == 30 and "not loaded whole" in entry["note"]


def test_inspect_output_stays_small_on_wide_tables_and_long_fields(tmp_path):
    import json

    header = ",".join(f"c{i}" for i in range(3_000))
    cells = ",".join(["1"] * 2_999)
    long_field = "x" * 5_000_000
    (tmp_path / "w.csv").write_text(f'{header}\n"{long_field}",{cells}\n2,{cells}\n')
    (tmp_path / "refgate.toml").write_text('[datasets.w]\npath = "w.csv"\n')
    t0 = time.perf_counter()
    result = _inspect(load_workspace(tmp_path), "w", sample_rows=2)
    assert result.ok, result.error
    assert time.perf_counter() - t0 < 20
    envelope = json.dumps(result.data)
    assert len(envelope) < 100_000
    assert (
        len(result.data["columns"]) == 200 and "of 3,000 columns" in result.data["columns_listed"]
    )
    assert result.data["head"][0]["c0"].endswith("(5,000,000 characters)")
    assert len(result.refs[0].payload["rows"]) == 3_000  # the tableRef keeps every column

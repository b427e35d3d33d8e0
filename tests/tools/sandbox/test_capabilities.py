"""Data capabilities against the sample data, checked with an independent reader (csv module)."""

import csv

import pytest

from refgate.catalog.capabilities import EngineEnv, Evidence, catalog, get_capability, register
from refgate.tools.capabilities import CAPABILITIES
from tests.support.sandbox import SAMPLE

register(CAPABILITIES)  # the module under test's list, registered as its layer does


def _rows(name: str) -> list[dict[str, str]]:
    with (SAMPLE / "data" / name).open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def env():
    from refgate.workspace import load_workspace

    return EngineEnv(workspace=load_workspace(SAMPLE))


def call(name, env, **kw) -> Evidence:
    return get_capability(name).func(**kw, env=env)


def test_capabilities_are_registered_with_docstrings():
    caps = catalog()
    for name in (
        "list_datasets",
        "latest_value",
        "value_at",
        "series",
        "top_n",
        "period_change",
        "column_stats",
    ):
        assert name in caps
        assert caps[name].doc and "env" not in caps[name].signature
    assert caps["top_n"].signature.startswith("top_n(dataset: str, column: str, n: int = 10")


def test_latest_value_carries_unit_scale_period_and_as_of(env):
    last = _rows("statsmodels_macrodata.csv")[-1]
    ev = call("latest_value", env, dataset="macro", column="realgdp")
    (ref,) = ev.refs
    assert ref.kind == "valueRef"
    assert ref.payload["values"] == {"realgdp": float(last["realgdp"])}
    assert ref.payload["units"] == {"realgdp": "USD"}
    assert ref.payload["scale"] == "billion"
    assert ref.payload["period"] == f"{last['year']}Q{last['quarter']}" == "2009Q3"
    assert ref.payload["asOf"] == "2009-09-30"
    assert ev.data["value"] == float(last["realgdp"])


def test_latest_value_skips_missing_values(env):
    rows = [r for r in _rows("datahub_cpi_us_cpiai.csv") if r["Inflation"]]
    ev = call("latest_value", env, dataset="cpi", column="Inflation")
    assert ev.data["value"] == float(rows[-1]["Inflation"])
    assert ev.data["period"] == rows[-1]["Date"][:7]
    assert ev.refs[0].payload["asOf"] == rows[-1]["Date"]


def test_value_at_reads_one_period(env):
    row = next(
        r for r in _rows("statsmodels_macrodata.csv") if r["year"] == "2008" and r["quarter"] == "4"
    )
    ev = call("value_at", env, dataset="macro", column="unemp", period="2008Q4")
    assert ev.data["value"] == float(row["unemp"])
    ev = call("value_at", env, dataset="employment", column="unemployed_percent", period="2009")
    row = next(r for r in _rows("datahub_employment_us_aat1.csv") if r["year"] == "2009")
    assert ev.data["value"] == float(row["unemployed_percent"])
    assert ev.refs[0].payload["asOf"] == "2009-12-31"
    with pytest.raises(ValueError, match="no period '1900Q1'"):
        call("value_at", env, dataset="macro", column="unemp", period="1900Q1")


def test_series_between_periods(env):
    expected = [
        (f"{r['year']}Q{r['quarter']}", float(r["unemp"]))
        for r in _rows("statsmodels_macrodata.csv")
        if r["year"] in ("2007", "2008")
    ]
    ev = call("series", env, dataset="macro", column="unemp", start="2007Q1", end="2008Q4")
    assert [tuple(r) for r in ev.data["rows"]] == expected
    ref = ev.refs[0]
    assert ref.payload["columns"] == ["period", "unemp"]
    assert ref.payload["units"] == {"unemp": "%"}
    assert ref.payload["meta"]["asOf"] == "2008-12-31"
    last3 = call("series", env, dataset="treasury10y", column="Rate", last=3)
    assert [r[1] for r in last3.data["rows"]] == [
        float(r["Rate"]) for r in _rows("datahub_bond_yields_us_10y_monthly.csv")[-3:]
    ]


def test_top_n_ranks_entities_with_universe_and_missing_counts(env):
    rows = _rows("constituents-financials.csv")
    valid = [r for r in rows if r["Market Cap"]]
    expected = sorted(valid, key=lambda r: -float(r["Market Cap"]))[:5]
    ev = call("top_n", env, dataset="sp500", column="Market Cap", n=5)
    ref = ev.refs[0]
    assert ref.payload["columns"] == ["rank", "Symbol", "Name", "Sector", "Market Cap"]
    assert [r[0] for r in ref.payload["rows"]] == [1, 2, 3, 4, 5]
    assert [r[1] for r in ref.payload["rows"]] == [r["Symbol"] for r in expected]
    assert [r[4] for r in ref.payload["rows"]] == [float(r["Market Cap"]) for r in expected]
    meta = ref.payload["meta"]
    assert meta["universe"] == len(rows) and meta["excluded_missing"] == len(rows) - len(valid)
    assert meta["metric"] == "Market Cap" and meta["order"] == "descending"
    assert meta["asOf"] == "2026-08-22"
    low = call("top_n", env, dataset="sp500", column="Price/Earnings", n=2, ascending=True)
    pes = sorted(float(r["Price/Earnings"]) for r in rows if r["Price/Earnings"])
    assert [r[4] for r in low.data["rows"]] == pes[:2]


def test_top_n_on_a_time_series_ranks_periods(env):
    rows = _rows("datahub_employment_us_aat1.csv")
    best = max(rows, key=lambda r: float(r["unemployed_percent"]))
    ev = call("top_n", env, dataset="employment", column="unemployed_percent", n=1)
    assert ev.data["rows"] == [[1, best["year"], float(best["unemployed_percent"])]]
    assert ev.data["columns"] == ["rank", "period", "unemployed_percent"]


def test_period_change_year_over_year_in_percentage_points(env):
    rows = _rows("statsmodels_macrodata.csv")
    start, end = rows[-5], rows[-1]
    ev = call("period_change", env, dataset="macro", column="unemp", periods=4)
    payload = ev.refs[0].payload
    assert payload["values"]["start_value"] == float(start["unemp"])
    assert payload["values"]["end_value"] == float(end["unemp"])
    assert payload["values"]["change"] == pytest.approx(float(end["unemp"]) - float(start["unemp"]))
    assert payload["values"]["pct_change"] == pytest.approx(
        (float(end["unemp"]) / float(start["unemp"]) - 1) * 100, abs=1e-3
    )
    assert payload["units"]["change"] == "percentage points"
    assert payload["units"]["pct_change"] == "%"
    assert payload["period"] == "2008Q3 to 2009Q3"
    explicit = call(
        "period_change", env, dataset="macro", column="realgdp", start="2007Q4", end="2009Q2"
    )
    assert explicit.refs[0].payload["scale"]["change"] == "billion"
    assert explicit.data["start"]["period"] == "2007Q4"


def test_column_stats_names_where_extremes_occur(env):
    rows = _rows("datahub_bond_yields_us_10y_monthly.csv")
    rates = [float(r["Rate"]) for r in rows]
    ev = call("column_stats", env, dataset="treasury10y", column="Rate")
    assert ev.data["max"]["value"] == max(rates)
    assert ev.data["max"]["at"] == rows[rates.index(max(rates))]["Date"][:7]
    assert ev.data["count"] == len(rates)


def test_list_datasets_reports_spans(env):
    ev = call("list_datasets", env)
    by_name = {d["name"]: d for d in ev.data["datasets"]}
    assert by_name["macro"]["first_period"] == "1959Q1"
    assert by_name["macro"]["latest_period"] == "2009Q3"
    assert by_name["sp500"]["latest_period"] is None and by_name["sp500"]["as_of"] == "2026-08-22"
    assert "realgdp" in by_name["macro"]["metrics"] and "year" not in by_name["macro"]["metrics"]
    assert ev.refs[0].kind == "tableRef" and len(ev.refs[0].payload["rows"]) == 5


@pytest.mark.parametrize(
    ("name", "kwargs", "fragment"),
    [
        ("latest_value", {"dataset": "nope", "column": "x"}, "unknown dataset 'nope'"),
        ("latest_value", {"dataset": "macro", "column": "nope"}, "has no column 'nope'"),
        ("latest_value", {"dataset": "sp500", "column": "Price"}, "has no period column"),
        ("top_n", {"dataset": "sp500", "column": "Name"}, "has no numeric values"),
        ("top_n", {"dataset": "sp500", "column": "Price", "n": 0}, "n must be"),
        ("period_change", {"dataset": "macro", "column": "unemp", "periods": 500}, "no period 500"),
        ("series", {"dataset": "cpi", "column": "Index", "last": 0}, "last must be"),
    ],
)
def test_bad_arguments_raise_clear_value_errors(env, name, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        call(name, env, **kwargs)


def test_no_workspace_is_a_clear_error():
    with pytest.raises(ValueError, match="no workspace is loaded"):
        get_capability("list_datasets").func(env=EngineEnv())


def test_series_refuses_oversized_tables(tmp_path):
    from refgate.workspace import load_workspace

    (tmp_path / "d.csv").write_text("year,v\n" + "".join(f"{1000 + i},{i}\n" for i in range(2500)))
    (tmp_path / "refgate.toml").write_text('[datasets.long]\npath = "d.csv"\n')
    env = EngineEnv(workspace=load_workspace(tmp_path))
    with pytest.raises(ValueError, match="at most 2000"):
        call("series", env, dataset="long", column="v")
    assert len(call("series", env, dataset="long", column="v", start="3000").data["rows"]) == 500

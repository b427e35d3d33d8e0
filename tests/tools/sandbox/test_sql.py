"""sql() inside the sandbox: DuckDB views over the datasets, read-only, recorded as evidence, and
data larger than the sandbox's memory aggregated where datasets[...] refuses it (issue 19)."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from refgate.tools.run_python import run_python
from refgate.tools.sandbox.limits import Limits
from refgate.workspace import load_workspace
from tests.support.sandbox import needs_bwrap

pytestmark = needs_bwrap

#: A lowered sandbox memory limit, so that a modest file is larger than it in memory.
SMALL = Limits(memory_mb=768)
ROWS, CHUNK = 60_000_000, 10_000_000  # two int64 columns: 960 MB in memory, ~1 MB on disk


@pytest.fixture(scope="module")
def big_ws(tmp_path_factory):
    import numpy as np

    root = tmp_path_factory.mktemp("big")
    (root / "data").mkdir()
    schema = pa.schema([("k", pa.int64()), ("x", pa.int64())])
    with pq.ParquetWriter(root / "data" / "big.parquet", schema) as writer:
        for start in range(0, ROWS, CHUNK):
            i = np.arange(start, start + CHUNK, dtype=np.int64)
            writer.write_table(pa.table({"k": i % 10, "x": i % 7}, schema=schema))
    (root / "refgate.toml").write_text(
        '[workspace]\nname = "big"\n\n[datasets.big]\npath = "data/big.parquet"\n'
        'description = "60M synthetic rows"\n'
    )
    return load_workspace(root)


def _expected() -> dict[int, int]:
    # sum over i < ROWS with i % 10 == k of i % 7, computed in closed form per residue class
    out = {}
    for k in range(10):
        count = len(range(k, ROWS, 10))
        # i = k + 10 j; (k + 10 j) % 7 cycles with period 7 in j
        cycle = [(k + 10 * j) % 7 for j in range(7)]
        full, rest = divmod(count, 7)
        out[k] = full * sum(cycle) + sum(cycle[:rest])
    return out


def test_sql_aggregates_a_dataset_larger_than_the_sandbox_memory(big_ws, settings):
    code = """
df = sql("SELECT k, SUM(x) AS total, COUNT(*) AS n FROM big GROUP BY k ORDER BY k")
emit_result(table=df, sources=["big"])
top = sql("SELECT k, x FROM big ORDER BY x DESC, k DESC LIMIT 3")
print(top.to_dict("records"))
"""
    result = run_python(code, workspace=big_ws, settings=settings, limits=SMALL, timeout=120)
    assert result.ok, result.error
    (table,) = result.emitted
    rows = {r[0]: (r[1], r[2]) for r in table.payload["rows"]}
    assert {k: int(v[0]) for k, v in rows.items()} == _expected()
    assert sum(int(v[1]) for v in rows.values()) == ROWS
    assert table.payload["meta"]["sql"].startswith("SELECT k, SUM(x)")
    assert "[{'k': 9, 'x': 6}" in result.stdout
    recorded = [q["query"] for q in result.execution.payload["sql"]]
    assert recorded == [
        "SELECT k, SUM(x) AS total, COUNT(*) AS n FROM big GROUP BY k ORDER BY k",
        "SELECT k, x FROM big ORDER BY x DESC, k DESC LIMIT 3",
    ]


def test_datasets_refuses_the_large_dataset_and_points_at_sql(big_ws, settings):
    result = run_python(
        "df = datasets['big']\nprint(len(df))", workspace=big_ws, settings=settings, limits=SMALL
    )
    assert not result.ok
    assert "DatasetTooLarge" in result.error
    assert "sql(" in result.error and "'big'" in result.error


def test_sql_matches_pandas_on_the_sample_workspace(sample_ws, settings):
    code = """
a = sql('SELECT year, AVG(unemp) AS unemp FROM macro GROUP BY year ORDER BY year')
b = datasets['macro'].groupby('year', as_index=False)['unemp'].mean()
print(bool((a['unemp'].round(9).to_numpy() == b['unemp'].round(9).to_numpy()).all()), len(a))
"""
    result = run_python(code, workspace=sample_ws, settings=settings)
    assert result.ok, result.error
    assert result.stdout.split() == ["True", "51"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("INSERT INTO macro VALUES (1)", "one read-only query"),
        ("SELECT 1; SELECT 2", "one read-only query"),
        ("COPY macro TO 'x.csv'", "one read-only query"),
        ("SET lock_configuration = false", "one read-only query"),
        ("SELECT * FROM read_csv('/etc/passwd')", "Permission"),
        ("SELECT * FROM nosuch", "nosuch"),
        ("SELEC 1", "parse"),
    ],
)
def test_sql_refuses_writes_other_files_and_bad_queries(sample_ws, settings, query, message):
    code = (
        f"try:\n    sql({query!r})\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    result = run_python(code, workspace=sample_ws, settings=settings)
    assert result.ok, result.error
    assert result.stdout.startswith("SqlError"), result.stdout
    assert message in result.stdout


def test_sql_prints_nothing_of_its_own(sample_ws, settings):
    """DuckDB's progress bar (shown for queries over 2 s) would reach the code's stdout and so
    the model: it is off, and the configuration is locked."""
    code = (
        "print(sql(\"SELECT current_setting('enable_progress_bar') AS p\").p[0])\n"
        "try:\n    sql('SET enable_progress_bar = true')\nexcept Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    result = run_python(code, workspace=sample_ws, settings=settings)
    assert result.ok, result.error
    assert result.stdout == "False\nSqlError\n" and result.stderr == ""


def test_sql_works_in_the_rlimits_mode_with_file_access_still_limited(sample_ws):
    from refgate.config import Settings

    settings = Settings(model="scripted", api_key="test-key", sandbox="rlimits")
    code = (
        "print(int(sql('SELECT COUNT(*) AS n FROM macro').n[0]))\n"
        "try:\n    sql(\"SELECT * FROM read_csv('/etc/passwd')\")\n"
        "except Exception as exc:\n    print(type(exc).__name__, 'Permission' in str(exc))\n"
    )
    result = run_python(code, workspace=sample_ws, settings=settings)
    assert result.ok, result.error
    assert result.refs[0].payload["sandbox"] == "rlimits"
    assert result.stdout.split() == ["203", "SqlError", "True"]

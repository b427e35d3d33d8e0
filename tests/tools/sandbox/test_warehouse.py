"""Warehouse datasets (issue 19): a table in PostgreSQL declared in refgate.toml, reached through
Ibis by the host's query proxy; the sandbox itself reaches no host at all. The table holds the
sample workspace's real macro data (statsmodels macrodata, public domain)."""

import csv
import os
import socket
from pathlib import Path

import pytest

from refgate.refs import as_ref_map
from refgate.tools import warehouse
from refgate.tools.run_python import run_python
from refgate.tools.warehouse import close_all, run_query
from refgate.workspace import WorkspaceError, load_workspace
from tests.support.sandbox import SAMPLE, needs_bwrap

PG_URL = os.environ.get("REFGATE_TEST_POSTGRES_URL", "")
pytestmark = [
    needs_bwrap,
    pytest.mark.postgres,
    pytest.mark.skipif(not PG_URL, reason="REFGATE_TEST_POSTGRES_URL is unset (CI starts one)"),
]
PASSWORD_ENV = "REFGATE_TEST_WAREHOUSE_PASSWORD"
MACRO_CSV = SAMPLE / "data" / "statsmodels_macrodata.csv"
ISSUE_QUERY = (
    "SELECT s.who, s.salary FROM macro m, wh_secret s, "
    "(WITH wh_secret AS (SELECT 1 AS z) SELECT z FROM wh_secret) t"
)


@pytest.fixture(scope="module")
def pg():
    """A read-only role that may SELECT the macro table only; a table it may not read."""
    from urllib.parse import urlsplit

    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS wh_macro, wh_secret")
        con.execute(
            "CREATE TABLE wh_macro (year int, quarter int, realgdp double precision, "
            "unemp double precision, cpi double precision)"
        )
        with MACRO_CSV.open() as fh, con.cursor() as cur:
            rows = [
                (
                    int(r["year"]),
                    int(r["quarter"]),
                    float(r["realgdp"]),
                    float(r["unemp"]),
                    float(r["cpi"]),
                )
                for r in csv.DictReader(fh)
            ]
            cur.executemany("INSERT INTO wh_macro VALUES (%s, %s, %s, %s, %s)", rows)
        con.execute("CREATE TABLE wh_secret (who text, salary int)")
        con.execute("INSERT INTO wh_secret VALUES ('ceo', 999999)")
        con.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'wh_reader') THEN "
            "CREATE ROLE wh_reader LOGIN PASSWORD 'reader-pw'; END IF; END $$"
        )
        con.execute("REVOKE ALL ON wh_secret FROM wh_reader")
        con.execute("GRANT SELECT ON wh_macro TO wh_reader")
    parts = urlsplit(PG_URL)
    yield {"host": parts.hostname, "port": parts.port, "db": parts.path.lstrip("/"), "rows": rows}
    close_all()


def _write_ws(root: Path, pg, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refgate.toml").write_text(
        'name = "warehouse"\n\n[datasets.macro]\n'
        f'url = "postgresql://wh_reader@{pg["host"]}:{pg["port"]}/{pg["db"]}"\n'
        'table = "public.wh_macro"\n'
        f'password_env = "{PASSWORD_ENV}"\n'
        'description = "US quarterly macro data in PostgreSQL"\n'
        'period = ["year", "quarter"]\nfrequency = "quarterly"\n'
        '[datasets.macro.columns.unemp]\nunit = "%"\n'
        '[datasets.macro.columns.realgdp]\nunit = "USD"\nscale = "billion"\n' + extra
    )
    return root


@pytest.fixture
def wh_ws(tmp_path, pg, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "reader-pw")
    return load_workspace(_write_ws(tmp_path / "ws", pg))


def test_refgate_toml_holds_no_credentials(tmp_path, pg):
    root = tmp_path / "bad"
    root.mkdir()
    (root / "refgate.toml").write_text(
        '[datasets.s]\nurl = "postgresql://u:hunter2@db:5432/x"\ntable = "s"\n'
    )
    with pytest.raises(WorkspaceError, match="contains a password") as err:
        load_workspace(root)
    assert "hunter2" not in str(err.value)
    (root / "refgate.toml").write_text('[datasets.s]\nurl = "postgresql://db:5432/x"\n')
    with pytest.raises(WorkspaceError, match="datasets.s.table"):
        load_workspace(root)
    (root / "refgate.toml").write_text('[datasets.s]\nurl = "mysql://db/x"\ntable = "s"\n')
    with pytest.raises(WorkspaceError, match="unsupported database"):
        load_workspace(root)


def test_sql_over_a_warehouse_table_goes_through_the_host_proxy(wh_ws, settings, pg):
    code = """
df = sql("SELECT year, AVG(unemp) AS unemp FROM macro WHERE year >= 2007 GROUP BY year ORDER BY year")
emit_result(table=df, units={"unemp": "%"}, sources=["macro"])
try:
    datasets["macro"]
except KeyError as exc:
    print("datasets:", exc)
"""
    result = run_python(code, workspace=wh_ws, settings=settings)
    assert result.ok, result.error
    (table,) = result.emitted
    by_year = {r[0]: r[1] for r in table.payload["rows"]}
    expected = {}
    for y in (2007, 2008, 2009):
        vals = [r[3] for r in pg["rows"] if r[0] == y]
        expected[y] = sum(vals) / len(vals)
    assert by_year == pytest.approx(expected)
    assert "FROM macro" in table.payload["meta"]["sql"]
    assert result.execution.payload["sql"][0]["warehouse"] == ["macro"]
    assert "is a table in a database" in result.stdout and "sql()" in result.stdout


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM wh_secret",
        "SELECT * FROM public.wh_macro",
        "SELECT usename FROM pg_catalog.pg_user",
        "SELECT table_name FROM information_schema.tables",
        "SELECT pg_read_file('/etc/passwd')",
        "WITH d AS (DELETE FROM macro RETURNING *) SELECT * FROM d",
        "SELECT * INTO copy_of FROM macro",
        "SELECT 1",
    ],
)
def test_the_proxy_reaches_only_the_declared_tables_read_only(wh_ws, query):
    reply = run_query(wh_ws, query)
    assert reply["ok"] is False, reply
    assert reply["error"]


def test_the_role_cannot_read_other_tables_even_if_named_directly(tmp_path, pg, monkeypatch):
    """Defence in depth: a dataset pointed at a table the role may not read fails clearly."""
    monkeypatch.setenv(PASSWORD_ENV, "reader-pw")
    root = _write_ws(tmp_path / "ws2", pg)
    text = (root / "refgate.toml").read_text().replace("public.wh_macro", "public.wh_secret")
    text = text.split("period =")[0]
    (root / "refgate.toml").write_text(text)
    reply = run_query(load_workspace(root), "SELECT * FROM macro")
    assert reply["ok"] is False and "permission denied" in reply["error"]


def test_a_missing_password_variable_is_a_clear_error(tmp_path, pg, monkeypatch):
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    close_all()
    ws = load_workspace(_write_ws(tmp_path / "ws3", pg))
    reply = run_query(ws, "SELECT COUNT(*) FROM macro")
    assert reply["ok"] is False and PASSWORD_ENV in reply["error"]


def test_the_sandbox_reaches_neither_the_database_nor_any_other_host(wh_ws, settings, pg):
    code = f"""
import os, socket
for name, addr in [("database", ({pg["host"]!r}, {pg["port"]})), ("other", ("1.1.1.1", 443))]:
    try:
        socket.create_connection(addr, timeout=2).close()
        print(name, "CONNECTED")
    except OSError as exc:
        print(name, "blocked")
print("password visible:", any("reader-pw" in v for v in os.environ.values()))
"""
    result = run_python(code, workspace=wh_ws, settings=settings)
    assert result.ok, result.error
    assert result.stdout.splitlines() == [
        "database blocked",
        "other blocked",
        "password visible: False",
    ]
    with socket.create_connection((pg["host"], pg["port"]), timeout=2):
        pass  # the database itself is up: the sandbox is what cannot reach it


def test_inspect_dataset_profiles_the_warehouse_table(wh_ws, settings, ledger):
    from refgate.catalog.toolspec import ToolContext
    from refgate.tools.registry import get_spec

    spec = get_spec("InspectDataset")
    ctx = ToolContext("work", ledger, settings, wh_ws)
    result = spec.func(spec.args_schema(dataset="macro"), ctx)
    assert result.ok, result.error
    assert result.data["rows"] == 203
    assert result.data["latest_period"] == "2009Q3"
    assert result.data["latest_values"]["unemp"] == {"value": 9.6, "period": "2009Q3"}
    assert "wh_macro at postgresql://" in result.refs[0].payload["meta"]["file"]
    assert "reader-pw" not in str(result.refs[0].payload)


def test_a_postgres_backed_dataset_answers_end_to_end(wh_ws, monkeypatch, pg):
    from langgraph.checkpoint.memory import InMemorySaver

    from refgate.graph import build_graph
    from refgate.testing import ScriptedChatModel, calls, tool_call
    from tests.support.evidence import ids_in

    code = (
        "df = sql('SELECT unemp FROM macro WHERE year = 2009 AND quarter = 3')\n"
        "emit_result(values={'unemp': float(df['unemp'].iloc[0])}, units={'unemp': '%'},"
        " period='2009Q3', sources=['macro'], title='US unemployment rate 2009Q3')\n"
    )

    def answer(text):
        return f"The US unemployment rate in 2009Q3 was 9.6% [{ids_in(text, 'val')[-1]}]."

    responses = [
        calls(tool_call("ReadSkill", {"query": "single value lookup"})),
        '{"lens": "single value", "criteria": ["the rate matches the macro table"]}',
        calls(tool_call("InspectDataset", {"dataset": "macro"})),
        calls(tool_call("RunPython", {"code": code})),
        "val_ holds unemp for 2009Q3",
        '["the unemployment rate is seasonally adjusted"]',
        answer,
        "nothing worth remembering",
    ]
    model = ScriptedChatModel(responses=responses)
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=str(wh_ws.root))
    config = {"configurable": {"thread_id": "warehouse-e2e"}}
    out = graph.invoke({"question": "What was the US unemployment rate in 2009Q3?"}, config)
    assert out["gate"]["passed"] is True, out["gate"]
    val = next(r for r in as_ref_map(out["refs"]).values() if r.kind == "valueRef")
    assert val.payload["values"] == {"unemp": 9.6}
    exe = [
        r
        for r in as_ref_map(out["refs"]).values()
        if r.kind == "executionRef" and r.payload.get("sql")
    ]
    assert exe and "FROM macro" in exe[-1].payload["sql"][0]["query"]


# -- issue 31: the CTE bypass, and the session layer that does not depend on parsing --


@pytest.fixture
def owner_ws(tmp_path, pg):
    """The table declared with the database owner's role (a superuser here): only refgate's two
    layers stand between a query and every table and catalog."""
    root = tmp_path / "owner"
    root.mkdir()
    (root / "refgate.toml").write_text(
        'name = "owner"\n[datasets.macro]\n'
        f'url = "postgresql://postgres@{pg["host"]}:{pg["port"]}/{pg["db"]}"\n'
        'table = "public.wh_macro"\n'
    )
    return load_workspace(root)


@pytest.mark.parametrize("role", ["reader", "owner"])
@pytest.mark.parametrize(
    "query",
    [
        ISSUE_QUERY,
        ISSUE_QUERY.replace("wh_secret", "pg_authid").replace("s.who, s.salary", "s.*"),
        ISSUE_QUERY.replace("wh_secret", "pg_user").replace("s.who, s.salary", "s.*"),
        ISSUE_QUERY.replace("wh_secret", "pg_tables").replace("s.who, s.salary", "s.*"),
    ],
)
def test_the_issues_cte_bypass_is_refused_for_every_role(request, role, query):
    ws = request.getfixturevalue("wh_ws" if role == "reader" else "owner_ws")
    reply = warehouse.run_query(ws, query)
    assert reply["ok"] is False, reply
    assert "999999" not in str(reply) and "ceo" not in str(reply)


def _session(ws, text: str):
    """The session layer alone, as if the checker had let ``text`` through."""
    return warehouse._fetch({"macro": ws.datasets["macro"]}, text, 100)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT * FROM wh_secret", "does not exist"),
        ("SELECT * FROM public.wh_secret", "public.wh_secret"),
        ("SELECT * FROM pg_authid", "pg_catalog.pg_authid"),
        ("SELECT * FROM pg_user", "pg_catalog.pg_authid"),
        ("SELECT * FROM macro, pg_settings", "not warehouse datasets"),
        ("SELECT * FROM information_schema.tables", "not warehouse datasets"),
        ("SELECT * FROM macro WHERE year IN (SELECT salary FROM public.wh_secret)", "wh_secret"),
        ("INSERT INTO macro (year) VALUES (1900)", "read-only"),
    ],
)
def test_the_session_refuses_what_the_checker_would_without_parsing(owner_ws, text, expected):
    with pytest.raises(warehouse.WarehouseError, match=expected):
        _session(owner_ws, text)


def test_the_session_reads_the_declared_table_and_leaves_nothing_behind(owner_ws, pg):
    columns, rows = _session(owner_ws, "SELECT COUNT(*) AS n FROM macro")
    assert columns == ["n"] and rows == [(len(pg["rows"]),)]
    reply = warehouse.run_query(
        owner_ws, "WITH macro AS (SELECT * FROM macro WHERE year = 2009) SELECT COUNT(*) FROM macro"
    )
    assert reply == {"ok": True, "columns": ["count"], "rows": [[3]]}
    # the temporary views went with the transaction, and the session is read-only again
    columns, rows = _session(
        owner_ws, "SELECT current_setting('transaction_read_only') AS ro FROM macro LIMIT 1"
    )
    assert rows == [("on",)]
    with pytest.raises(warehouse.WarehouseError, match="does not exist"):
        warehouse._fetch({"other": owner_ws.datasets["macro"]}, "SELECT * FROM macro", 1)

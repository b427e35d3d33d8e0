"""``refgate dart sync`` against the local fake of OpenDART: what it stores, that a second sync
fetches only new filings, and each failure's message and exit code with nothing half-written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from refgate.cli import app
from tests.support.dart import write_workspace

runner = CliRunner()


def run(ws: Path, *args: str):
    return runner.invoke(app, ["dart", "sync", "-w", str(ws), *args])


def rows(ws: Path) -> list[dict[str, str]]:
    with (ws / "data" / "dart" / "statements.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def stored_files(ws: Path) -> dict[str, bytes]:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if p.is_file() and p.name != "refgate.toml"
    }


def test_sync_stores_sections_tables_and_statements(tmp_path, dart_env):
    ws = write_workspace(tmp_path / "ws")
    result = run(ws, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["companies"] == {
        "99100001": "한빛전자",
        "99100002": "새봄화학",
        "99100003": "누리자동차",
    }
    assert len(summary["fetched"]) == 8
    record = json.loads((ws / "documents/dart/99100001/20240312000101.dart").read_text("utf-8"))
    assert record["filing"]["rcept_dt"] == "20240312"
    assert record["filing"]["report_nm"] == "사업보고서 (2023.12)"
    titles = [s["title"] for s in record["sections"]]
    assert titles[:2] == ["I. 회사의 개요", "II. 사업의 내용"]
    finance = record["sections"][2]
    table = finance["tables"][0]
    assert table["unit"] == "백만원" and table["section_id"] == "s03"
    assert table["rows"][0][:2] == ["매출액", "25,893,548"]
    # statements: 당기/전기/전전기 as fiscal years, 연결/별도, source filing
    data = rows(ws)
    revenue = {
        (r["rcept_no"], r["basis"], r["period_label"]): int(r["amount"])
        for r in data
        if r["account_nm"] == "매출액"
    }
    assert revenue[("20240312000101", "연결", "FY2023")] == 25_893_548_000_000
    assert revenue[("20240312000101", "연결", "FY2022")] == 30_214_700_000_000
    assert revenue[("20240312000101", "연결", "FY2021")] == 27_900_100_000_000
    assert (
        revenue[("20240312000101", "별도", "FY2023")]
        < revenue[("20240312000101", "연결", "FY2023")]
    )
    # the 반기보고서: Q2 and H1 of 2024 and of 2023
    assert revenue[("20240814000103", "연결", "2024 Q2")] == 7_406_800_000_000
    assert revenue[("20240814000103", "연결", "2024 H1")] == 14_182_300_000_000
    assert revenue[("20240814000103", "연결", "2023 H1")] == 12_398_500_000_000
    # a major-event report has a document and no statements
    assert (ws / "documents/dart/99100003/20240520000302.dart").is_file()
    assert not any(r["rcept_no"] == "20240520000302" for r in data)


def test_second_sync_fetches_only_new_filings(tmp_path, dart_env):
    ws = write_workspace(tmp_path / "ws", end="2023-12-31")
    assert run(ws).exit_code == 0
    first = dart_env.count("document.xml")
    assert first == 3  # the three FY2022 사업보고서
    write_workspace(ws, end="2024-12-31")
    result = run(ws, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["already_synced"] == 3 and len(summary["fetched"]) == 5
    assert dart_env.count("document.xml") == first + 5
    before = dart_env.count("document.xml")
    again = json.loads(run(ws, "--json").stdout)
    assert again["fetched"] == [] and dart_env.count("document.xml") == before


def test_missing_key_exits_2_and_writes_nothing(tmp_path, dart_env, monkeypatch):
    monkeypatch.delenv("OPENDART_API_KEY")
    ws = write_workspace(tmp_path / "ws")
    result = run(ws)
    assert result.exit_code == 2
    assert "OPENDART_API_KEY" in result.output
    assert stored_files(ws) == {} and dart_env.calls == []


def test_refused_key_exits_2(tmp_path, dart_env, monkeypatch):
    monkeypatch.setenv("OPENDART_API_KEY", "not-a-registered-key")
    result = run(write_workspace(tmp_path / "ws"))
    assert result.exit_code == 2
    assert "status 010" in result.output and "OPENDART_API_KEY" in result.output


def test_unknown_company_exits_2_before_fetching_filings(tmp_path, dart_env):
    ws = write_workspace(tmp_path / "ws", companies='["900001", "123456"]')
    result = run(ws)
    assert result.exit_code == 2
    assert "123456" in result.output and "does not know" in result.output
    assert dart_env.count("list.json") == 0 and dart_env.count("document.xml") == 0


def test_network_error_exits_1(tmp_path, dart_env, monkeypatch):
    monkeypatch.setenv("OPENDART_BASE_URL", "http://127.0.0.1:9/api")  # nothing listens
    result = run(write_workspace(tmp_path / "ws"))
    assert result.exit_code == 1
    assert "cannot reach" in result.output


def _complete(ws: Path) -> None:
    """Every filing in the manifest has all its files; no temporary file is left."""
    manifest = json.loads((ws / "dart" / "manifest.json").read_text("utf-8"))
    for rcept_no, filing in manifest["filings"].items():
        assert (ws / "documents/dart" / filing["corp_code"] / f"{rcept_no}.dart").is_file()
        assert (ws / "dart/raw/documents" / f"{rcept_no}.zip").is_file()
    assert not [p for p in ws.rglob("*.tmp")]
    listed = {p.stem for p in (ws / "documents/dart").rglob("*.dart")}
    assert listed == set(manifest["filings"])
    data_rcepts = {r["rcept_no"] for r in rows(ws)}
    assert data_rcepts <= set(manifest["filings"])


def test_http_500_midway_keeps_what_was_fetched_and_resumes(tmp_path, dart_env):
    ws = write_workspace(tmp_path / "ws")
    dart_env.faults["document.xml"] = ("500", 4)
    result = run(ws)
    assert result.exit_code == 1
    assert "HTTP 500" in result.output
    manifest = json.loads((ws / "dart" / "manifest.json").read_text("utf-8"))
    assert len(manifest["filings"]) == 3
    _complete(ws)
    dart_env.faults.clear()
    before = dart_env.count("document.xml")
    resumed = json.loads(run(ws, "--json").stdout)
    assert resumed["already_synced"] == 3 and len(resumed["fetched"]) == 5
    assert dart_env.count("document.xml") == before + 5
    _complete(ws)


def test_daily_limit_stops_with_a_clear_message_and_resumes(tmp_path, dart_env):
    ws = write_workspace(tmp_path / "ws")
    dart_env.faults["fnlttSinglAcntAll.json"] = ("020", 3)
    result = run(ws)
    assert result.exit_code == 1
    assert "status 020" in result.output and "daily request limit" in result.output
    _complete(ws)
    done = json.loads((ws / "dart" / "manifest.json").read_text("utf-8"))["filings"]
    assert len(done) == 1  # the 2nd filing's 별도 statements hit the limit
    dart_env.faults.clear()
    assert run(ws).exit_code == 0
    _complete(ws)
    full = json.loads((ws / "dart" / "manifest.json").read_text("utf-8"))["filings"]
    assert len(full) == 8


def test_dropped_connection_exits_1(tmp_path, dart_env):
    dart_env.faults["list.json"] = ("drop", 1)
    result = run(write_workspace(tmp_path / "ws"))
    assert result.exit_code == 1
    assert "DART sync stopped" in result.output


def test_offline_rebuild_reproduces_documents_and_dataset(tmp_path, dart_env, monkeypatch):
    ws = write_workspace(tmp_path / "ws")
    assert run(ws).exit_code == 0
    before = stored_files(ws)
    for p in (ws / "documents").rglob("*.dart"):
        p.unlink()
    (ws / "data/dart/statements.csv").unlink()
    monkeypatch.delenv("OPENDART_API_KEY")
    calls = len(dart_env.calls)
    result = run(ws, "--offline")
    assert result.exit_code == 0, result.output
    assert len(dart_env.calls) == calls
    assert stored_files(ws) == before


def test_bad_dart_block_exits_2(tmp_path, dart_env):
    ws = write_workspace(tmp_path / "ws", companies='["samsung"]')
    result = run(ws)
    assert result.exit_code == 2 and "stock code" in result.output

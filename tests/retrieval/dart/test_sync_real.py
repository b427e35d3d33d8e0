"""``refgate dart sync`` against the local fake of OpenDART serving the REAL recording
(``scripts/make_dart_recording.py`` over ../shared/data/dart-real): a workspace of real filings
(엔씨소프트 with sections and statements, SK하이닉스 and 현대자동차 with statements, 삼성전자's
2022 half-year document), a second sync that fetches nothing, and an interrupted sync that
resumes to the same workspace."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from tests.support.dart import KEY, write_real_workspace

runner = CliRunner()
#: the real recording and its sync, built once per session, are the heavy part
pytestmark = pytest.mark.slow
NC, HYNIX, HYUNDAI, SAMSUNG = "00261443", "00164779", "00164742", "00126380"


def rows(ws: Path) -> list[dict[str, str]]:
    with (ws / "data/dart/statements.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def stored(ws: Path) -> dict[str, bytes]:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if p.is_file() and p.name not in ("refgate.toml", "manifest.json")
    }


def test_the_workspace_holds_real_filings(real_workspace):
    ws, summary = real_workspace
    assert summary["companies"] == {
        NC: "엔씨소프트",
        HYNIX: "SK하이닉스",
        HYUNDAI: "현대자동차",
        SAMSUNG: "삼성전자",
    }
    assert summary["problems"] == []
    # 엔씨소프트: its sections, as documents, split by the table of contents
    nc = sorted((ws / "documents/dart" / NC).glob("*.dart"))
    assert len(nc) == 8
    record = json.loads((ws / "documents/dart" / NC / "20240320001965.dart").read_text("utf-8"))
    assert record["filing"]["report_nm"] == "사업보고서 (2023.12)"
    assert record["filing"]["rcept_dt"] == "20240320"
    titles = [s["title"] for s in record["sections"]]
    assert titles[1:4] == ["I. 회사의 개요", "II. 사업의 내용", "III. 재무에 관한 사항"]
    finance = record["sections"][3]
    summary_table = next(t for t in finance["tables"] if t["columns"][0] == "구 분")
    assert summary_table["unit"] == "원"
    assert summary_table["rows"][1][:2] == ["유동자산", "2,336,838,507,769"]
    # 삼성전자's 2022 half-year document (EUC-KR under a utf-8 header)
    samsung = json.loads(
        (ws / "documents/dart" / SAMSUNG / "20220816001711.dart").read_text("utf-8")
    )
    assert [s["title"] for s in samsung["sections"]][1] == "I. 회사의 개요"
    # no document for SK하이닉스 or 현대자동차 (none in the data): statements only
    assert not (ws / "documents/dart" / HYNIX).exists()
    data = rows(ws)
    revenue = {
        (r["corp_name"], r["account_nm"], r["fiscal_year"]): int(r["amount"])
        for r in data
        if r["basis"] == "연결"
        and r["period"] == "FY"
        and r["account_nm"] in ("매출액", "영업수익")
    }
    assert revenue[("엔씨소프트", "영업수익", "2023")] == 1_779_832_977_766
    assert revenue[("엔씨소프트", "영업수익", "2022")] == 2_571_792_281_800
    assert revenue[("SK하이닉스", "매출액", "2023")] == 32_765_719_000_000
    assert revenue[("현대자동차", "매출액", "2023")] == 162_663_579_000_000
    # the amendment and its original share one answer: its rows enter the dataset once
    nc_fy23 = [
        r
        for r in data
        if r["corp_name"] == "엔씨소프트" and r["account_nm"] == "영업수익"
        and r["basis"] == "연결" and r["fiscal_year"] == "2023" and r["period"] == "FY"
    ]  # fmt: skip
    assert len(nc_fy23) == 1


def test_a_second_sync_fetches_nothing_new(real_workspace, real_api, monkeypatch):
    ws, first = real_workspace
    monkeypatch.setenv("OPENDART_API_KEY", KEY)
    monkeypatch.setenv("OPENDART_BASE_URL", real_api.base_url)
    before = stored(ws)
    documents, statements = real_api.count("document.xml"), real_api.count("fnlttSinglAcntAll.json")
    result = runner.invoke(app, ["dart", "sync", "-w", str(ws), "--json"])
    assert result.exit_code == 0, result.output
    again = json.loads(result.stdout)
    assert again["fetched"] == [] and again["already_synced"] == len(first["fetched"])
    assert real_api.count("document.xml") == documents
    assert real_api.count("fnlttSinglAcntAll.json") == statements
    assert stored(ws) == before


def test_an_interrupted_sync_resumes_to_the_same_workspace(
    real_workspace, real_api, tmp_path, monkeypatch
):
    full, _ = real_workspace
    monkeypatch.setenv("OPENDART_API_KEY", KEY)
    monkeypatch.setenv("OPENDART_BASE_URL", real_api.base_url)
    ws = write_real_workspace(tmp_path / "ws")
    real_api.faults["document.xml"] = ("drop", real_api.count("document.xml") + 12)
    try:
        cut = runner.invoke(app, ["dart", "sync", "-w", str(ws), "--json"])
    finally:
        real_api.faults.clear()
    assert cut.exit_code == 1 and "DART sync stopped" in cut.output
    done = json.loads((ws / "dart/manifest.json").read_text("utf-8"))["filings"]
    assert 0 < len(done) < 30
    for rcept_no, filing in done.items():  # nothing half-written is listed
        if filing["document"]:
            assert (ws / "documents/dart" / filing["corp_code"] / f"{rcept_no}.dart").is_file()
    resumed = runner.invoke(app, ["dart", "sync", "-w", str(ws), "--json"])
    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert summary["already_synced"] == len(done)
    assert len(summary["fetched"]) == 30 - len(done)
    assert stored(ws) == stored(full)


def test_a_name_several_companies_share_stops_with_its_candidates(real_api, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENDART_API_KEY", KEY)
    monkeypatch.setenv("OPENDART_BASE_URL", real_api.base_url)
    ws = write_real_workspace(tmp_path / "ws", companies='["삼성"]')
    listed = real_api.count("list.json")
    result = runner.invoke(app, ["dart", "sync", "-w", str(ws)])
    assert result.exit_code == 2
    assert "삼성전자 (005930)" in result.output.replace("\n", "")
    assert real_api.count("list.json") == listed  # stopped before listing anything

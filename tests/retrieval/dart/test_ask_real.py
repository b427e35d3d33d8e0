"""``refgate ask`` end to end on REAL filings, with a scripted model behind the real OpenAI
client: 엔씨소프트's 2023 연결 매출액 (영업수익) and its fall from 2022 computed by RunPython
from the statements synced from the real recording, the 사업보고서 searched with a company and a
receipt-date filter, the GATE checking the 조/억 figures (and blocking a wrong one), and the HTML
report citing the filing by name, receipt date, receipt number and section."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.retrieval import DocumentIndex, HashingEmbeddings, index_dir, workspace_documents
from refgate.testing_openai import OpenAIStub, tool, tool_reply
from refgate.workspace import load_workspace

QUESTION = "엔씨소프트의 2023년 연결 기준 매출액은 얼마였고 전년 대비 얼마나 줄었나요?"
NC = "00261443"
#: 사업보고서 (2023.12) and (2022.12): the date filter must pick the 2024 receipt
FILINGS = ("20240320001965", "20230321001334")
#: The FY2023 statements come with the amendment's receipt number (20240322000989)
CODE = (
    "df = datasets['statements']\n"
    "rev = df[(df.corp_name == '엔씨소프트') & (df.account_nm == '영업수익') & (df.basis == '연결')"
    " & (df.period == 'FY') & (df.bsns_year == 2023)]\n"
    "now = int(rev[rev.fiscal_year == 2023].amount.iloc[0])\n"
    "before = int(rev[rev.fiscal_year == 2022].amount.iloc[0])\n"
    "emit_result(values={'영업수익 FY2023': now, '영업수익 FY2022': before,"
    " '영업수익 감소액': now - before, '영업수익 증감률': round((now - before) / before * 100, 1)},"
    " units={'영업수익 FY2023': 'KRW', '영업수익 FY2022': 'KRW', '영업수익 감소액': 'KRW',"
    " '영업수익 증감률': '%'}, period=['FY2023', 'FY2022'], sources=['statements'],"
    " title='엔씨소프트 연결 영업수익 FY2023 vs FY2022')\n"
)
SEARCH = {
    "query": "영업수익 감소 모바일 게임 매출",
    "company": "엔씨소프트",
    "date_from": "2024-01-01",
    "date_to": "2024-12-31",
    "k": 3,
}
TOML = """name = "kr-real-ask"

[documents]
path = "documents"

[datasets.statements]
path = "data/dart/statements.csv"
description = "단일회사 전체 재무제표 (OpenDART fnlttSinglAcntAll) of real filings: one row per account, statement, basis (연결/별도) and period; amount in 원"
source = "refgate dart sync over the real recording (출처: 금융감독원 전자공시시스템(DART))"
period = ["fiscal_year", "period"]
labels = ["corp_name", "account_nm", "basis", "period_label"]
[datasets.statements.columns.amount]
unit = "KRW"
description = "Amount in 원 (KRW) as OpenDART reports it"
[datasets.statements.columns.fiscal_year]
unit = "years"
description = "Fiscal year the amount covers"
"""
_ID = re.compile(r"\b(val|doc)_[0-9a-f]{10}\b")
runner = CliRunner()
#: the real recording and its sync, built once per session, are the heavy part
pytestmark = pytest.mark.slow


def last(text: str, prefix: str) -> str:
    return [m.group(0) for m in _ID.finditer(text) if m.group(1) == prefix][-1]


@pytest.fixture(scope="module")
def workspace(real_workspace, tmp_path_factory):
    """Two real 사업보고서 of 엔씨소프트 and the statements dataset the sync wrote, indexed."""
    synced, _ = real_workspace
    root = tmp_path_factory.mktemp("ask-real") / "kr-real"
    (root / "documents" / "dart" / NC).mkdir(parents=True)
    for rcept_no in FILINGS:
        shutil.copy(
            synced / "documents/dart" / NC / f"{rcept_no}.dart", root / "documents/dart" / NC
        )
    (root / "data/dart").mkdir(parents=True)
    shutil.copy(synced / "data/dart/statements.csv", root / "data/dart/statements.csv")
    (root / "refgate.toml").write_text(TOML, encoding="utf-8")
    ws = load_workspace(root)
    DocumentIndex.build(workspace_documents(ws), index_dir(ws), embeddings=HashingEmbeddings(64))
    return root


def answer(text: str, revenue: str = "1조 7,798억원") -> str:
    val, doc = last(text, "val"), last(text, "doc")
    return (
        f"엔씨소프트의 2023년 연결 기준 매출액(영업수익)은 {revenue}으로, 전년(2조 5,718억원) "
        f"대비 7,920억원 줄었고 감소율은 30.8%입니다 [{val}].\n\n"
        f"사업보고서는 이 감소를 게임 매출의 변화로 설명합니다 [{doc}]."
    )


def ask(workspace, script, tmp_path, monkeypatch):
    report = tmp_path / "report.html"
    with OpenAIStub(script=script) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
        monkeypatch.setenv("REFGATE_MODEL", "stub-model")
        result = runner.invoke(
            app, ["ask", QUESTION, "-w", str(workspace), "--json", "-o", str(report)]
        )
    return result, report


def script(compose):
    return [
        '{"lens": "single value", "criteria": ["영업수익 from the statements dataset"]}',
        tool_reply(tool("RunPython", code=CODE)),
        tool_reply(tool("EngineCall", name="search_documents", arguments=SEARCH)),
        "val_ and doc_ hold the answer",
        '["연결 기준임을 밝힐 것"]',
        lambda request: compose(request.text),
        "nothing worth remembering",
    ]


def test_ask_on_real_filings_exits_0_and_cites_the_filing(workspace, tmp_path, monkeypatch):
    result, report = ask(workspace, script(answer), tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["gate"]["passed"] is True, out["gate"]
    refs = out["refs"]
    val = next(r for r in refs.values() if r["kind"] == "valueRef")
    assert val["payload"]["values"]["영업수익 FY2023"] == 1_779_832_977_766
    assert val["payload"]["values"]["영업수익 FY2022"] == 2_571_792_281_800
    docs = [r for r in refs.values() if r["kind"] == "docRef"]
    assert docs and all(d["payload"]["corp_code"] == NC for d in docs)
    assert all(d["payload"]["rcept_no"] == "20240320001965" for d in docs)  # the date filter
    cited = next(d for d in docs if d["id"] in out["answer"])
    page = html_lib.unescape(report.read_text("utf-8"))
    assert (
        "엔씨소프트 사업보고서 (2024.03.20 접수, 접수번호 20240320001965), "
        + cited["payload"]["section_title"]
    ) in page


def test_a_wrong_real_figure_is_blocked(workspace, tmp_path, monkeypatch):
    def wrong(text: str) -> str:
        return answer(text, revenue="1조 9,778억원")

    steps = script(wrong)
    steps[-1:] = ["no further evidence", lambda request: wrong(request.text), "nothing"]
    result, _ = ask(workspace, steps, tmp_path, monkeypatch)
    assert result.exit_code == 3, result.output
    out = json.loads(result.stdout)
    assert out["gate"]["passed"] is False


@pytest.mark.parametrize(
    ("style", "cited"),
    [
        ("analyst", "엔씨소프트 사업보고서 (2024.03.20 접수, 접수번호 20240320001965), "),
        ("dart", "[docRef:20240320001965] [tableRef:s"),
    ],
)
def test_the_filing_citation_setting_shows_seed_004s_identifiers(workspace, style, cited):
    from refgate.catalog.capabilities import EngineEnv
    from refgate.config import Settings
    from refgate.retrieval.capability import search_documents

    env = EngineEnv(workspace=load_workspace(workspace), settings=Settings(filing_citation=style))
    evidence = search_documents(
        "영업수익 감소", k=3, company="엔씨소프트", date_from="2024-01-01", env=env
    )
    titles = [r.title for r in evidence.refs]
    assert titles and all(t.startswith(cited) for t in titles)
    if style == "dart":
        hit = evidence.data["hits"][0]
        assert titles[0].startswith(f"[docRef:20240320001965] [tableRef:{hit['section_id']}] ")
        assert "(2024.03.20 접수), " + hit["section_title"] in titles[0]

"""A Korean question over examples/kr-filings end to end: the workbench with a scripted model
computes the answer with RunPython (the real sandbox) over the statements dataset, searches
the filings with a company filter, the GATE checks the 조/억 figures and the change, and the
HTML report cites the filing by company, report, receipt date, receipt number and section."""

from __future__ import annotations

import re
import shutil

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from refgate.graph import build_graph
from refgate.refs import as_ref_map
from refgate.report import render_run_html, run_record
from refgate.retrieval import DocumentIndex, HashingEmbeddings, index_dir, workspace_documents
from refgate.testing import ScriptedChatModel, calls, tool_call
from refgate.workspace import load_workspace
from tests.support.dart import RECORDING

QUESTION = "한빛전자의 2023년 연결 기준 매출액은 얼마였고 전년 대비 얼마나 줄었나요?"
CODE = (
    "df = datasets['statements']\n"
    "rev = df[(df.corp_name == '한빛전자') & (df.account_nm == '매출액') & (df.basis == '연결')"
    " & (df.period == 'FY') & (df.rcept_no == 20240312000101)]\n"
    "now = int(rev[rev.fiscal_year == 2023].amount.iloc[0])\n"
    "before = int(rev[rev.fiscal_year == 2022].amount.iloc[0])\n"
    "emit_result(values={'매출액 FY2023': now, '매출액 FY2022': before,"
    " '매출액 감소액': now - before, '매출액 증감률': round((now - before) / before * 100, 1)},"
    " units={'매출액 FY2023': 'KRW', '매출액 FY2022': 'KRW', '매출액 감소액': 'KRW',"
    " '매출액 증감률': '%'}, period=['FY2023', 'FY2022'], sources=['statements'],"
    " title='한빛전자 연결 매출액 FY2023 vs FY2022')\n"
)
_ID = re.compile(r"\b(val|doc)_[0-9a-f]{10}\b")


def last(text: str, prefix: str) -> str:
    return [m.group(0) for m in _ID.finditer(text) if m.group(1) == prefix][-1]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("ask") / "kr-filings"
    shutil.copytree(RECORDING.parent, root, ignore=shutil.ignore_patterns(".refgate", "recording"))
    ws = load_workspace(root)
    DocumentIndex.build(workspace_documents(ws), index_dir(ws), embeddings=HashingEmbeddings(64))
    return root


def answer(text: str) -> str:
    val, doc = last(text, "val"), last(text, "doc")
    return (
        "한빛전자의 2023년 연결 기준 매출액은 25조 8,935억원으로, 전년(30조 2,147억원) 대비 "
        f"4조 3,212억원 줄었고 감소율은 14.3%입니다 [{val}].\n\n"
        f"사업보고서는 메모리 반도체 업황의 재고 조정과 가격 변동을 배경으로 설명합니다 [{doc}]."
    )


def test_korean_question_runs_through_runpython_search_gate_and_report(workspace):
    search = {
        "query": "메모리 반도체 업황 가격 변동",
        "company": "한빛전자",
        "date_from": "2024-01-01",
        "date_to": "2024-06-30",
        "k": 3,
    }
    responses = [
        '{"lens": "single value", "criteria": ["매출액 from the statements dataset"]}',
        calls(tool_call("RunPython", {"code": CODE})),
        calls(tool_call("EngineCall", {"name": "search_documents", "arguments": search})),
        "val_ and doc_ hold the answer",
        '["연결 기준임을 밝힐 것"]',
        answer,
        "nothing worth remembering",
    ]
    model = ScriptedChatModel(responses=responses)
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=str(workspace))
    config = {"configurable": {"thread_id": "kr"}}
    out = graph.invoke({"question": QUESTION, "workspace": str(workspace)}, config)
    assert out["gate"]["passed"] is True, out["gate"]
    refs = as_ref_map(out["refs"])
    val = next(r for r in refs.values() if r.kind == "valueRef")
    assert val.payload["values"]["매출액 FY2023"] == 25_893_548_000_000
    docs = [r for r in refs.values() if r.kind == "docRef"]
    assert docs and all(d.payload["corp_code"] == "99100001" for d in docs)
    assert all(d.payload["rcept_no"] == "20240312000101" for d in docs)
    html = render_run_html(run_record(out, thread_id="kr", workspace=load_workspace(workspace)))
    cited = next(d for d in docs if d.id in out["answer"])
    assert cited.payload["section_title"].split(".")[0] in {"I", "II", "III", "IV", "V", "VI"}
    assert (
        "한빛전자 사업보고서 (2024.03.12 접수, 접수번호 20240312000101), "
        + cited.payload["section_title"]
    ) in html


def test_a_wrong_korean_figure_is_blocked(workspace):
    def wrong(text: str) -> str:
        return answer(text).replace("25조 8,935억원", "28조 5,935억원")

    responses = [
        '{"lens": "single value", "criteria": []}',
        calls(tool_call("RunPython", {"code": CODE})),
        calls(
            tool_call(
                "EngineCall",
                {
                    "name": "search_documents",
                    "arguments": {"query": "메모리 반도체", "company": "99100001", "k": 2},
                },
            )
        ),
        "done",
        "[]",
        wrong,
        "no further evidence",
        wrong,
        "nothing",
    ]
    model = ScriptedChatModel(responses=responses)
    graph = build_graph(model=model, checkpointer=InMemorySaver(), workspace=str(workspace))
    config = {"configurable": {"thread_id": "kr-wrong"}}
    out = graph.invoke({"question": QUESTION, "workspace": str(workspace)}, config)
    assert out["gate"]["passed"] is False
    assert "28조 5,935억원" in out["answer"].split("\n\n")[-1]

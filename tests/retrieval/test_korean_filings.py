"""Korean search on REAL 엔씨소프트 filing text (read from ../shared at test time): the report
period, amendments, parent/child collapse, scraping artefacts, Korean headings, the period
filter and a question's period."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.chunking import Chunk, chunk_text
from refgate.retrieval.documents import read_documents
from refgate.retrieval.filters import ChunkFilter, equality_terms, superseded
from refgate.retrieval.loaders.dart import read_dart
from refgate.retrieval.loaders.dart_text import clean_dart_text
from refgate.retrieval.periods import QuestionPeriod, question_period, report_period
from tests.support.ncsoft_sections import (
    AMENDED_2023,
    ANNUAL_2019,
    ANNUAL_2023,
    Q3_2022,
    report_names,
    sections,
    write_filing,
)

# ------------------------------------------------------------------ report and question periods


def test_every_real_report_name_has_its_period():
    names = report_names()
    assert len(names) == 47
    periods = {rcept: report_period(name) for rcept, name in names.items()}
    assert all(p is not None for p in periods.values()), names
    assert periods[ANNUAL_2023] == report_period("사업보고서 (2023.12)")
    p = periods[AMENDED_2023]
    assert p is not None and (p.bsns_year, p.quarter, p.kind, p.amendment) == (
        2023,
        4,
        "사업",
        "기재정정",
    )
    q3 = periods[Q3_2022]
    assert q3 is not None and (q3.bsns_year, q3.quarter, q3.kind, q3.period_end) == (
        2022,
        3,
        "분기",
        "2022-09-30",
    )
    kinds = {(p.kind, p.quarter) for p in periods.values() if p is not None}
    assert kinds == {("분기", 1), ("반기", 2), ("분기", 3), ("사업", 4)}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("2023년 말 기준 엔씨소프트 직원 수는?", QuestionPeriod(2023, 4)),
        ("2022년 3분기 누적 리니지W 매출은?", QuestionPeriod(2022, 3)),
        ("2017년 상반기 연구개발비용은?", QuestionPeriod(2017, 2)),
        ("2024년 9월 말 환율 민감도", QuestionPeriod(2024, 3)),
        ("2018년 사업연도 결산 배당금", QuestionPeriod(2018, 4)),
        ("3Q23 실적", QuestionPeriod(2023, 3)),
        ("작년 말 특허권 등록 건수는?", QuestionPeriod(2023, 4)),
        ("작년 사업보고서의 최대주주 지분율", QuestionPeriod(2023, 4)),
        ("올해 1분기 모바일 게임 매출", QuestionPeriod(2024, 1)),
        ("지난해 3분기 말 차입금", QuestionPeriod(2023, 3)),
        ("2021년 매출 구성은?", QuestionPeriod(2021)),
        ("10년간 배당 추이", None),
        ("엔씨소프트는 언제 설립됐나요?", None),
    ],
)
def test_question_period(question, expected):
    assert question_period(question, date(2024, 5, 2)) == expected


# ------------------------------------------------------------------ artefacts and headings


def _section(rcept_no: str, title: str) -> str:
    (row,) = sections(rcept_no, (title,))
    return str(row["section_content"])


def test_scraping_artefacts_are_cleaned_from_real_text():
    raw = _section(ANNUAL_2019, "IV. 이사의 경영진단 및 분석의견")
    assert "&cr;" in raw and "리\n니지M" in raw
    clean = clean_dart_text(raw)
    assert "&cr;" not in clean
    assert "리니지M을 비롯한" in clean and "리\n니지" not in clean
    # the wrapped sentence of the 2023 business overview joins where the viewer cut it
    overview = clean_dart_text(_section(ANNUAL_2023, "1. 사업의 개요"))
    assert "즐거움으로 연결된" in overview
    assert "매출액은 1조 7,798억원이며" in overview
    # a heading line stays a line of its own
    lines = clean_dart_text(_section(ANNUAL_2023, "1. 회사의 개요")).splitlines()
    assert "나. 회사의 법적ㆍ상업적 명칭" in lines


def test_editor_leftovers_are_dropped():
    with_leftover = [r for r in sections(ANNUAL_2019) if "◆click◆" in str(r["section_content"])]
    assert with_leftover
    for row in with_leftover:
        clean = clean_dart_text(str(row["section_content"]))
        assert "◆click◆" not in clean and "삽입하신 후" not in clean
        assert "입력하세요" not in clean and ".dsl" not in clean
    # the table rows around a leftover stay rows
    raw = str(with_leftover[0]["section_content"])
    rows = [ln for ln in raw.splitlines() if ln.startswith("|") and "click" not in ln]
    clean_rows = [ln for ln in clean_dart_text(raw).splitlines() if ln.startswith("|")]
    assert len(clean_rows) >= len(rows)


def test_chunks_start_at_korean_headings():
    text = clean_dart_text(_section(ANNUAL_2023, "7. 기타 참고사항"))
    spans = chunk_text(text, min_tokens=128, max_tokens=512, overlap_tokens=20)
    titles = [sec for _, _, sec in spans]
    assert "가. 지식재산권 보유현황" in titles
    assert any(t.startswith("다. 업계의 현황") or t.startswith("1) 산업의 특성") for t in titles)
    # a chunk that opens a heading's section starts at the heading line
    starts = [text[s:e].splitlines()[0] for s, e, _ in spans]
    assert any(line.startswith("가. 지식재산권") for line in starts)


# ------------------------------------------------------------------ collapse and metadata


def test_parts_repeating_their_sections_collapse(tmp_path: Path):
    titles = (
        "I. 회사의 개요",
        "1. 회사의 개요",
        "2. 회사의 연혁",
        "3. 자본금 변동사항",
        "4. 주식의 총수 등",
        "5. 정관에 관한 사항",
        "IV. 이사의 경영진단 및 분석의견",
    )
    path = write_filing(tmp_path, ANNUAL_2023, titles)
    parts = read_dart(path)
    kept = [p.meta["section_title"] for p in parts]
    # the part repeats its five children: only they stay; a part without children stays
    assert "I. 회사의 개요" not in kept
    assert kept == [t for t in titles if t != "I. 회사의 개요"]
    meta = parts[0].meta
    assert (meta["bsns_year"], meta["quarter"], meta["report_kind"]) == (2023, 4, "사업")
    assert meta["period_end"] == "2023-12-31" and meta["amendment"] is None


# ------------------------------------------------------------------ amendments and periods


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory) -> DocumentIndex:
    """Three sections of the 2023 annual report, its amendment, and 2022 Q3, indexed."""
    root = tmp_path_factory.mktemp("ncsoft")
    titles = ("1. 외부감사에 관한 사항", "7. 기타 참고사항", "3. 원재료 및 생산설비")
    for rcept in (ANNUAL_2023, AMENDED_2023, Q3_2022):
        write_filing(root / "docs", rcept, titles)
    docs = read_documents(root / "docs").documents
    return DocumentIndex.build(docs, root / "index", embeddings=HashingEmbeddings())


def test_an_amendment_supersedes_its_original(real_index: DocumentIndex):
    hits = real_index.search("제27기 감사인 삼정회계법인 감사의견", k=10, mode="bm25")
    filings = {h.metadata["rcept_no"] for h in hits}
    assert AMENDED_2023 in filings
    assert ANNUAL_2023 not in filings  # superseded by the [기재정정] report
    # asked for, the original is still there
    kept = real_index.search(
        "삼정회계법인 감사의견", k=10, mode="bm25", filters={"superseded": True}
    )
    assert ANNUAL_2023 in {h.metadata["rcept_no"] for h in kept}
    by_rcept = real_index.search(
        "삼정회계법인 감사의견", k=10, mode="bm25", filters={"rcept_no": ANNUAL_2023}
    )
    assert by_rcept and {h.metadata["rcept_no"] for h in by_rcept} == {ANNUAL_2023}


def test_superseding_goes_section_by_section():
    def chunk(rcept: str, title: str) -> Chunk:
        meta = {
            "rcept_no": rcept,
            "corp_code": "00261443",
            "bsns_year": 2019,
            "quarter": 4,
            "report_kind": "사업",
            "section_title": title,
        }
        return Chunk(f"{rcept}#{title}", f"{rcept}#{title}", "x", 0, 1, meta)

    # a [첨부정정] carries only the audit report: the original's other sections stay
    chunks = [
        chunk("20200330004487", "II. 사업의 내용"),
        chunk("20200330004487", "감사보고서"),
        chunk("20200401000539", "감사보고서"),
    ]
    assert superseded(chunks).tolist() == [False, True, False]


def test_period_filter_and_question_period(real_index: DocumentIndex):
    q3 = real_index.search("원재료 및 생산설비", k=10, mode="bm25", filters={"period": "2022Q3"})
    assert q3 and {h.metadata["rcept_no"] for h in q3} == {Q3_2022}
    assert {h.metadata["quarter"] for h in q3} == {3}
    # the question names its period: the search keeps that report's chunks
    pinned = real_index.search("2022년 3분기 원재료 및 생산설비", k=10, mode="bm25")
    assert pinned and {h.metadata["rcept_no"] for h in pinned} == {Q3_2022}
    year_end = real_index.search("2023년 말 원재료 및 생산설비", k=10, mode="bm25")
    assert year_end and {h.metadata["bsns_year"] for h in year_end} == {2023}
    # relative to the day asked; a period no filing covers leaves the search unfiltered
    last_year = real_index.search("작년 말 원재료", k=10, mode="bm25", as_of=date(2024, 4, 1))
    assert {h.metadata["bsns_year"] for h in last_year} == {2023}
    unknown = real_index.search("2011년 원재료 및 생산설비", k=10, mode="bm25")
    assert {h.metadata["rcept_no"] for h in unknown} == {AMENDED_2023, Q3_2022}
    off = real_index.search("2022년 3분기 원재료", k=10, mode="bm25", question_period=False)
    assert len({h.metadata["rcept_no"] for h in off}) == 2


def test_period_filter_rejects_a_bad_period(real_index: DocumentIndex):
    with pytest.raises(ValueError, match="quarter is 1 to 4"):
        ChunkFilter(real_index.chunks).mask({"period": "2022Q7"})


def test_equality_terms_are_what_both_backends_filter_on():
    """The terms the FAISS mask and the pgvector SQL share: a period as its year and quarter,
    dates and the superseded flag left to their own readers, every value as strings."""
    terms = equality_terms(
        {
            "period": "2022Q3",
            "company": ["00261443", 35720],
            "doc_type": "A001",
            "date_from": "2022-01-01",
            "date": {"from": "2022-01-01"},
            "superseded": True,
            "rcept_no": None,
        }
    )
    assert list(terms) == [
        ("bsns_year", ["2022"]),
        ("quarter", ["3"]),
        ("company", ["00261443", "35720"]),
        ("doc_type", ["A001"]),
    ]

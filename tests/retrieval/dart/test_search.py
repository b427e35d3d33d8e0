"""DART filings in the document index: section metadata, the company and receipt-date
pre-filters, citations the way a Korean analyst writes them, tables that keep their section id,
and BM25 over morphemes for Korean text (the English path unchanged)."""

from __future__ import annotations

import shutil

import pytest

from refgate.catalog.capabilities import EngineEnv, catalog
from refgate.graph.capabilities import register_default_capabilities
from refgate.retrieval import DocumentIndex, HashingEmbeddings, index_dir, workspace_documents
from refgate.retrieval.bm25 import (
    KIWI,
    bm25_scores,
    build_bm25,
    corpus_tokenizer,
    morpheme_tokens,
    stemmer,
)
from refgate.workspace import load_workspace
from tests.support.dart import RECORDING

SAMPLE = RECORDING.parent


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("kr") / "kr-filings"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".refgate", "recording"))
    ws = load_workspace(root)
    DocumentIndex.build(workspace_documents(ws), index_dir(ws), embeddings=HashingEmbeddings(64))
    return ws


def search(ws, query, **kw):
    register_default_capabilities()
    return catalog()["search_documents"].func(query, env=EngineEnv(workspace=ws), **kw)


def test_sections_carry_the_filing_metadata(workspace):
    docs = {d.metadata["doc_id"]: d.metadata for d in workspace_documents(workspace)}
    meta = docs["dart/99100001/20240312000101#s02"]
    assert meta["rcept_no"] == "20240312000101" and meta["corp_code"] == "99100001"
    assert meta["corp_name"] == "한빛전자" and meta["rcept_dt"] == "20240312"
    assert meta["report_nm"] == "사업보고서 (2023.12)"
    assert meta["section_title"] == "II. 사업의 내용" and meta["date"] == "2024-03-12"


def test_company_and_receipt_date_filters_apply_before_ranking(workspace):
    ev = search(workspace, "연구개발비 매출액 대비", k=10, company="한빛전자", mmr=False)
    assert ev.data["hits"] and {h["corp_code"] for h in ev.data["hits"]} == {"99100001"}
    by_stock = search(workspace, "연구개발비", k=5, company="900002")
    assert {h["corp_name"] for h in by_stock.data["hits"]} == {"새봄화학"}
    dated = search(
        workspace,
        "매출액",
        k=20,
        company=["99100001"],
        date_from="2024-01-01",
        date_to="2024-06-30",
    )
    assert {h["rcept_no"] for h in dated.data["hits"]} == {"20240312000101"}


def test_citations_name_company_report_date_receipt_number_and_section(workspace):
    ev = search(
        workspace,
        "주요 제품 및 서비스 부문별 매출액",
        k=3,
        company="99100001",
        date_from="2024-03-01",
        date_to="2024-03-31",
    )
    hit = ev.data["hits"][0]
    assert hit["cite_as"] == (
        "한빛전자 사업보고서 (2024.03.12 접수, 접수번호 20240312000101), " + hit["section_title"]
    )
    doc = next(r for r in ev.refs if r.kind == "docRef")
    assert doc.title == hit["cite_as"] and doc.payload["rcept_no"] == "20240312000101"
    assert doc.source_type == "external"
    assert "hits[].cite_as" in ev.untrusted_fields
    tables = [r for r in ev.refs if r.kind == "tableRef"]
    assert tables, "the section's tables are issued as tableRefs"
    meta = tables[0].payload["meta"]
    assert meta["section_id"] == hit["doc_id"].rsplit("#", 1)[1]
    assert meta["rcept_no"] == "20240312000101"
    assert tables[0].title.startswith("한빛전자 사업보고서 (2024.03.12 접수")


def test_a_korean_corpus_is_tokenised_into_morphemes(workspace):
    index = DocumentIndex.load(index_dir(workspace), embeddings=HashingEmbeddings(64))
    assert index.manifest["bm25"]["tokenizer"] == KIWI
    a, b, name = morpheme_tokens(["한빛전자의 매출액은", "한빛전자는 매출액이", "한빛전자"], None)
    assert a == b == [*name, "매출액"]  # the particles are gone, the same terms remain


def test_particles_do_not_hide_a_match_with_morphemes_but_do_with_words():
    texts = ["누리자동차는 전기차 판매를 늘렸다.", "새봄화학의 양극재 공장이 가동되었다."]
    query = "누리자동차의 판매가"
    words = build_bm25(texts, stemmer(), None)
    morphemes = build_bm25(texts, stemmer(), KIWI)
    w = bm25_scores(words, query, stemmer(), None, None)
    m = bm25_scores(morphemes, query, stemmer(), None, KIWI)
    assert m is not None and m[0] > m[1] and m[0] > 0
    assert w is None or w[0] == 0  # "누리자동차의" never equals "누리자동차는" as a word


def test_an_english_corpus_keeps_the_word_tokenizer():
    assert corpus_tokenizer(["The Committee kept the rate at 5 percent."]) is None
    assert corpus_tokenizer(["The Committee", "금리를 동결"]) == KIWI

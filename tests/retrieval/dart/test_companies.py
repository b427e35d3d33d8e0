"""OpenDART's real company list (corpCode.zip, 112,916 companies) resolves a stock code, a
corp_code or an exact name in one lookup, gives a part of a name its candidates, and a lookup
never walks the whole list."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from refgate.retrieval.dart.archive import TooLarge
from refgate.retrieval.dart.companies import CompanyIndex

CORP_ZIP = Path("../shared/data/dart-real/corpcode/corpCode.zip")


class NoScan(list):
    def __iter__(self):
        raise AssertionError("a lookup scanned the whole company list")


@pytest.fixture(scope="module")
def index():
    if not CORP_ZIP.is_file():
        pytest.skip("the shared DART data is not at ../shared/data/dart-real")
    ix = CompanyIndex.from_zip(CORP_ZIP.read_bytes())
    ix.candidates("삼성")  # the name index is built once, at the first candidates lookup
    ix.companies = NoScan(ix.companies)
    return ix


def test_the_real_list_loads_whole(index):
    assert len(index) == 112_916


@pytest.mark.parametrize(
    ("query", "corp_code"),
    [
        ("005930", "00126380"),
        ("00126380", "00126380"),
        ("삼성전자", "00126380"),
        ("삼성 전자", "00126380"),
        ("(주)엔씨소프트", "00261443"),
        ("036570", "00261443"),
        ("SK하이닉스", "00164779"),
        ("sk하이닉스", "00164779"),
        ("현대자동차", "00164742"),
    ],
)
def test_a_code_or_an_exact_name_resolves(index, query, corp_code):
    assert index.resolve(query).corp_code == corp_code


def test_a_part_of_a_name_gives_listed_candidates_first(index):
    found = index.candidates("삼성", 10)
    names = [c.corp_name for c in found]
    assert names[0] == "삼성"  # the exact name first
    assert {"삼성전자", "삼성물산", "삼성생명"} <= set(names)
    listed = [c.stock_code != "" for c in found[1:]]
    assert listed == sorted(listed, reverse=True)
    assert all("삼성" in n for n in names)
    assert [c.corp_name for c in index.candidates("하이닉스", 3)][0] == "SK하이닉스"


def test_unknown_names_and_codes_resolve_to_nothing(index):
    assert index.resolve("99999999") is None and index.resolve("없는회사이름") is None
    assert index.candidates("없는회사이름") == []


def test_a_company_list_over_its_cap_is_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("CORPCODE.xml", "<result>" + "<list><corp_code>1</corp_code></list>" * 5000)
    with pytest.raises(TooLarge):
        CompanyIndex.from_zip(buf.getvalue(), max_xml_bytes=10_000)

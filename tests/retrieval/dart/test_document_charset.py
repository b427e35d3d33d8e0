"""DART documents as they come: the charset read from the bytes whatever the declaration says
(the real 삼성전자 2022 half-year report is EUC-KR under a utf-8 header, with CRLF line ends),
dart4.xsd documents, and bytes that are not text refused with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from refgate.retrieval.dart.charset import detect
from refgate.retrieval.dart.document import DocumentError, parse_document

REAL = Path("../shared/data/dart-real/documents/20220816001711.xml")
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI"]


@pytest.fixture(scope="module")
def samsung():
    if not REAL.is_file():
        pytest.skip("the shared DART data is not at ../shared/data/dart-real")
    return parse_document(REAL.read_bytes())


def test_samsung_half_year_splits_into_its_table_of_contents(samsung):
    raw = REAL.read_bytes()
    assert b'encoding="utf-8"' in raw[:100] and b"\r\n" in raw[:200]  # the trap is real
    assert detect(raw)[0] == "euc-kr"
    titles = [s.title for s in samsung]
    numbered = [t for t in titles if t.split(".")[0] in ROMAN]
    assert [t.split(".")[0] for t in numbered][:11] == ROMAN
    assert numbered[0] == "I. 회사의 개요" and numbered[1] == "II. 사업의 내용"
    assert numbered[10] == "XI. 그 밖에 투자자 보호를 위하여 필요한 사항"
    assert "삼성전자주식회사" in samsung[1].text and "\r" not in samsung[1].text
    assert "## 1. 회사의 개요" in samsung[1].text  # sub-sections as headings


def test_samsung_tables_stay_tables_with_their_units(samsung):
    finance = next(s for s in samsung if s.title.startswith("III."))
    summary = next(t for t in finance.tables if t["columns"][0] == "구 분")
    assert summary["unit"] == "백만원" and summary["section_id"] == finance.section_id
    assert summary["rows"][1][:2] == ["[유동자산]", "236,287,491"]
    assert "| [유동자산] | 236,287,491 |" in finance.text
    units = {t["unit"] for s in samsung for t in s.tables}
    assert {"백만원", "주", "억원"} <= units


def _doc(body: str, schema: str = "dart3.xsd", header: str = "utf-8") -> str:
    return (
        f'<?xml version="1.0" encoding="{header}"?>\r\n'
        f'<DOCUMENT xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xsi:noNamespaceSchemaLocation="{schema}">\r\n'
        f'<DOCUMENT-NAME ACODE="11011">사업보고서</DOCUMENT-NAME>\r\n<BODY>{body}</BODY></DOCUMENT>'
    )


BODY = (
    '<SECTION-1 ACLASS="MANDATORY"><TITLE ATOC="Y" AASSOCNOTE="D-0-1-0-0">I. 회사의 개요</TITLE>'
    "<P>똠방각하 주식회사의 본점은 서울에 있습니다.</P></SECTION-1>"
    '<SECTION-1><TITLE ATOC="Y">II. 사업의 내용</TITLE><TABLE-GROUP ACLASS="X"><TITLE>매출 현황'
    '</TITLE><TABLE BORDER="0"><TBODY><TR><TD>(단위 : 백만원)</TD></TR></TBODY></TABLE>'
    "<TABLE><TBODY><TR><TH>구분</TH><TH>2023</TH></TR><TR><TD>매출액</TD><TE>1,234</TE></TR>"
    "</TBODY></TABLE></TABLE-GROUP></SECTION-1>"
)


@pytest.mark.parametrize(
    ("charset", "header"),
    [("utf-8", "euc-kr"), ("cp949", "utf-8"), ("cp949", "euc-kr"), ("utf-8", "utf-8")],
)
def test_the_bytes_decide_the_charset_not_the_header(charset, header):
    # 똠 is in CP949 only (not in EUC-KR's 2,350 syllables)
    sections = parse_document(_doc(BODY, header=header).encode(charset))
    assert [s.title for s in sections] == ["I. 회사의 개요", "II. 사업의 내용"]
    assert "똠방각하" in sections[0].text
    table = sections[1].tables[0]
    assert table["unit"] == "백만원" and table["rows"][0] == ["매출액", "1,234"]
    assert "**매출 현황**" in sections[1].text


def test_a_dart4_document_with_a_namespace_splits_alike():
    body = BODY.replace("<SECTION-1", "<d:SECTION-1").replace("</SECTION-1>", "</d:SECTION-1>")
    xml = _doc(body, schema="dart4.xsd").replace(
        "<DOCUMENT ", '<DOCUMENT xmlns:d="http://dart.fss.or.kr/dart4" '
    )
    sections = parse_document(xml.encode("utf-8"))
    assert [s.title for s in sections] == ["I. 회사의 개요", "II. 사업의 내용"]
    assert sections[1].tables[0]["unit"] == "백만원"


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe<\x00D\x00O\x00C\x00",  # UTF-16
        _doc("<P>x</P>").encode() + b"\xc8\xff\xfe\x80\x80",  # no charset decodes this
        _doc("<P>\x01\x02</P>").encode(),  # control characters: binary, not text
    ],
)
def test_a_document_that_cannot_be_decoded_is_refused_with_a_reason(data):
    with pytest.raises(DocumentError, match="cannot decode"):
        parse_document(data)


def test_a_deeply_nested_document_is_refused_not_a_recursion_error():
    deep = "<SECTION-1><TITLE>I. 깊음</TITLE>" + "<P>" * 1500 + "x" + "</P>" * 1500 + "</SECTION-1>"
    with pytest.raises(DocumentError, match="deeper than 200"):
        parse_document(_doc(deep).encode())
    assert parse_document(_doc(deep).encode(), max_depth=2000)  # the bound, not the parser

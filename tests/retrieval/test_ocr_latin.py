"""Hangul pages read by ``kor`` alone, their doubtful words (misread Latin) again by ``eng``.

Real lines of a real DART filing (삼성전자, ../shared/data/dart-real; 출처: 금융감독원
전자공시시스템(DART)), set in NanumGothic 10 pt and rasterised at 150 dpi into an image-only PDF,
read by real Tesseract."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from refgate.retrieval.loaders import ocr_pages
from refgate.retrieval.loaders.ocr_latin import doubtful
from refgate.retrieval.loaders.pdf import read_pdf
from tests.retrieval.test_ocr_pages import HANGUL_FONT, LATIN_FONT, calls, image_pdf
from tests.support.ocr import ocr_languages

__all__ = ["calls"]  # the fixture, shared with test_ocr_pages

SECTIONS = Path(__file__).parents[2].parent / "shared/data/dart-real/sections/005930.parquet"
#: Where the filing's lines with Latin words start (each line cut to what fits the page).
LINE_STARTS = ("당사는 R&D 활동의", "종속기업 Samsung Display America", "당사의 주요 원재료로 DX")

needs = pytest.mark.skipif(
    not ocr_languages() or not SECTIONS.exists(),
    reason="needs Tesseract and the shared DART data",
)


def filing_lines() -> list[str]:
    """The real lines starting as ``LINE_STARTS`` say, each cut to 56 characters."""
    import pandas as pd

    texts = pd.read_parquet(SECTIONS)["section_content"].astype(str)
    lines = [line for text in texts for line in text.splitlines()]
    return [next(line for line in lines if line.startswith(s))[:56] for s in LINE_STARTS]


def dense_page_pdf(path: Path, pages: list[str]) -> Path:
    """One image-only page per text, its lines set in NanumGothic 10 pt on 14 pt lines on a
    page 560 pt wide, rasterised at 150 dpi."""
    dense = {"size": (560, 90), "pt": 10, "x": 20, "top": 65, "leading": 14}
    return image_pdf(path, [(text, HANGUL_FONT) for text in pages], dense)


def test_doubtful_words_are_latin_looking_or_unsure_non_hangul():
    assert doubtful("8&0", 33.8)  # "R&D" as the Korean model reads it
    assert doubtful("590754109", 38.1)  # "Samsung"
    assert doubtful("미isplay", 90.0)  # Latin letters
    assert doubtful("ㅠ", 87.5)  # a lone jamo
    assert not doubtful("ㆍ", 81.0)  # Korean punctuation
    assert not doubtful("경쟁력을", 40.0)  # Hangul, however unsure
    assert not doubtful("250,691", 90.3)  # a number read surely
    assert doubtful("30", 50.0)  # a number read unsurely ("3D")


@needs
def test_a_hangul_page_reads_latin_words_by_a_second_pass_over_doubtful_words_only(
    tmp_path, calls, monkeypatch
):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "1")
    text = "\n".join(filing_lines())
    parts = read_pdf(dense_page_pdf(tmp_path / "filing.pdf", [text, text]))
    # page 1: no script known yet, one kor+eng pass; page 2: kor alone, then eng on a sheet of
    # the doubtful words' crops, narrower than the page (at 200 dpi, 560 pt is 1556 px)
    assert [r[0] for r in calls["readings"]] == [ocr_pages.HANGUL, ("kor",), ocr_pages.LATIN]
    assert [r[1] for r in calls["readings"]] == [6, 6, 6]
    assert calls["readings"][2][2] < 1556 * 0.6
    read = parts[1].text
    latin_read = set(re.findall(r"[A-Za-z&]{2,}", read))
    assert {"R&D", "Samsung", "Display", "America", "Holdings", "Camera", "Qualcomm"} <= latin_read
    # Korean words whole, and the numbers as printed
    for word in ("활동의", "지적재산화에도", "최초로", "부문은"):
        assert word in read.split()
    assert "1984년" in read
    # all but two of the lines' 13 Latin words (kor may read "(SDAH)" as digits and a Hangul
    # syllable, which is not doubtful; the single kor+eng pass of page 1 can read it)
    latin = set(re.findall(r"[A-Za-z&]{2,}", text))
    assert len(latin & latin_read) >= len(latin) - 2


@needs
def test_a_latin_page_read_as_hangul_is_read_again_in_english(tmp_path, calls, monkeypatch):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "1")
    lines = [
        ("당사의 영업이익이 증가하였습니다.", HANGUL_FONT),
        ("당사의 매출액이 감소하였습니다.", HANGUL_FONT),
        ("Operating income rose in 2023", LATIN_FONT),
    ]
    parts = read_pdf(image_pdf(tmp_path / "mixed.pdf", lines))
    assert parts[2].text == "Operating income rose in 2023"
    kor = ocr_pages.READING[ocr_pages.HANGUL].languages
    # page 3 is read as the guess (Hangul) says, kor alone at 120 dpi (and its doubtful words with
    # eng), then again as Latin (eng at 200 dpi, automatic layout), which is kept
    readings = [(langs, psm, round(width * 72 / 420)) for langs, psm, width in calls["readings"]]
    assert readings[2] == (kor, 6, 120)
    assert readings[-1] == (ocr_pages.LATIN, 3, 200)

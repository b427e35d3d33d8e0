"""OCR of image-only PDF pages: pages read in parallel (bounded), each in one script's languages."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from refgate.retrieval.loaders import ocr_pages
from refgate.retrieval.loaders.pdf import read_pdf
from tests.support.ocr import requires_ocr

pytestmark = requires_ocr

LATIN_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
HANGUL_FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


#: Where ``image_pdf`` sets the text: page size (pt), font size, left margin, first baseline
#: and line spacing.
SHORT_PAGE = {"size": (420, 120), "pt": 12, "x": 30, "top": 90, "leading": 18}


def image_pdf(
    path: Path, lines: list[tuple[str, Path]], layout: dict[str, object] | None = None
) -> Path:
    """One image-only page per ``(text, font)``: the text set by reportlab as ``layout`` says
    (default ``SHORT_PAGE``), the page rasterised at 150 dpi and saved as an image (no text
    layer)."""
    import pypdfium2 as pdfium
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    at: dict = dict(SHORT_PAGE, **(layout or {}))
    text_pdf = path.with_suffix(".text.pdf")
    pdf = canvas.Canvas(str(text_pdf), pagesize=at["size"])
    for text, font in lines:
        pdfmetrics.registerFont(TTFont(font.stem, str(font)))
        pdf.setFont(font.stem, at["pt"])
        for row, line in enumerate(text.splitlines()):
            pdf.drawString(at["x"], at["top"] - at["leading"] * row, line)
        pdf.showPage()
    pdf.save()
    doc = pdfium.PdfDocument(str(text_pdf))
    images = [doc[i].render(scale=150 / 72, grayscale=True).to_pil() for i in range(len(doc))]
    doc.close()
    images[0].save(path, save_all=True, append_images=images[1:], resolution=150)
    return path


def _width(image: object) -> int:
    from PIL import Image

    with Image.open(str(image)) as img:
        return img.width


@pytest.fixture
def calls(monkeypatch):
    """Each Tesseract call's languages, and the most calls running at once."""
    seen: dict[str, object] = {"languages": [], "peak": 0, "readings": []}
    running = [0]
    lock = threading.Lock()
    real = ocr_pages.tesseract_words

    def counted(image, *, timeout_s=None, languages=None, psm=None):
        with lock:
            running[0] += 1
            seen["peak"] = max(int(seen["peak"]), running[0])  # type: ignore[call-overload]
            seen["languages"].append(languages)  # type: ignore[attr-defined]
            seen["readings"].append((languages, psm, _width(image)))  # type: ignore[attr-defined]
        try:
            time.sleep(0.2)  # long enough for calls that run together to overlap
            return real(image, timeout_s=timeout_s, languages=languages, psm=psm)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(ocr_pages, "tesseract_words", counted)
    return seen


def test_pages_are_read_in_parallel_by_a_bounded_pool(tmp_path, calls, monkeypatch):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "2")
    lines = [(f"Revenue rose {n} percent in the quarter", LATIN_FONT) for n in range(1, 5)]
    parts = read_pdf(image_pdf(tmp_path / "scan.pdf", lines))
    assert [p.meta["page"] for p in parts] == [1, 2, 3, 4]
    assert all("percent" in p.text and p.meta["ocr"] for p in parts)
    assert calls["peak"] == 2  # two pages at once, never more than the pool


def test_latin_pages_are_read_in_english_only_after_the_first(tmp_path, calls, monkeypatch):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "1")
    lines = [(f"Inflation remains elevated in {year}", LATIN_FONT) for year in (2021, 2022, 2023)]
    parts = read_pdf(image_pdf(tmp_path / "latin.pdf", lines))
    assert [p.text for p in parts] == [text for text, _ in lines]
    assert calls["languages"] == [ocr_pages.HANGUL, ocr_pages.LATIN, ocr_pages.LATIN]


def test_a_hangul_page_after_latin_ones_is_read_again_in_korean(tmp_path, calls, monkeypatch):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "1")
    lines = [("Operating income rose", LATIN_FONT), ("Net sales fell", LATIN_FONT)]
    lines += [
        ("당사의 영업이익이 증가하였습니다.\n연결 기준 매출은 전년보다 늘었습니다.", HANGUL_FONT),
        ("당사의 매출액이 감소하였습니다.\n신규 게임의 출시가 늦어졌습니다.", HANGUL_FONT),
    ]
    parts = read_pdf(image_pdf(tmp_path / "mixed.pdf", lines))
    assert [p.meta["page"] for p in parts] == [1, 2, 3, 4]
    assert "증가하였습니다" in parts[2].text.replace(" ", "")
    assert "감소하였습니다" in parts[3].text.replace(" ", "")
    languages = calls["languages"]
    kor = ocr_pages.READING[ocr_pages.HANGUL].languages
    # page 1: no script known yet (kor+eng); page 3: eng unsure, read again in Korean (kor
    # alone: these pages have no Latin word to read again); page 4 then read in Korean at once
    assert languages == [ocr_pages.HANGUL, ocr_pages.LATIN, ocr_pages.LATIN, kor, kor]


def test_each_script_is_rendered_and_segmented_its_own_way(tmp_path, calls, monkeypatch):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "1")
    lines = [("당사의 영업이익이 증가하였습니다.", HANGUL_FONT), ("Net sales fell", LATIN_FONT)]
    lines += [("Operating income rose", LATIN_FONT)]
    read_pdf(image_pdf(tmp_path / "scripts.pdf", lines))
    page_width = 420  # points
    first = ocr_pages.FIRST_READING
    hangul, latin = ocr_pages.READING[ocr_pages.HANGUL], ocr_pages.READING[ocr_pages.LATIN]
    readings = [
        (langs, psm, round(width * 72 / page_width)) for langs, psm, width in calls["readings"]
    ]
    assert readings == [
        (ocr_pages.HANGUL, 6, first.dpi),  # no guess yet: kor+eng
        (hangul.languages, 6, hangul.dpi),  # Hangul: page 1 was; kor alone finds no Hangul,
        (ocr_pages.LATIN, 3, latin.dpi),  # so page 2 is read again as Latin
        (ocr_pages.LATIN, 3, latin.dpi),  # page 2 turned the guess Latin
    ]
    assert (first.dpi, first.psm, first.languages) == (150, 6, ("kor", "eng"))
    assert (hangul.dpi, hangul.psm, hangul.languages, hangul.latin_dpi) == (120, 6, ("kor",), 200)
    assert (latin.dpi, latin.psm, latin.languages) == (200, 3, ("eng",))


def test_hangul_share():
    assert ocr_pages.hangul_share("영업이익 rose") == 0.5
    assert ocr_pages.hangul_share("Revenue 1,234") == 0.0
    assert ocr_pages.hangul_share("12 34") == 0.0

"""The OCR engine in this process: engines kept and reused, a page's time bound, missing models."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pytest
import tesserocr

from refgate.retrieval.loaders import ocr
from refgate.retrieval.loaders import pdf as pdf_loader
from refgate.retrieval.loaders.base import Unreadable
from refgate.retrieval.loaders.pdf import read_pdf
from tests.retrieval.test_ocr_pages import LATIN_FONT, image_pdf
from tests.support.ocr import requires_ocr

pytestmark = requires_ocr


@pytest.fixture
def loads(monkeypatch):
    """How many engines were loaded, by language spec (the kept ones dropped first)."""
    counted: Counter[str] = Counter()
    real = tesserocr.PyTessBaseAPI

    def load(*, path: str, lang: str) -> tesserocr.PyTessBaseAPI:
        counted[lang] += 1
        return real(path=path, lang=lang)

    monkeypatch.setattr(ocr, "_ENGINES", {})
    monkeypatch.setattr(tesserocr, "PyTessBaseAPI", load)
    return counted


def test_engines_are_loaded_once_per_thread_and_kept_for_the_next_document(
    tmp_path, loads, monkeypatch
):
    monkeypatch.setenv("REFGATE_OCR_WORKERS", "2")
    lines = [(f"Revenue rose {n} percent in the quarter", LATIN_FONT) for n in range(1, 5)]
    first = read_pdf(image_pdf(tmp_path / "a.pdf", lines))
    second = read_pdf(image_pdf(tmp_path / "b.pdf", lines))
    assert [p.text for p in first] == [p.text for p in second] == [t for t, _ in lines]
    # 8 pages, each read once in eng (the first two also in kor+eng): never more engines than
    # pages read at once, and none loaded again for the second document
    assert loads["eng"] <= 2 and loads["kor+eng"] <= 2, loads
    assert sum(len(free) for free in ocr._ENGINES.values()) == sum(loads.values())


def test_a_page_over_its_time_bound_is_left_out_and_said(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("REFGATE_OCR_TIMEOUT", "0.001")
    pdf = image_pdf(tmp_path / "slow.pdf", [("Inflation remains elevated in 2023", LATIN_FONT)])
    # the loader's own logger: `refgate index` quiets "refgate.retrieval" in its process
    with caplog.at_level(logging.WARNING, logger=pdf_loader.log.name), pytest.raises(Unreadable):
        read_pdf(pdf)
    assert "p. 1: OCR over its time bound; page left out" in caplog.text
    # the engine that timed out reads the next page whole
    monkeypatch.delenv("REFGATE_OCR_TIMEOUT")
    assert [p.text for p in read_pdf(pdf)] == ["Inflation remains elevated in 2023"]


def test_a_bad_image_file_is_an_error_not_a_crash(tmp_path):
    bad = tmp_path / "page.pgm"
    bad.write_bytes(b"P5 not an image")
    with pytest.raises((OSError, RuntimeError, ValueError)):
        ocr.tesseract_words(str(bad), languages=("eng",))


@pytest.fixture
def no_cached_languages():
    ocr.tessdata_dir.cache_clear()
    ocr.installed_languages.cache_clear()
    yield
    ocr.tessdata_dir.cache_clear()
    ocr.installed_languages.cache_clear()


def test_without_language_models_a_scan_is_skipped_with_the_reason(
    tmp_path, monkeypatch, no_cached_languages
):
    empty = tmp_path / "tessdata"
    empty.mkdir()
    monkeypatch.setenv("TESSDATA_PREFIX", str(empty))
    with pytest.raises(ocr.OcrUnavailable, match="TESSDATA_PREFIX"):
        ocr.check_available()
    pdf = image_pdf(tmp_path / "scan.pdf", [("Revenue rose 4 percent", LATIN_FONT)])
    with pytest.raises(Unreadable, match=r"no text layer; no Tesseract language model"):
        read_pdf(pdf)


def test_tessdata_prefix_names_the_models_folder(tmp_path, monkeypatch, no_cached_languages):
    system = Path(ocr.tessdata_dir())
    ocr.tessdata_dir.cache_clear()
    mine = tmp_path / "models"
    mine.mkdir()
    (mine / "eng.traineddata").symlink_to(system / "eng.traineddata")
    monkeypatch.setenv("TESSDATA_PREFIX", str(mine))
    assert ocr.installed_languages() == ("eng",)
    words = ocr.tesseract_words(
        str(image_pdf_page(tmp_path, "Operating income rose in 2023")), languages=("eng",)
    )
    assert " ".join(w for w in words["text"] if w.strip()) == "Operating income rose in 2023"


def image_pdf_page(tmp_path: Path, text: str) -> Path:
    """``text`` set on a short page and saved as a PNG image."""
    import pypdfium2 as pdfium

    pdf = image_pdf(tmp_path / "one.pdf", [(text, LATIN_FONT)])
    doc = pdfium.PdfDocument(str(pdf))
    png = tmp_path / "one.png"
    doc[0].render(scale=200 / 72, grayscale=True).to_pil().save(png)
    doc.close()
    return png

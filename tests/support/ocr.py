"""Whether OCR can run here, for the tests that read image-only pages."""

from __future__ import annotations

import pytest

from refgate.retrieval.loaders.ocr import OcrUnavailable, installed_languages


def ocr_languages() -> tuple[str, ...]:
    """The languages Tesseract can read here (none when OCR cannot run)."""
    try:
        return installed_languages()
    except OcrUnavailable:
        return ()


#: Skips a test when Tesseract (tesserocr and the language models) is missing.
requires_ocr = pytest.mark.skipif(
    not ocr_languages(), reason="needs Tesseract (tesserocr and tesseract-ocr-eng/-kor)"
)

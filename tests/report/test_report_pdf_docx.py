"""PDF and Word reports of a stored run, and report files that follow the umask.

The PDF is printed by the installed Chromium (headless) and checked the way a reader sees it:
page 1 rendered to PNG (pdftoppm) and read back by OCR (Tesseract) shows the answer and the
first evidence card. The .docx opens with python-docx and holds the same content."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.report import output
from refgate.report.pdf import find_browser
from refgate.retrieval.loaders.ocr import tesseract_words
from tests.support.ocr import requires_ocr


def _report(ws, thread, path):
    return CliRunner().invoke(
        app, ["report", thread, "--workspace", str(ws), "--output", str(path)]
    )


_OCR_LOOKALIKES = str.maketrans({"l": "1", "I": "1", "|": "1", "i": "1", "O": "0", "o": "0"})


def _ocr_fold(text: str) -> str:
    """Text with the glyphs OCR confuses in a hex id (1/l/I/|, 0/o/O) folded to one form."""
    return text.translate(_OCR_LOOKALIKES)


def _first_card(reports, tmp_path) -> tuple[str, str]:
    js = tmp_path / "r.json"
    assert _report(reports["workspace"], "t-clean", js).exit_code == 0
    import json

    record = json.loads(js.read_text(encoding="utf-8"))
    first = re.search(r"\[((?:val|tbl)_[0-9a-f]{10})\]", record["answer"]).group(1)
    return record["answer"], first


@pytest.mark.skipif(find_browser() is None, reason="no Chromium installed")
@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="no pdftoppm (poppler-utils)")
@requires_ocr
def test_the_pdf_report_shows_the_answer_and_first_evidence_card_on_page_one(reports, tmp_path):
    answer, first = _first_card(reports, tmp_path)
    pdf = tmp_path / "run.pdf"
    result = _report(reports["workspace"], "t-clean", pdf)
    assert result.exit_code == 0, result.output
    assert pdf.read_bytes().startswith(b"%PDF-")
    png = tmp_path / "page"
    subprocess.run(
        ["pdftoppm", "-f", "1", "-l", "1", "-r", "200", "-png", "-singlefile", pdf, png],
        check=True,
        timeout=60,
    )
    words = tesseract_words(str(png) + ".png", languages=("eng",))["text"]
    text = " ".join(" ".join(words).split())
    assert "unemployment" in text.lower()  # the question and the answer
    words = re.sub(r"\[[^\]]*\]", "", answer).split()[:4]
    assert " ".join(words).lower().rstrip(".,") in text.lower(), text[:800]
    assert "Evidence cited" in text, text[:1500]
    assert _ocr_fold(first) in _ocr_fold(text.replace(" ", "")), text[:1500]


def test_the_docx_report_opens_with_the_answer_and_numbered_evidence(reports, tmp_path):
    from docx import Document

    answer, first = _first_card(reports, tmp_path)
    path = tmp_path / "run.docx"
    result = _report(reports["workspace"], "t-clean", path)
    assert result.exit_code == 0, result.output
    doc = Document(str(path))
    paragraphs = [p.text for p in doc.paragraphs]
    assert paragraphs[0].startswith("What was the US unemployment rate")
    body = "\n".join(paragraphs)
    assert "Answer" in paragraphs and "Evidence cited" in paragraphs
    assert "[1]" in body and f"[1] valueRef {first}" in body or f"[1] tableRef {first}" in body
    assert first not in body.split("Evidence cited")[0]  # readers see numbers, not ids
    assert doc.tables and any("unemp" in c.text for t in doc.tables for c in t._cells)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_report_files_follow_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        written = output.write_atomic(tmp_path / f"r{mask:o}.md", "# report\n")
    finally:
        os.umask(old)
    assert written.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_pdf_without_a_browser_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("REFGATE_CHROMIUM", str(tmp_path / "no-such-browser"))
    with pytest.raises(output.ReportError, match="Chromium"):
        output.write_run_report(tmp_path / "x.pdf", {"question": "q", "answer": "a"})
    assert not (tmp_path / "x.pdf").exists()
    assert sys.platform  # the .html is the same report without a browser

"""PDF pages as an analyst reads them: scans read by OCR, page furniture dropped, ruled tables
kept in rows. Every PDF here is written by the test itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from refgate.retrieval import DocumentIndex, HashingEmbeddings
from refgate.retrieval.citations import hits_to_refspecs
from refgate.retrieval.documents import read_documents
from refgate.retrieval.loaders.furniture import furniture_keys, strip_furniture
from refgate.retrieval.loaders.ocr import installed_languages
from refgate.retrieval.loaders.pdf import read_pdf

TOPICS = ["lending", "deposits", "treasury", "mortgages", "payments", "wealth", "cards", "leasing"]
BODY = [
    "Our {topic} business grew on higher average balances this year.",
    "Credit quality in {topic} was stable and charge-offs fell.",
    "The board approved a dividend of {n}.25 dollars per share for the quarter.",
    "Expenses in {topic} reflected investment in technology.",
    "Capital held against {topic} remained above the minimums.",
]


def _scan_pdf(path: Path, lines: list[str]) -> Path:
    """One image-only page (no text layer) showing ``lines``, as a scanner writes it."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", (1700, 120 + 70 * len(lines)), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=40)
    for i, line in enumerate(lines):
        draw.text((60, 60 + 70 * i), line, fill=0, font=font)
    pdf = canvas.Canvas(str(path), pagesize=A4)
    w = A4[0] - 60
    pdf.drawInlineImage(img, 30, 400, width=w, height=w * img.height / img.width)
    pdf.showPage()
    pdf.save()
    return path


def test_an_image_only_page_is_read_by_ocr_and_cited_by_page(tmp_path):
    assert "eng" in installed_languages()  # scripts/setup.sh installs Tesseract
    docs = tmp_path / "documents"
    docs.mkdir()
    _scan_pdf(docs / "scan.pdf", ["Quarterly results", "Total revenue was 4,512 million"])
    report = read_documents(docs, root=tmp_path)
    assert report.skipped == []
    [doc] = report.documents
    assert doc.metadata["page"] == 1 and doc.metadata["ocr"] is True
    assert 0.5 < doc.metadata["ocr_confidence"] <= 1.0
    assert "4,512" in doc.page_content and "revenue" in doc.page_content.lower()
    index = DocumentIndex.build(
        report.documents, tmp_path / "idx", embeddings=HashingEmbeddings(64)
    )
    [spec] = hits_to_refspecs(index.search("total revenue", k=1, mmr=False))
    assert spec.title == "scan.pdf p. 1"
    assert spec.payload["ocr"] is True and spec.payload["ocr_confidence"] > 0.5


def test_ocr_turned_off_skips_the_scan_with_that_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("REFGATE_OCR", "off")
    docs = tmp_path / "documents"
    docs.mkdir()
    _scan_pdf(docs / "scan.pdf", ["Total revenue was 4,512 million"])
    report = read_documents(docs, root=tmp_path)
    assert report.documents == []
    assert report.skipped[0].reason == "no text layer; OCR is turned off (REFGATE_OCR=off)"


def _report_with_furniture(path: Path, pages: int = 6) -> Path:
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for n in range(1, pages + 1):
        pdf.setFont("Helvetica", 9)
        pdf.drawString(72, 800, "ACME Bancorp - Annual Report 2023")
        pdf.drawString(450, 800, "Table of Contents")
        pdf.setFont("Helvetica", 11)
        for i, line in enumerate(BODY):
            pdf.drawString(72, 700 - 22 * i, line.format(n=n, topic=TOPICS[n]))
        pdf.drawString(72, 560, f"This section discusses {TOPICS[n]} in detail.")
        pdf.setFont("Helvetica", 9)
        pdf.drawString(280, 40, f"Page {n} of {pages}")
        pdf.showPage()
    pdf.save()
    return path


def test_running_headers_and_footers_are_dropped_and_kept_as_metadata(tmp_path):
    parts = read_pdf(_report_with_furniture(tmp_path / "annual.pdf"))
    assert [p.meta["page"] for p in parts] == [1, 2, 3, 4, 5, 6]
    for n, part in enumerate(parts, start=1):
        assert "ACME Bancorp" not in part.text and "Table of Contents" not in part.text
        assert f"Page {n} of 6" not in part.text
        assert f"This section discusses {TOPICS[n]}" in part.text
        # a body line that differs from page to page only in its numbers stays
        assert f"dividend of {n}.25 dollars" in part.text
        assert f"Page {n} of 6" in part.meta["furniture"]
        assert any("ACME Bancorp" in line for line in part.meta["furniture"])


def test_furniture_needs_most_pages_and_never_empties_a_templated_page():
    # a header on 2 of 6 pages is not furniture; a line repeated in the body is never dropped
    pages = [f"Intro {n}\nbody {n}\nbody\nbody\nmore\nend\nclose\nfinal {n}" for n in range(6)]
    pages[0] = "Draft header\n" + pages[0]
    pages[1] = "Draft header\n" + pages[1]
    keys = furniture_keys(pages)
    assert not any("draft header" in k for k in keys)
    # pages that differ only in their numbers are content: nothing is dropped from them
    templated = [f"Item {n}: revenue was {n}00 million.\nItem {n}: cost {n}0." for n in range(6)]
    keys = furniture_keys(templated)
    assert all(strip_furniture(page, keys) == (page, []) for page in templated)


DIRECTORS = [
    ("Director", "Age", "Since", "Committee"),
    ("Alice Moreau", "61", "1998", "Audit"),
    ("Bao Nguyen", "54", "2001", "Risk"),
    ("Carlos Diaz", "47", "2002", "Compensation"),
]


def _column_drawn_table(path: Path) -> Path:
    """A ruled table whose text is drawn column by column (as some report generators do), so a
    plain text layer reads 'Director Alice Moreau Bao Nguyen ... Age 61 54 ...'."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 780, "Board of directors at year end.")
    xs, top, h = [72, 222, 292, 372, 502], 740, 24
    for j in range(4):
        for i, row in enumerate(DIRECTORS):
            pdf.drawString(xs[j] + 4, top - h * i - 16, row[j])
    for i in range(len(DIRECTORS) + 1):
        pdf.line(xs[0], top - h * i, xs[-1], top - h * i)
    for x in xs:
        pdf.line(x, top, x, top - h * len(DIRECTORS))
    pdf.drawString(72, 600, "Directors are elected annually.")
    pdf.showPage()
    pdf.save()
    return path


def test_a_ruled_tables_rows_stay_on_their_lines(tmp_path):
    [part] = read_pdf(_column_drawn_table(tmp_path / "board.pdf"))
    lines = part.text.splitlines()
    for name, age, since, committee in DIRECTORS[1:]:
        row = next(ln for ln in lines if name in ln)
        assert [c.strip() for c in row.strip("|").split("|")] == [name, age, since, committee]
    assert lines[0] == "Board of directors at year end."
    assert lines[-1] == "Directors are elected annually."
    assert part.tables[0]["columns"] == list(DIRECTORS[0])
    assert json.dumps(part.tables)  # kept as the page's tables (tableRefs)


@pytest.mark.parametrize("pages", [1, 2])
def test_short_documents_have_no_furniture(tmp_path, pages):
    parts = read_pdf(_report_with_furniture(tmp_path / "short.pdf", pages=pages))
    assert all("ACME Bancorp" in p.text for p in parts)


def _tesseract_words(*lines: list[tuple[int, int, str]], height: int = 40) -> dict[str, list]:
    """image_to_data's columns for ``lines`` of (left, width, text) boxes."""
    data: dict[str, list] = {k: [] for k in ("text", "conf", "block_num", "par_num", "line_num")}
    data.update(left=[], width=[], height=[])
    for n, boxes in enumerate(lines, start=1):
        for left, width, text in boxes:
            for key, value in (("text", text), ("conf", 90), ("block_num", 1), ("par_num", 1)):
                data[key].append(value)
            data["line_num"].append(n)
            data["left"].append(left)
            data["width"].append(width)
            data["height"].append(height)
    return data


def test_korean_syllables_boxed_apart_are_joined_into_their_words():
    """Tesseract's Korean model boxes syllables one by one; a narrow gap with Hangul on either
    side joins them, a printed space (wider) stays, and text without Hangul is never joined."""
    from refgate.retrieval.loaders.ocr import read_lines

    text, _ = read_lines(
        _tesseract_words(
            # 회 사 의 (gaps of 4 px) | wide space (20 px) | 개 요; 2023 년 (digit, Hangul)
            [(0, 36, "회"), (40, 36, "사"), (80, 36, "의"), (136, 36, "개"), (176, 36, "요")],
            [(0, 80, "2023"), (84, 36, "년"), (140, 36, "매출")],
            # English with the same narrow gaps: never joined
            [(0, 60, "Total"), (64, 80, "revenue"), (148, 30, "was")],
        )
    )
    assert text.splitlines() == ["회사의 개요", "2023년 매출", "Total revenue was"]


def test_a_scanned_korean_line_reads_as_words(tmp_path):
    """A real scan: a Hangul line in NanumGothic at about 10 pt (28 px at the loader's 200 dpi)
    on an image-only page, read by Tesseract, comes out mostly in whole words (each syllable
    apart without the join: at most one of the five)."""
    from PIL import Image, ImageDraw, ImageFont

    font_path = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
    if "kor" not in installed_languages() or not font_path.is_file():
        pytest.skip("Tesseract's Korean model or the Nanum font is not installed")
    words = ["회사의", "개요와", "사업의", "내용을", "보고합니다"]
    img = Image.new("L", (1486, 175), 255)
    font = ImageFont.truetype(str(font_path), 28)
    ImageDraw.Draw(img).text((52, 52), " ".join(words), fill=0, font=font)
    pdf = canvas.Canvas(str(tmp_path / "scan.pdf"), pagesize=A4)
    width = img.width * 72 / 200  # the loader renders at 200 dpi: one image pixel each
    pdf.drawInlineImage(img, 30, 400, width=width, height=img.height * 72 / 200)
    pdf.showPage()
    pdf.save()
    [part] = read_pdf(tmp_path / "scan.pdf")
    assert part.meta["ocr"] is True
    assert len(set(part.text.split()) & set(words)) >= 3, part.text

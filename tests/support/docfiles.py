"""Office and PDF files written by the tests themselves (reportlab, python-docx, openpyxl)."""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table

#: Text of the sample report's pages; each page names its own number and one figure.
PAGE_TEXT = (
    "Page {n} of the annual report. Management discussion of results for fiscal 2023. "
    "Item {n}: the figure reported on this page is {value} million dollars. "
)
TABLE = [
    ("Segment", "2023", "2022"),
    ("Cloud", "1,452.4", "1,201.0"),
    ("Devices", "(12.3)", "45.0"),
]


def page_value(n: int) -> str:
    return f"{100 + 7 * n:,}.5"


def write_report_pdf(path: Path, pages: int = 5, *, table_page: int | None = 3) -> Path:
    """A multi-page PDF whose page ``n`` says "Page n" and holds ``page_value(n)``; the
    ``table_page`` also carries a ruled segment table (``TABLE``)."""
    styles = getSampleStyleSheet()
    story: list = []
    for n in range(1, pages + 1):
        if n > 1:
            story.append(PageBreak())
        story.append(Paragraph((PAGE_TEXT.format(n=n, value=page_value(n))) * 3, styles["Normal"]))
        if n == table_page:
            story.append(Spacer(1, 12))
            story.append(Table(TABLE, style=[("GRID", (0, 0), (-1, -1), 0.5, "black")]))
    SimpleDocTemplate(str(path), pagesize=A4).build(story)
    return path


def write_encrypted_pdf(path: Path) -> Path:
    pdf = canvas.Canvas(
        str(path), pagesize=A4, encrypt=StandardEncryption("user", ownerPassword="owner")
    )
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 750, "Confidential board minutes.")
    pdf.showPage()
    pdf.save()
    return path


def write_scanned_pdf(path: Path, pages: int = 2) -> Path:
    """Image-only pages, as a scanner writes them (no text layer)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(img).text((20, 80), "Scanned page: revenue 1,234", fill="black")
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for _ in range(pages):
        pdf.drawImage(ImageReader(img), 30, 500, width=500, height=250)
        pdf.showPage()
    pdf.save()
    return path


def write_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_heading("Investment memo", level=1)
    d.add_paragraph("We recommend holding the position; operating margin reached 23.4 percent.")
    d.add_heading("Valuation", level=2)
    table = d.add_table(rows=3, cols=2)
    for r, row in enumerate([("Metric", "Value"), ("EV/EBITDA", "11.2"), ("P/E", "18.5")]):
        for c, cell in enumerate(row):
            table.cell(r, c).text = cell
    d.add_paragraph("Risks: customer concentration.")
    d.save(str(path))
    return path


def write_xlsx(path: Path) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Revenue"
    for row in [("Year", "Revenue", "Margin"), (2022, 1201.0, 0.21), (2023, 1452.4, 0.234)]:
        sheet.append(row)
    book.create_sheet("Empty")
    notes = book.create_sheet("Notes")
    notes.append(("Item", "Comment"))
    notes.append(("FX", "Constant currency growth 8%"))
    book.save(str(path))
    return path

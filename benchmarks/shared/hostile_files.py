"""Hostile office files, written by the tests (and benchmarks/document_scale.py) themselves:

- ``whole_sheet_xlsx``: a tiny workbook whose sheet declares the range ``A1:XFD1048576`` (17
  billion cells; read naively it took 79 s and 2.78 GB, then MemoryError);
- ``inflating_docx``: a DOCX whose ``word/document.xml`` inflates to hundreds of MB from a file
  of a few hundred KB;
- ``wide_sheet_xlsx``: an ordinary 20,000 x 200 sheet (4 million cells of varied numbers);

and readers that misbehave on purpose, for the child-process bounds (they run in the child, so
they live in a module it can import).
"""

from __future__ import annotations

import time
import zipfile
from pathlib import Path
from typing import Any

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>{overrides}</Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="{target}"/></Relationships>'
)
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _column(n: int) -> str:
    letters = ""
    while n:
        n, rem = divmod(n - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _workbook(path: Path, write_sheet: Any) -> Path:
    """A minimal one-sheet XLSX whose sheet XML ``write_sheet(fh)`` streams."""
    sheet_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
    book_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
    overrides = (
        f'<Override PartName="/xl/workbook.xml" ContentType="{book_type}"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{sheet_type}"/>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES.format(overrides=overrides))
        z.writestr("_rels/.rels", _RELS.format(target="xl/workbook.xml"))
        z.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{_MAIN}" xmlns:r="{_R}"><sheets>'
            '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        z.writestr(
            "xl/_rels/workbook.xml.rels",
            _RELS.format(target="worksheets/sheet1.xml").replace(
                "relationships/officeDocument", "relationships/worksheet"
            ),
        )
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            write_sheet(fh)
    return path


def whole_sheet_xlsx(path: Path) -> Path:
    """Two real cells, and a sheet that declares every cell Excel allows."""

    def sheet(fh: Any) -> None:
        fh.write(
            f'<worksheet xmlns="{_MAIN}"><dimension ref="A1:XFD1048576"/><sheetData>'
            '<row r="1"><c r="A1" t="inlineStr"><is><t>year</t></is></c></row>'
            '<row r="2"><c r="A2"><v>2024</v></c></row></sheetData></worksheet>'.encode()
        )

    return _workbook(path, sheet)


def wide_sheet_xlsx(
    path: Path, rows: int = 20_000, cols: int = 200, *, declare: bool = True
) -> Path:
    """An ordinary numeric sheet of ``rows`` x ``cols`` (a header row, then varied numbers);
    ``declare=False`` leaves out its ``<dimension>``, as some writers do."""
    values = [f"<c><v>{(v * 7919) % 100_003}.{v % 97}</v></c>" for v in range(100_003)]

    def sheet(fh: Any) -> None:
        dimension = f'<dimension ref="A1:{_column(cols)}{rows}"/>' if declare else ""
        fh.write(f'<worksheet xmlns="{_MAIN}">{dimension}<sheetData>'.encode())
        header = "".join(f'<c t="inlineStr"><is><t>col{j}</t></is></c>' for j in range(cols))
        fh.write(f"<row>{header}</row>".encode())
        for i in range(1, rows):
            base = i * cols
            cells = "".join(values[(base + j) % 100_003] for j in range(cols))
            fh.write(f"<row>{cells}</row>".encode())
        fh.write(b"</sheetData></worksheet>")

    return _workbook(path, sheet)


def inflating_docx(path: Path, inflated_mb: int = 300) -> Path:
    """A valid DOCX whose ``word/document.xml`` holds one paragraph of ``inflated_mb`` MB."""
    doc_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "[Content_Types].xml",
            _CONTENT_TYPES.format(
                overrides=f'<Override PartName="/word/document.xml" ContentType="{doc_type}"/>'
            ),
        )
        z.writestr("_rels/.rels", _RELS.format(target="word/document.xml"))
        with z.open("word/document.xml", "w", force_zip64=True) as fh:
            fh.write(f'<w:document xmlns:w="{w}"><w:body><w:p><w:r><w:t>'.encode())
            chunk = b"revenue grew " * (1024 * 1024 // 13)
            for _ in range(inflated_mb):
                fh.write(chunk)
            fh.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return path


def hog_memory(path: Path, *args: Any, **kwargs: Any) -> list[Any]:
    """A reader that needs far more memory than any bound in the tests."""
    blocks = []
    for _ in range(64):
        blocks.append(bytearray(256 * 1024 * 1024))
    return blocks


def never_finish(path: Path, *args: Any, **kwargs: Any) -> list[Any]:
    """A reader that never returns."""
    while True:
        time.sleep(0.5)


def report_progress(path: Path, *args: Any, progress: Any = None) -> list[Any]:
    """A reader that reports progress, then returns the path's name."""
    for done in range(3):
        progress(done + 1, 3)
    return [Path(path).name]


def print_then_return(path: Path, *args: Any, **kwargs: Any) -> list[Any]:
    """A reader that prints to stdout (a chatty library) and then returns the path's name."""
    print("a reader's chatter on stdout " * 100)
    return [Path(path).name]


def die_with_reason(path: Path, *args: Any, **kwargs: Any) -> list[Any]:
    """A reader that writes its reason on stderr and ends its process (a native crash's stand-in)."""
    import os
    import sys

    sys.stderr.write("libfoo: fatal: unsupported compression method 99\n")
    sys.stderr.flush()
    os._exit(3)

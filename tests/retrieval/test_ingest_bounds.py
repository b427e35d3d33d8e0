"""Bounded ingestion (issue 31, item 2): every document is parsed in a child process under a
memory and a time bound; Office packages are checked before they are opened (uncompressed
sizes, compression ratio, a workbook's declared cells); sheets stream with a cell cap. A file
over a bound is skipped with its reason and the rest of the folder is indexed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared.hostile_files import (
    die_with_reason,
    hog_memory,
    inflating_docx,
    never_finish,
    print_then_return,
    report_progress,
    whole_sheet_xlsx,
    wide_sheet_xlsx,
)
from typer.testing import CliRunner

from refgate.config import Settings
from refgate.memory.embeddings import HashingEmbeddings
from refgate.retrieval.loaders import BoundedChild, IngestLimits, Unreadable
from refgate.retrieval.loaders.office import read_xlsx

HOSTILE = {
    "documents/whole-sheet.xlsx": "cells",
    "documents/inflating.docx": "document.xml",
    "documents/wide-sheet.xlsx": "4,000,000 cells",
}


def _normal_files(docs: Path) -> None:
    import docx
    import openpyxl

    (docs / "memo.txt").write_text("The board approved the 2024 budget of 12 million dollars.")
    document = docx.Document()
    document.add_heading("Quarterly note", level=1)
    document.add_paragraph("Revenue rose 4 percent in the quarter.")
    document.save(docs / "note.docx")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sales"
    for row in (("year", "sales"), (2023, 10.5), (2024, 11.25)):
        sheet.append(row)
    book.save(docs / "sales.xlsx")


def test_index_skips_the_hostile_office_files_with_reasons_and_indexes_the_rest(
    tmp_path, monkeypatch
):
    import refgate.retrieval as retrieval
    from refgate.cli import app

    monkeypatch.setattr(
        retrieval, "default_embeddings", lambda settings=None: HashingEmbeddings(64)
    )
    monkeypatch.setenv("REFGATE_INGEST_MEMORY_MB", "1536")
    monkeypatch.setenv("REFGATE_INGEST_TIMEOUT_S", "120")
    root = tmp_path / "ws"
    docs = root / "documents"
    docs.mkdir(parents=True)
    (root / "refgate.toml").write_text('name = "hostile"\n[documents]\npath = "documents"\n')
    whole_sheet_xlsx(docs / "whole-sheet.xlsx")
    inflating_docx(docs / "inflating.docx", inflated_mb=300)
    wide_sheet_xlsx(docs / "wide-sheet.xlsx")
    assert (docs / "whole-sheet.xlsx").stat().st_size < 3_000
    assert (docs / "inflating.docx").stat().st_size < 2_000_000
    _normal_files(docs)

    res = CliRunner().invoke(app, ["index", "--workspace", str(root), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    skipped = {s["source"]: s["reason"] for s in out["skipped"]}
    assert set(skipped) == set(HOSTILE), skipped
    for source, words in HOSTILE.items():
        assert words in skipped[source] and "not opened" in skipped[source], skipped[source]
    from refgate.retrieval.index import DocumentIndex

    index = DocumentIndex.load(root / ".refgate" / "index")
    assert sorted(index.doc_ids) == ["memo", "note", "sales#sheet-Sales"]
    assert "skipped 3 of 6 files" in " ".join(res.stderr.split())


def test_a_reader_over_the_memory_or_time_bound_is_stopped_and_the_next_file_read(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"x")
    seen: list[tuple[int, int]] = []
    with BoundedChild(IngestLimits(memory_mb=512, timeout_s=120)) as child:
        with pytest.raises(Unreadable, match="512 MB memory bound"):
            child.call(hog_memory, path)
        assert child.call(report_progress, path, progress=lambda d, t: seen.append((d, t))) == [
            "x.bin"
        ]
    with (
        BoundedChild(IngestLimits(timeout_s=3)) as child,
        pytest.raises(Unreadable, match="longer than the 3 s bound"),
    ):
        child.call(never_finish, path)
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_a_worker_that_cannot_start_or_dies_says_why_and_the_next_call_starts_one(
    tmp_path, monkeypatch
):
    """A worker that fails to start, or dies mid-call, gives its own reason (the last line of its
    log, its exit status), not a guess about memory; the next call starts a fresh worker."""
    from refgate.retrieval.loaders import bounded

    path = tmp_path / "x.bin"
    path.write_bytes(b"x")
    with BoundedChild(IngestLimits(timeout_s=60)) as child:
        monkeypatch.setattr(bounded, "WORKER_MODULE", "refgate.retrieval.loaders.no_such_worker")
        with pytest.raises(Unreadable, match="No module named") as info:
            child.call(report_progress, path, progress=lambda done, total: None)
        assert "memory bound" not in str(info.value)
        child.close()  # nothing left to kill, no error
        monkeypatch.undo()
        assert child.call(report_progress, path, progress=lambda done, total: None) == ["x.bin"]
        with pytest.raises(Unreadable, match="exited with code 3.*compression method 99"):
            child.call(die_with_reason, path)
        # a reader that prints to stdout cannot corrupt the worker's answers
        assert child.call(print_then_return, path) == ["x.bin"]


def test_a_sheet_without_declared_dimensions_streams_up_to_the_cell_cap(tmp_path):
    path = wide_sheet_xlsx(tmp_path / "undeclared.xlsx", rows=400, cols=50, declare=False)
    [part] = read_xlsx(path, limits=IngestLimits(max_cells=5_000))
    assert part.meta["rows_cut"].startswith("rows after 100 not indexed")
    assert len(part.tables[0]["rows"]) == 99  # a header and 99 rows: 100 rows of 50 cells
    assert "cell cap" in part.text


def test_a_zip_bomb_is_refused_before_it_is_opened(tmp_path):
    from refgate.retrieval.loaders.office import read_docx

    path = inflating_docx(tmp_path / "bomb.docx", inflated_mb=20)
    with pytest.raises(Unreadable, match="compressed .* to 1"):
        read_docx(path)
    with pytest.raises(Unreadable, match="over the 10 MB bound"):
        read_docx(path, limits=IngestLimits(max_member_mb=10, max_ratio=100_000))


def test_ingest_limits_are_the_ingest_settings() -> None:
    """Each bound is the setting ``ingest_<field>``: its default, and its value when set."""
    assert IngestLimits() == IngestLimits.from_settings(Settings.model_construct())
    assert IngestLimits().memory_mb == 3072 and IngestLimits().timeout_s == 600.0
    settings = Settings.model_construct(
        ingest_memory_mb=1024,
        ingest_timeout_s=5.0,
        ingest_max_unzipped_mb=7,
        ingest_max_member_mb=3,
        ingest_max_ratio=9,
        ingest_max_cells=11,
    )
    assert IngestLimits.from_settings(settings) == IngestLimits(1024, 5.0, 7, 3, 9, 11)

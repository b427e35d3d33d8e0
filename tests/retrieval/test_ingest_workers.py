"""Ingestion workers (issue 46, item 6): documents are parsed by a worker started as its own
module, so indexing works from ``python -`` (stdin) and from a script without a main guard, whose
body must run once, not again inside the worker."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

#: Reads the folder, builds an index with the hashing embedder, and says what it found. Each run
#: of the script appends a line to ``runs.log``: a worker that re-imports ``__main__`` adds one.
SCRIPT = textwrap.dedent(
    """
    from pathlib import Path
    from refgate.memory.embeddings import HashingEmbeddings
    from refgate.retrieval.documents import read_documents
    from refgate.retrieval.index import DocumentIndex

    here = Path({folder!r})
    with open(here / "runs.log", "a") as log:
        log.write("ran\\n")
    report = read_documents(here / "documents", root=here)
    index = DocumentIndex.build(
        report.documents, here / "index", embeddings=HashingEmbeddings(64)
    )
    print("docs", sorted(index.doc_ids))
    print("skipped", [s.reason for s in report.skipped])
    """
)


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "documents"
    docs.mkdir()
    (docs / "memo.txt").write_text("The board approved the 2024 budget of 12 million dollars.")
    (docs / "note.md").write_text("# Note\n\nRevenue rose 4 percent in the quarter.")
    return tmp_path


def _check(res: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert res.returncode == 0, res.stderr[-2000:]
    assert "docs ['memo', 'note']" in res.stdout, res.stdout + res.stderr[-2000:]
    assert "skipped []" in res.stdout
    assert (folder / "runs.log").read_text() == "ran\n"  # the user's code ran once


def test_indexing_from_python_stdin_reads_every_document(tmp_path):
    folder = _folder(tmp_path)
    res = subprocess.run(
        [sys.executable, "-"],
        input=SCRIPT.format(folder=str(folder)),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
    )
    _check(res, folder)


def test_a_script_without_a_main_guard_indexes_and_runs_once(tmp_path):
    folder = _folder(tmp_path)
    script = folder / "index_my_docs.py"
    script.write_text(SCRIPT.format(folder=str(folder)))
    res = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=folder
    )
    _check(res, folder)


def test_indexing_from_python_c_reads_every_document(tmp_path):
    folder = _folder(tmp_path)
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(folder=str(folder))],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
    )
    _check(res, folder)

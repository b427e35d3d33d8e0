"""``refgate index`` killed midway (SIGKILL) resumes without parsing finished documents again."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from refgate.retrieval.documents import workspace_load
from refgate.retrieval.loaders.bounded import BoundedChild
from refgate.retrieval.parse_cache import FILE_NAME
from refgate.workspace import load_workspace
from tests.support.docfiles import write_scanned_pdf

pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs Tesseract")

FILES = 4


def parsed_sources(db) -> set[str]:
    if not db.is_file():
        return set()
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return {row[0] for row in conn.execute("SELECT source FROM parsed")}
    except sqlite3.OperationalError:  # created, table not there yet
        return set()


def test_a_killed_index_run_resumes_without_parsing_finished_files(tmp_path, monkeypatch):
    docs = tmp_path / "documents"
    docs.mkdir()
    for n in range(FILES):  # image-only pages: each file takes seconds (OCR)
        write_scanned_pdf(docs / f"scan{n}.pdf", pages=2)
    (tmp_path / "refgate.toml").write_text(
        'name = "resume"\n[documents]\npath = "documents"\n', encoding="utf-8"
    )
    ws = load_workspace(tmp_path)
    db = ws.state_dir / FILE_NAME
    env = {**os.environ, "REFGATE_OCR_WORKERS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from refgate.cli import app; app()", "index", "-w", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        while not parsed_sources(db) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(10)
    finished = parsed_sources(db)
    assert proc.returncode == -signal.SIGKILL
    assert 1 <= len(finished) < FILES, finished  # killed midway, some files done

    parsed_again: list[str] = []
    real_call = BoundedChild.call

    def counted(self, func, path, *args, **kwargs):
        parsed_again.append(path.relative_to(tmp_path).as_posix())
        return real_call(self, func, path, *args, **kwargs)

    monkeypatch.setattr(BoundedChild, "call", counted)
    report = workspace_load(ws)
    assert not set(parsed_again) & finished  # finished files are not parsed again
    assert sorted(parsed_again + sorted(finished)) == [
        f"documents/scan{n}.pdf" for n in range(FILES)
    ]
    assert {d.metadata["source"] for d in report.documents} == {
        f"documents/scan{n}.pdf" for n in range(FILES)
    }
    assert not report.skipped

"""examples/kr-filings is what `refgate dart sync` writes from its recording: a sync into a
fresh copy reproduces the committed documents, dataset, manifest and raw cache byte for byte."""

from __future__ import annotations

import shutil

from tests.support.dart import RECORDING
from tests.support.dart_sample import make

SAMPLE = RECORDING.parent
SYNCED = ("dart", "data", "documents")


def files(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for folder in SYNCED
        for p in sorted((root / folder).rglob("*"))
        if p.is_file()
    }


def test_the_sample_is_the_sync_of_its_recording(tmp_path):
    fresh = tmp_path / "kr-filings"
    fresh.mkdir()
    shutil.copy(SAMPLE / "refgate.toml", fresh / "refgate.toml")
    make(fresh)
    assert files(fresh) == files(SAMPLE)

"""refgate.files: every file refgate writes is the old one or the new one, never half of one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from refgate import files


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_write_atomic_writes_text_and_bytes(tmp_path):
    assert files.write_atomic(tmp_path / "a.md", "one\ntwo\n").read_bytes() == b"one\ntwo\n"
    assert files.write_atomic(tmp_path / "b.bin", b"\x00\xff").read_bytes() == b"\x00\xff"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_a_written_file_has_a_plain_files_permissions(tmp_path, mask):
    old = os.umask(mask)
    try:
        written = files.write_atomic(tmp_path / "r.json", "{}")
    finally:
        os.umask(old)
    assert written.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "index.parquet"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk gone"), files.replacing(target) as tmp:
        tmp.write_text("half of the ne")
        raise RuntimeError("disk gone")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_replacing_hands_a_path_beside_the_target(tmp_path):
    target = tmp_path / "vectors.faiss"
    with files.replacing(target) as tmp:
        assert tmp.parent == tmp_path and tmp != target and not target.exists()
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert _leftovers(tmp_path) == []


def test_an_unwritable_folder_is_an_os_error_and_writes_nothing(tmp_path):
    with pytest.raises(OSError):
        files.write_atomic(tmp_path / "missing" / "x.md", "text")
    assert not (tmp_path / "missing").exists()

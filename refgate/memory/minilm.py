"""all-MiniLM-L6-v2 on ONNX Runtime: sentence embeddings without torch.

The computation is ``minilm.onnx`` beside this module (BERT, mean pooling over the attention
mask, unit length: sentence-transformers' three modules; written by
``scripts/build_minilm_graph.py``, about 27 KB, no weights). The weights are the publisher's
``model.safetensors``, checked by its SHA-256 (``refgate.model_files``) and handed to ONNX Runtime
tensor by tensor from a read-only memory map, at the offsets its header gives: no export step, no
second copy of the model on disk, nothing downloaded. Word pieces come from the model's own
``tokenizer.json`` through ``tokenizers`` (the Rust tokenizer sentence-transformers uses too).

Embeddings agree with sentence-transformers' within 1e-6 per dimension (tests/retrieval/
test_minilm_onnx.py; docs/benchmarks.md, "Embeddings runtime").

The *int8 encoder* (``MiniLM(..., int8=True)``, ``minilm_int8.onnx``) runs the 36 linear layers in
8-bit integers: about half the CPU time, vectors within a cosine of about 0.99 of the float
model's. Its int8 weights are computed here from the same verified float weights
(``quantize_columns``); nothing more is stored or downloaded. Each layer's input is quantised over
its whole pass, so the int8 encoder embeds one text per pass: a text's vector never depends on
the texts beside it.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

GRAPH = Path(__file__).with_name("minilm.onnx")
GRAPH_INT8 = Path(__file__).with_name("minilm_int8.onnx")
#: int8 weights use 7 bits (|q| <= 63): two uint8 x int8 products then sum within int16, so CPUs
#: without VNNI (whose kernel adds pairs in int16) give the same sums as those with it.
INT8_LEVELS = 63
WEIGHTS = "model.safetensors"
#: The model's input length in word pieces (sentence_bert_config.json's max_seq_length).
MAX_SEQ_LENGTH = 256
DIMENSION = 384
_DTYPES = {"F32": np.float32, "I64": np.int64}


def safetensors_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a read-only array over a memory map of it."""
    with path.open("rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    header.pop("__metadata__", None)
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    arrays = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        arrays[name] = data[begin:end].view(_DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return arrays


class MiniLM:
    """The model, loaded: ``encode`` gives unit-length sentence embeddings, ``token_offsets``
    the character span of each word piece of a text (no special tokens, no truncation)."""

    dimension = DIMENSION

    def __init__(self, folder: Path, max_seq_length: int | None = None, int8: bool = False) -> None:
        # tokenizers' thread pool would warn on stderr in a process forked after it ran (the
        # sandbox's workers); tokenizing is a small part of the cost
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # deferred: onnxruntime and tokenizers load with the model, not with refgate.memory
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.max_seq_length = int(max_seq_length or MAX_SEQ_LENGTH)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()  # tokenizer.json pads to 128: batches are padded here
        self._tokenizer.enable_truncation(self.max_seq_length)
        self._pieces = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._pieces.no_padding()
        self._pieces.no_truncation()

        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: nothing on the caller's stderr
        # no busy-waiting between operators: the machine is shared with the chat model's server
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.int8 = int8
        # kept alive: the session reads these arrays in place
        self._weights = graph_weights(safetensors_arrays(folder / WEIGHTS), int8)
        names = list(self._weights)
        options.add_external_initializers(
            names, [ort.OrtValue.ortvalue_from_numpy(self._weights[n]) for n in names]
        )
        self._session = ort.InferenceSession(
            (GRAPH_INT8 if int8 else GRAPH).read_bytes(),
            options,
            providers=["CPUExecutionProvider"],
        )

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """The (start, end) character span of each word piece of ``text``."""
        return list(self._pieces.encode(text, add_special_tokens=False).offsets)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length sentence embeddings, one float32 row per text (input cut at
        ``max_seq_length`` word pieces). Texts are batched by length, as sentence-transformers
        does, so a batch pads little; the int8 encoder takes one text per pass."""
        if self.int8:
            batch_size = 1
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            (vecs,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
            out[rows] = vecs
        return out


def graph_weights(arrays: dict[str, np.ndarray], int8: bool) -> dict[str, np.ndarray]:
    """The tensors the graph reads, by name: the file's own, and for the int8 graph each linear
    layer's weight as int8 columns and their scales (``quantize_columns``) instead."""
    out: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if not graph_weight(name):
            continue
        if int8 and linear_weight(name, array):
            out[f"{name}.int8"], out[f"{name}.scale"] = quantize_columns(array)
        else:
            out[name] = array
    return out


def linear_weight(name: str, array: np.ndarray) -> bool:
    """Whether a tensor is the weight matrix of one of the encoder's linear layers."""
    return name.startswith("encoder.") and name.endswith(".weight") and array.ndim == 2


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A linear layer's weight ``W`` ([out, in], as the file holds it) as ``W^T`` in int8
    ([in, out]) with one float32 scale per column: symmetric, ``INT8_LEVELS`` steps a side."""
    columns = np.asarray(weight, dtype=np.float32).T
    peak = np.abs(columns).max(axis=0)
    scale = np.where(peak > 0, peak / INT8_LEVELS, 1.0).astype(np.float32)
    quantized = np.clip(np.rint(columns / scale), -INT8_LEVELS, INT8_LEVELS).astype(np.int8)
    return np.ascontiguousarray(quantized), scale


def graph_weight(name: str) -> bool:
    """Whether the graph reads this tensor of the file: all but the position ids (positions are
    0..n-1 in the graph) and the pooler (sentence-transformers does not use it)."""
    return name != "embeddings.position_ids" and not name.startswith("pooler.")

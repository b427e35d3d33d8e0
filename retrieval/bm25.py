"""The lexical side of ``DocumentIndex``: a bm25s index over the chunks (English stop words
removed, stemmed with PyStemmer when installed, numbers kept) and the BM25 scores of a query.

A corpus with Korean text (any chunk holding Hangul) is tokenised into morphemes instead
(``tokenizer="kiwi"``, kiwipiepy and its packaged model): "삼성전자의" and "삼성전자는" are both
"삼성전자" + a particle, which whitespace words never match. Content morphemes are kept (nouns,
numerals, verb and adjective stems, roots, foreign words, hanja); particles and endings are
dropped; foreign (Latin) words go through the same lower-casing, stop words and stemmer as the
English path, numbers lose their thousands separators. The choice is recorded in the index
manifest so queries are tokenised as the chunks were. How much it helps:
``benchmarks/korean_retrieval.py``."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bm25s import BM25
    from kiwipiepy import Kiwi
    from Stemmer import Stemmer

#: Words of two or more characters plus numbers and fractions ("0", "1/4", "2.5"), which matter
#: in financial text and which bm25s's default pattern drops.
TOKEN_PATTERN = r"(?u)\d+(?:[./]\d+)*|\b\w\w+\b"


#: The morpheme tokenizer for a corpus with Korean text.
KIWI = "kiwi"
HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
#: Kiwi tags kept: general/proper nouns, numerals, numbers, foreign words, hanja, verb and
#: adjective stems, roots, and noun-forming suffixes ("-률" in 영업이익률 stays a separate term).
KIWI_TAGS = frozenset({"NNG", "NNP", "NR", "SN", "SL", "SH", "VV", "VA", "XR", "XSN", "MAG"})


def has_hangul(text: str) -> bool:
    return HANGUL.search(text or "") is not None


def kiwi_available() -> bool:
    try:
        # deferred: kiwipiepy loads a morphological model; only Korean corpora need it
        import kiwipiepy  # noqa: F401
    except ImportError:
        return False
    return True


def corpus_tokenizer(texts: Sequence[str]) -> str | None:
    """``"kiwi"`` for a corpus with Korean text (when kiwipiepy is installed), else None
    (whitespace words, the English path)."""
    if kiwi_available() and any(has_hangul(t) for t in texts):
        return KIWI
    return None


@lru_cache(maxsize=1)
def _kiwi() -> Kiwi:
    # deferred: kiwipiepy loads its model (seconds); paid once, by Korean corpora only
    from kiwipiepy import Kiwi

    return Kiwi()


_EN_STOP: frozenset[str] | None = None


def _english_stopwords() -> frozenset[str]:
    global _EN_STOP
    if _EN_STOP is None:
        # deferred: bm25s is heavy to import; paid on first use
        from bm25s.stopwords import STOPWORDS_EN

        _EN_STOP = frozenset(STOPWORDS_EN)
    return _EN_STOP


def morpheme_tokens(texts: Sequence[str], stem: Stemmer | None) -> list[list[str]]:
    """Each text's content morphemes (see the module docstring), line by line: a line that
    recurs (a filing's table rows and paragraphs repeat from one report to the next, and
    overlapping chunks share lines) is analysed once, a table row cell by cell."""
    per_text = [text.split("\n") for text in texts]
    unique = list(dict.fromkeys(line for lines in per_text for line in lines if line.strip()))
    # a table row is analysed cell by cell: its labels recur far more than its rows, and a
    # cell of figures alone needs no analysis (its numbers, thousands separators dropped)
    pieces: dict[str, list[str]] = {}
    for line in unique:
        pieces[line] = line.split("|") if line.lstrip().startswith("|") else [line]
    words = list(
        dict.fromkeys(
            p.strip() for ps in pieces.values() for p in ps if p.strip() and _LETTER.search(p)
        )
    )
    by_piece = dict(zip(words, _morphemes(words, stem), strict=True))

    def piece_tokens(piece: str) -> list[str]:
        p = piece.strip()
        if not p:
            return []
        if p in by_piece:
            return by_piece[p]
        return [sys.intern(n.replace(",", "")) for n in _NUMBER.findall(p)]

    by_line = {line: [t for p in ps for t in piece_tokens(p)] for line, ps in pieces.items()}
    return [[t for line in lines if line.strip() for t in by_line[line]] for lines in per_text]


#: A piece of text with letters (analysed by Kiwi) and a number in a cell of figures.
_LETTER = re.compile(r"[^\W\d_]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _morphemes(texts: list[str], stem: Stemmer | None) -> list[list[str]]:
    stop = _english_stopwords()
    out: list[list[str]] = []
    for tokens in _kiwi().tokenize(texts):
        words: list[str] = []
        for tok in tokens:
            if tok.tag not in KIWI_TAGS:
                continue
            form = tok.form
            if tok.tag == "SL":
                form = form.lower()
                if len(form) < 2 or form in stop:
                    continue
                if stem is not None:
                    form = stem.stemWord(form)
            elif tok.tag == "SN":
                form = form.replace(",", "")
            words.append(sys.intern(form))
        out.append(words)
    return out


def stemmer() -> Stemmer | None:
    """The English PyStemmer, or None when PyStemmer is not installed."""
    try:
        # deferred: PyStemmer is heavy to import; paid on first use
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english")


def bm25_tokens(texts: Sequence[str], stem: Stemmer | None, *, ids: bool) -> Any:
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    return bm25s.tokenize(
        list(texts),
        token_pattern=TOKEN_PATTERN,
        stopwords="en",
        stemmer=stem,
        return_ids=ids,
        show_progress=False,
    )


def build_bm25(texts: Sequence[str], stem: Stemmer | None, tokenizer: str | None = None) -> BM25:
    """A bm25s index of ``texts`` (row i = text i), in words or (``"kiwi"``) morphemes."""
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    model = bm25s.BM25()
    if tokenizer == KIWI:
        model.index(morpheme_tokens(texts, stem), show_progress=False)
    else:
        model.index(bm25_tokens(texts, stem, ids=True), show_progress=False)
    return model


def query_tokens(query: str, stem: Stemmer | None, tokenizer: str | None = None) -> list[str]:
    """The terms of ``query`` as the chunks were tokenised."""
    if tokenizer == KIWI:
        return morpheme_tokens([query], stem)[0]
    return list(bm25_tokens([query], stem, ids=False)[0])


def load_bm25(path: str) -> BM25:
    """The bm25s index saved in the folder ``path``."""
    # deferred: bm25s is heavy to import; paid on first use
    import bm25s

    return bm25s.BM25.load(path, show_progress=False)


def bm25_scores(
    model: BM25 | None,
    query: str,
    stem: Stemmer | None,
    mask: np.ndarray | None,
    tokenizer: str | None = None,
) -> np.ndarray | None:
    """BM25 score of every chunk (0 outside ``mask``), or None if the query has no terms."""
    if model is None:
        return None
    tokens = query_tokens(query, stem, tokenizer)
    if tokenizer == KIWI:  # terms no chunk has would raise in bm25s: they score nothing
        vocab = model.vocab_dict
        tokens = [t for t in dict.fromkeys(tokens) if t in vocab]
    if not tokens:
        return None
    scores = np.asarray(model.get_scores(tokens), dtype=np.float32)
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    return scores


def bm25_top(scores: np.ndarray | None, n: int) -> list[tuple[int, float]]:
    """The ``n`` best rows with a positive score, as ``(row, score)``, best first."""
    if n <= 0 or scores is None:
        return []
    n = min(n, int(np.count_nonzero(scores > 0)))
    if n == 0:
        return []
    kth = scores[np.argpartition(-scores, n - 1)[n - 1]]
    # the rows above the n-th score, then the first rows equal to it (ties in row order)
    above = np.flatnonzero(scores > kth)
    top = np.concatenate([above, np.flatnonzero(scores == kth)[: n - len(above)]])
    top = top[np.lexsort((top, -scores[top]))]
    return [(int(r), float(scores[r])) for r in top]

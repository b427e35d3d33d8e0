"""Token normalisation and classification.

Words are compared after per-token normalisation: NFKC (full-width letters), case folding,
Cyrillic/Greek look-alikes mapped to Latin, leetspeak digits inside words (``1gn0re``). A token
within Damerau-Levenshtein distance 1 (2 for words of 9+ letters) of a lexicon word counts as
that word (``ignroe``, ``instrucitons``). Korean stems are found inside Hangul tokens.

Raw tokens are whitespace-separated words; each distinct raw token is classified once
(memoised across calls) into sub-tokens: punctuation splits words, invisible characters are
dropped, ``i.g.n.o.r.e`` / ``save_artifact`` are joined when the joined word is an anchor.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from refgate.provenance.injection import catalog
from refgate.provenance.injection.lexicon import ANCHORS, lexicon
from refgate.provenance.injection.patterns import hinted_rules
from refgate.provenance.unicode_scan import CONFUSABLES

_FUZZY_MIN = 6  # minimum length for fuzzy matching
_MEMO_LIMIT = 200_000
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"})
_CONF = str.maketrans(CONFUSABLES)
_HANGUL_BLOCK = "가-힣ㄱ-ㅎㅏ-ㅣ"
_HANGUL_RE = re.compile("[가-힣]")
TOKEN_RE = re.compile(f"[{_HANGUL_BLOCK}]+|[^\\W_{_HANGUL_BLOCK}]+")
_INVIS = "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u034f\u202a-\u202e\u2066-\u2069"
INVIS_RE = re.compile(f"[{_INVIS}\U000e0000-\U000e007f]")
_EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TokenInfo:
    norm: str
    tags: frozenset[str]
    word: str = ""  # canonical lexicon word (exact or fuzzy)
    tool: str = ""  # catalog tool named by this token
    ordered: tuple[tuple[int, str], ...] = ()  # Korean: (offset, tag) in token order
    fragment: bool = False


EMPTY_TOKEN = TokenInfo("", _EMPTY)


@dataclass(frozen=True)
class RawInfo:
    subs: tuple[TokenInfo, ...]
    hot: bool  # holds an anchor or a word fragment, or hints at a regex rule
    single: bool  # one letter or digit (letter-spaced runs)
    rules: frozenset[int] = frozenset()  # regex rules this word hints at
    anchor: bool = False  # starts a token-rule check


NO_RAW = RawInfo((), False, False)
_MEMO: dict[str, TokenInfo] = {}
_RAW_MEMO: dict[str, RawInfo] = {}
_FUZZY_INDEX: dict[str, set[str]] = {}
_FRAGMENTS: set[str] = set()


def clear_memos() -> None:
    _MEMO.clear()
    _RAW_MEMO.clear()


catalog.on_change(clear_memos)


def norm_token(tok: str) -> str:
    if not tok.isascii():
        tok = unicodedata.normalize("NFKC", tok).translate(_CONF)
    tok = tok.casefold()
    if not tok.isalpha() and any(c.isalpha() for c in tok):
        tok = tok.translate(_LEET)
    return tok


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _allowed(word: str) -> int:
    if word in lexicon().no_fuzzy or len(word) < _FUZZY_MIN:
        return 0
    return 2 if len(word) >= 9 else 1


def _build_fuzzy() -> None:
    for word in lexicon().words:
        budget = _allowed(word)
        if not budget:
            continue
        keys = {word} | _deletes(word)
        if budget == 2:
            keys |= {d2 for d in _deletes(word) for d2 in _deletes(d)}
        for key in keys:
            _FUZZY_INDEX.setdefault(key, set()).add(word)


def dl_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance, stopping early once above ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def fuzzy(word: str) -> str | None:
    """The nearest lexicon word within the allowed distance, or None."""
    if len(word) < _FUZZY_MIN - 1 or len(word) > 24 or not word.isalpha() or not word.isascii():
        return None
    if not _FUZZY_INDEX:
        _build_fuzzy()
    keys = {word} | _deletes(word)
    if len(word) >= 8:
        keys |= {d2 for d in _deletes(word) for d2 in _deletes(d)}
    best: tuple[int, str] | None = None
    for key in keys:
        for cand in _FUZZY_INDEX.get(key, ()):
            limit = _allowed(cand)
            if word[0] != cand[0] and limit < 2:
                continue
            d = dl_distance(word, cand, limit)
            if d <= limit and (best is None or (d, cand) < best):
                best = (d, cand)
    return best[1] if best else None


def _korean_tags(tok: str) -> tuple[frozenset[str], tuple[tuple[int, str], ...]]:
    lex = lexicon()
    found: list[tuple[int, str]] = []
    for stem, tag in lex.k_stems:
        start = tok.find(stem)
        while start >= 0:
            found.append((start, tag))
            start = tok.find(stem, start + 1)
    if not found:
        return _EMPTY, ()
    found.sort()
    tags = {t for _, t in found}
    if tok.endswith(lex.k_imperative):
        tags.add("K_IMPER")
    return frozenset(tags), tuple(found)


def _fragments() -> set[str]:
    if not _FRAGMENTS:
        # prefixes of the override verbs that are not common words themselves
        lex = lexicon()
        for w in lex.ign_base:
            for i in range(2, len(w) - 2):
                if w[:i] not in lex.fragment_stoplist:
                    _FRAGMENTS.add(w[:i])
    return _FRAGMENTS


def classify(tok: str) -> TokenInfo:
    """Tags of one sub-token (memoised)."""
    info = _MEMO.get(tok)
    if info is not None:
        return info
    norm = norm_token(tok)
    if _HANGUL_RE.match(norm):
        tags, ordered = _korean_tags(norm)
        info = TokenInfo(norm, tags, ordered=ordered)
    else:
        words = lexicon().words
        _, exact, _ = catalog.tool_names()
        tags_set: set[str] = set()
        tool = exact.get(norm, "")
        if tool:
            tags_set.add("TOOL")
        if norm in words:
            word = norm
        else:
            word = fuzzy(norm) or ""
            if not tool and word == "" and len(norm) >= 8:
                for ident, name in exact.items():
                    if norm[0] == ident[0] and dl_distance(norm, ident, 1) <= 1:
                        tool = name
                        tags_set.add("TOOL")
                        break
        if word:
            tags_set |= words[word]
        info = TokenInfo(
            norm, frozenset(tags_set), word=word, tool=tool, fragment=norm in _fragments()
        )
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[tok] = info
    return info


def classify_raw(raw: str) -> RawInfo:
    """Sub-tokens and hints of one whitespace-separated word (memoised)."""
    info = _RAW_MEMO.get(raw)
    if info is not None:
        return info
    clean = raw if raw.isascii() else INVIS_RE.sub("", raw)
    subs = TOKEN_RE.findall(clean)
    if len(subs) >= 2:
        joined = classify("".join(subs))
        if joined.tags & ANCHORS or (len(subs) >= 3 and all(len(x) == 1 for x in subs)):
            subs = ["".join(subs)]
    infos = tuple(classify(x) for x in subs)
    rules = hinted_rules(raw.lower(), tuple(i.norm for i in infos))
    anchor = any(i.tags & ANCHORS or i.fragment for i in infos)
    info = RawInfo(
        infos, bool(rules) or anchor, len(subs) == 1 and len(subs[0]) == 1, rules, anchor
    )
    if len(_RAW_MEMO) >= _MEMO_LIMIT:
        _RAW_MEMO.clear()
    _RAW_MEMO[raw] = info
    return info

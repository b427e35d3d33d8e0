"""``inspect_injection``: deterministic prompt-injection signals in external text (no model).

Kinds and confidence (as seed 002): role_impersonation, instruction_override, tool_directive
(high); authority_claim, exfiltration_hint (medium); delimiter_break (low). A bare mention of a
tool's identifier with no directive around it is a medium tool_directive.

How it stays robust without a model:

- Words are compared after per-token normalisation: NFKC (full-width letters), case folding,
  Cyrillic/Greek look-alikes mapped to Latin, leetspeak digits inside words (``1gn0re``).
- Typos: a token within Damerau-Levenshtein distance 1 (2 for words of 9+ letters) of a lexicon
  word counts as that word (``ignroe``, ``previus``, ``instrucitons``).
- Spacing tricks: zero-width characters inside words are removed, letter-spaced runs
  (``i g n o r e``, ``I.G.N.O.R.E``) are joined, words split in two (``ign ore``) are rejoined
  when the halves form a lexicon word, and text spelled with Unicode tag characters is decoded
  and scanned as a scope of its own.
- Rules are co-occurrence rules over a small window of tokens, so single words common in
  financial text (``directive``, ``instruction``, ``Assistant Secretary``, ``authorized``) never
  fire alone.
- Korean: stems inside Hangul tokens (``지시를``, ``무시하세요``, ``이전지시를무시하고``) with
  Korean word order.

Speed: the text is tokenised once with one regex; each distinct token is classified once
(memoised across calls); rules run only around the rare anchor tokens; the per-character offset
work happens only when a candidate signal exists.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from typing import Any, Literal

from refgate.provenance.unicode_scan import CONFUSABLES, decode_tags

Confidence = Literal["high", "medium", "low"]
_RANK = {"high": 3, "medium": 2, "low": 1}
KINDS = (
    "role_impersonation",
    "instruction_override",
    "tool_directive",
    "authority_claim",
    "exfiltration_hint",
    "delimiter_break",
)
MAX_EXCERPT = 200


@dataclass(frozen=True)
class InjectionSignal:
    kind: str
    confidence: Confidence
    excerpt: str
    span: tuple[int, int]
    scope: str = "text"
    rule: str = ""

    def as_dict(self, *, excerpt: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "confidence": self.confidence,
            "span": list(self.span),
            "scope": self.scope,
            "rule": self.rule,
        }
        if excerpt:
            out["excerpt"] = self.excerpt
        return out


@dataclass
class InjectionReport:
    signals: list[InjectionSignal] = field(default_factory=list)
    scopes: list[str] = field(default_factory=lambda: ["text"])

    @property
    def clean(self) -> bool:
        return not self.signals

    @property
    def signal_count(self) -> int:
        return len(self.signals)

    @property
    def highest_confidence(self) -> Confidence | None:
        if not self.signals:
            return None
        return max((s.confidence for s in self.signals), key=_RANK.__getitem__)

    def kinds(self) -> set[str]:
        return {s.kind for s in self.signals}

    def as_dict(self, *, excerpts: bool = True) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "signalCount": self.signal_count,
            "highestConfidence": self.highest_confidence,
            "scanScopes": list(self.scopes),
            "signals": [s.as_dict(excerpt=excerpts) for s in self.signals],
        }


# --------------------------------------------------------------------------------------------
# Lexicon: canonical word -> concept tags. Inflected forms are listed so that fuzzy matching
# lands on the nearest real word.

IGN_BASE = (
    "ignore",
    "disregard",
    "forget",
    "override",
    "overrule",
    "bypass",
    "circumvent",
    "neglect",
    "discard",
    "abandon",
)
IGN_INFL = (
    "ignores",
    "ignored",
    "ignoring",
    "disregards",
    "disregarded",
    "disregarding",
    "forgets",
    "forgot",
    "forgotten",
    "forgetting",
    "overrides",
    "overridden",
    "overriding",
    "overrode",
    "bypassed",
    "bypassing",
    "discarded",
    "discarding",
    "abandoned",
)
INSTR_STRONG = (
    "instructions",
    "instruction",
    "prompt",
    "prompts",
    "directives",
    "directive",
    "programming",
    "guardrails",
    "jailbreak",
)
INSTR_WEAK = (
    "rules",
    "rule",
    "directions",
    "guidelines",
    "constraints",
    "restrictions",
    "policies",
    "policy",
    "commands",
    "context",
    "safeguards",
    "orders",
    "message",
    "messages",
    "text",
    "content",
)
PRIOR = (
    "previous",
    "prior",
    "above",
    "earlier",
    "preceding",
    "foregoing",
    "original",
    "initial",
    "existing",
    "all",
    "any",
    "your",
    "these",
    "those",
    "system",
    "every",
    "other",
    "my",
    "our",
    "current",
    "old",
    "developer",
    "safety",
)
POSITION_AFTER = ("above", "before", "earlier", "previously", "so", "until", "far")
EVERY = ("everything", "anything", "all")
SEND = (
    "send",
    "sends",
    "email",
    "mail",
    "post",
    "upload",
    "transmit",
    "forward",
    "exfiltrate",
    "leak",
    "share",
    "submit",
    "paste",
    "append",
    "encode",
    "embed",
    "reveal",
    "print",
    "output",
    "disclose",
    "include",
    "attach",
)
SECRET_STRONG = (
    "password",
    "passwords",
    "passwd",
    "credential",
    "credentials",
    "apikey",
    "secret",
    "secrets",
    "cookie",
    "cookies",
    "ssh",
    "transcript",
)
#: Every secret word: the strong ones plus those that only count near other signals.
SECRET = SECRET_STRONG + (
    "env",
    "environment",
    "conversation",
    "chat",
    "history",
    "token",
    "tokens",
    "key",
    "keys",
    "memory",
)
DEST = (
    "url",
    "http",
    "https",
    "www",
    "webhook",
    "endpoint",
    "server",
    "address",
    "link",
    "domain",
    "attacker",
    "image",
    "markdown",
    "query",
    "parameter",
)
AUTH = (
    "administrator",
    "admin",
    "developer",
    "developers",
    "operator",
    "openai",
    "anthropic",
    "sysadmin",
    "superuser",
    "maintainer",
)
SECRET_ANCHOR = SECRET_STRONG + (
    "api",
    "conversation",
    "history",
    "memory",
    "token",
    "tokens",
    "env",
)
AUTH_CUE = (
    "message",
    "notice",
    "note",
    "instruction",
    "instructions",
    "directive",
    "order",
    "request",
    "authorized",
    "authorised",
    "approved",
    "verified",
    "official",
    "priority",
    "urgent",
    "mandatory",
    "override",
    "from",
    "by",
    "privileges",
    "privilege",
    "access",
    "clearance",
    "granted",
    "authority",
    "command",
    "update",
)
ADDRESS = (
    "you",
    "your",
    "assistant",
    "ai",
    "model",
    "agent",
    "llm",
    "chatbot",
    "bot",
    "gpt",
    "claude",
    "chatgpt",
    "refgate",
)
VERB = (
    "call",
    "use",
    "invoke",
    "run",
    "execute",
    "trigger",
    "save",
    "write",
    "store",
    "create",
    "send",
    "remember",
    "record",
    "fetch",
    "open",
    "calling",
    "using",
    "must",
    "please",
    "now",
    "immediately",
    "then",
    "next",
)
TOOLWORD = ("tool", "tools", "function", "functions", "command")
FORMS_BASE = set(IGN_BASE)

#: Minimum length for fuzzy matching, and the distance allowed by word length.
_FUZZY_MIN = 6

_LEX: dict[str, set[str]] = {}


def _add(words: tuple[str, ...] | list[str], tag: str) -> None:
    for w in words:
        _LEX.setdefault(w, set()).add(tag)


_add(IGN_BASE, "IGN")
_add(IGN_BASE, "IGN_BASE")
_add(IGN_INFL, "IGN")
_add(INSTR_STRONG, "INSTR")
_add(INSTR_STRONG, "INSTR_STRONG")
_add(INSTR_WEAK, "INSTR")
_add(PRIOR, "PRIOR")
_add(POSITION_AFTER, "POS")
_add(EVERY, "EVERY")
_add(SEND, "SEND")
_add(SECRET, "SECRET")
_add(SECRET_STRONG, "SECRET_STRONG")
_add(SECRET_ANCHOR, "SECRET_ANCHOR")
_add(DEST, "DEST")
_add(AUTH, "AUTH")
_add(AUTH_CUE, "AUTH_CUE")
_add(ADDRESS, "ADDR")
_add(tuple(w for w in ADDRESS if w not in ("you", "your")), "ADDR_AI")
_add(
    (
        "override",
        "mandatory",
        "priority",
        "urgent",
        "privileges",
        "privilege",
        "clearance",
        "authority",
        "command",
        "instruction",
        "instructions",
        "directive",
        "order",
    ),
    "AUTH_STRONG",
)
_add(VERB, "VERB")
_add(TOOLWORD, "TOOLWORD")

#: Tags that start a rule check (everything else is only looked at around an anchor).
ANCHORS = {"IGN", "TOOL", "AUTH", "SECRET_ANCHOR", "K_IGN", "K_AUTH", "K_SEND"}

#: Words that may be fuzzily matched (long enough, and not too close to common words).
_NO_FUZZY = {
    "passwd",
    "conversation",
    "passwords",
    "password",
    "policy",
    "policies",
    "orders",
    "message",
    "messages",
    "content",
    "context",
    "system",
    "record",
    "create",
    "output",
    "include",
    "remember",
    "memory",
    "history",
    "address",
    "server",
    "domain",
    "parameter",
    "tokens",
    "attach",
    "security",
    "access",
    "request",
    "update",
    "directive",
    "directives",
    "forward",
    "secrets",
    "secret",
    "developer",
    "developers",
    "operator",
    "owner",
    "creator",
    "reveal",
    "encode",
    "embed",
    "submit",
    "upload",
    "immediately",
    "markdown",
    "previously",
    "foregoing",
    "existing",
    "initial",
    "original",
    "current",
    "other",
    "mandatory",
    "priority",
    "official",
    "verified",
    "approved",
    "authorized",
    "authorised",
    "notice",
    "transmit",
    "cookies",
    "cookie",
    "maintainer",
    "privilege",
    "privileges",
    "clearance",
    "granted",
    "authority",
    "command",
    "commands",
    "function",
    "functions",
    "calling",
    "execute",
    "trigger",
    "invoke",
    "rules",
    "abandon",
    "abandoned",
    "neglect",
    "discard",
    "discarded",
    "discarding",
    "staff",
    "attacker",
    "webhook",
    "endpoint",
    "chatbot",
    "safety",
    "anthropic",
    "openai",
    "superuser",
    "sysadmin",
    "administrator",
    "transcript",
    "programming",
}

# Korean stems found inside Hangul tokens, with their tags.
K_STEMS: tuple[tuple[str, str], ...] = (
    ("무시", "K_IGN"),
    ("잊어", "K_IGN"),
    ("잊고", "K_IGN"),
    ("잊으", "K_IGN"),
    ("잊을", "K_IGN"),
    ("무효", "K_IGN"),
    ("따르지", "K_IGN"),
    ("우회", "K_IGN"),
    ("지시", "K_INSTR"),
    ("명령", "K_INSTR"),
    ("지침", "K_INSTR"),
    ("규칙", "K_INSTR"),
    ("프롬프트", "K_INSTR"),
    ("제약", "K_INSTR"),
    ("제한", "K_INSTR"),
    ("가이드라인", "K_INSTR"),
    ("이전", "K_PRIOR"),
    ("앞의", "K_PRIOR"),
    ("앞서", "K_PRIOR"),
    ("위의", "K_PRIOR"),
    ("위에", "K_PRIOR"),
    ("기존", "K_PRIOR"),
    ("모든", "K_PRIOR"),
    ("지금까지", "K_PRIOR"),
    ("원래", "K_PRIOR"),
    ("시스템", "K_PRIOR"),
    ("관리자", "K_AUTH"),
    ("개발자", "K_AUTH"),
    ("운영자", "K_AUTH"),
    ("보안팀", "K_AUTH"),
    ("운영팀", "K_AUTH"),
    ("승인", "K_AUTH_CUE"),
    ("공식", "K_AUTH_CUE"),
    ("권한", "K_AUTH_CUE"),
    ("긴급", "K_AUTH_CUE"),
    ("명령", "K_AUTH_CUE"),
    ("지시", "K_AUTH_CUE"),
    ("메시지", "K_AUTH_CUE"),
    ("공지", "K_AUTH_CUE"),
    ("너", "K_ADDR"),
    ("당신", "K_ADDR"),
    ("에이전트", "K_ADDR"),
    ("모델", "K_ADDR"),
    ("어시스턴트", "K_ADDR"),
    ("인공지능", "K_ADDR"),
    ("귀하", "K_ADDR"),
    ("보내", "K_SEND"),
    ("전송", "K_SEND"),
    ("업로드", "K_SEND"),
    ("유출", "K_SEND"),
    ("첨부", "K_SEND"),
    ("공유", "K_SEND"),
    ("출력", "K_SEND"),
    ("알려", "K_SEND"),
    ("비밀번호", "K_SECRET"),
    ("암호", "K_SECRET"),
    ("토큰", "K_SECRET"),
    ("대화", "K_SECRET"),
    ("환경변수", "K_SECRET"),
    ("개인정보", "K_SECRET"),
    ("자격", "K_SECRET"),
    ("키", "K_SECRET"),
    ("주소", "K_DEST"),
    ("서버", "K_DEST"),
    ("링크", "K_DEST"),
    ("이메일", "K_DEST"),
    ("호출", "K_TOOLV"),
    ("실행", "K_TOOLV"),
    ("사용", "K_TOOLV"),
    ("저장", "K_TOOLV"),
    ("기록", "K_TOOLV"),
    ("도구", "K_TOOLWORD"),
    ("함수", "K_TOOLWORD"),
)
K_IMPERATIVE = ("하세요", "해라", "하라", "하십시오", "해주세요", "해줘", "해요", "하시오", "해")
_HANGUL_RE = re.compile("[가-힣]")


# --------------------------------------------------------------------------------------------
# Tool names come from the catalog (never a second hard-coded list).


@lru_cache(maxsize=1)
def _tool_names() -> tuple[tuple[str, ...], dict[str, str], dict[tuple[str, str], str]]:
    """(all names, exact normalised identifier -> name, split (first, second) -> name)."""
    from refgate.tools.registry import CATALOG

    names = tuple(CATALOG)
    exact: dict[str, str] = {}
    split: dict[tuple[str, str], str] = {}
    for name in names:
        parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
        parts = [p for p in parts if p] or [name.lower()]
        joined = "".join(parts)
        if len(parts) >= 2 or len(joined) >= 8:
            exact[joined] = name
        if len(parts) == 2:
            split[(parts[0], parts[1])] = name
    return names, exact, split


def _generic_tool_names() -> list[str]:
    """Catalog names that are plain words (``read``): only explicit call syntax counts."""
    names, exact, _ = _tool_names()
    taken = set(exact.values())
    return [n for n in names if n not in taken]


# --------------------------------------------------------------------------------------------
# Token normalisation and classification.

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"})
_CONF = str.maketrans(CONFUSABLES)
_HANGUL_BLOCK = "가-힣ㄱ-ㅎㅏ-ㅣ"
TOKEN_RE = re.compile(f"[{_HANGUL_BLOCK}]+|[^\\W_{_HANGUL_BLOCK}]+")


def _norm_token(tok: str) -> str:
    if not tok.isascii():
        tok = unicodedata.normalize("NFKC", tok).translate(_CONF)
    tok = tok.casefold()
    if not tok.isalpha() and any(c.isalpha() for c in tok):
        tok = tok.translate(_LEET)
    return tok


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _allowed(word: str) -> int:
    if word in _NO_FUZZY or len(word) < _FUZZY_MIN:
        return 0
    return 2 if len(word) >= 9 else 1


_FUZZY_INDEX: dict[str, set[str]] = {}


def _build_fuzzy() -> None:
    for word in _LEX:
        budget = _allowed(word)
        if not budget:
            continue
        keys = {word} | _deletes(word)
        if budget == 2:
            keys |= {d2 for d in _deletes(word) for d2 in _deletes(d)}
        for key in keys:
            _FUZZY_INDEX.setdefault(key, set()).add(word)


def _dl_distance(a: str, b: str, limit: int) -> int:
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


def _fuzzy(word: str) -> str | None:
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
            d = _dl_distance(word, cand, limit)
            if d <= limit and (best is None or (d, cand) < best):
                best = (d, cand)
    return best[1] if best else None


_EMPTY: frozenset[str] = frozenset()


def _korean_tags(tok: str) -> tuple[frozenset[str], tuple[tuple[int, str], ...]]:
    found: list[tuple[int, str]] = []
    for stem, tag in K_STEMS:
        start = tok.find(stem)
        while start >= 0:
            found.append((start, tag))
            start = tok.find(stem, start + 1)
    if not found:
        return _EMPTY, ()
    found.sort()
    tags = {t for _, t in found}
    if tok.endswith(K_IMPERATIVE):
        tags.add("K_IMPER")
    return frozenset(tags), tuple(found)


@dataclass(frozen=True)
class TokenInfo:
    norm: str
    tags: frozenset[str]
    word: str = ""  # canonical lexicon word (exact or fuzzy)
    tool: str = ""  # catalog tool named by this token
    ordered: tuple[tuple[int, str], ...] = ()  # Korean: (offset, tag) in token order
    fragment: bool = False


_MEMO: dict[str, TokenInfo] = {}
_MEMO_LIMIT = 200_000
_FRAGMENTS: set[str] = set()


def _fragments() -> set[str]:
    if not _FRAGMENTS:
        # prefixes of the override verbs that are not common words themselves
        common = {"for", "over", "dis", "disc", "aba", "neg", "circ", "forge", "byp"}
        for w in IGN_BASE:
            for i in range(3, len(w) - 2):
                if w[:i] not in common:
                    _FRAGMENTS.add(w[:i])
    return _FRAGMENTS


def classify(tok: str) -> TokenInfo:
    """Tags of one raw token (memoised)."""
    info = _MEMO.get(tok)
    if info is not None:
        return info
    norm = _norm_token(tok)
    if _HANGUL_RE.match(norm):
        tags, ordered = _korean_tags(norm)
        info = TokenInfo(norm, tags, ordered=ordered)
    else:
        _, exact, split = _tool_names()
        tags_set: set[str] = set()
        word = ""
        tool = exact.get(norm, "")
        if tool:
            tags_set.add("TOOL")
        if norm in _LEX:
            word = norm
        else:
            word = _fuzzy(norm) or ""
            if not tool and word == "" and len(norm) >= 8:
                for ident, name in exact.items():
                    if norm[0] == ident[0] and _dl_distance(norm, ident, 1) <= 1:
                        tool = name
                        tags_set.add("TOOL")
                        break
        if word:
            tags_set |= _LEX[word]
        info = TokenInfo(
            norm, frozenset(tags_set), word=word, tool=tool, fragment=norm in _fragments()
        )
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[tok] = info
    return info


# --------------------------------------------------------------------------------------------
# Raw tokens are whitespace-separated words (``str.split``, fast); each distinct raw token is
# classified once into sub-tokens (punctuation splits words, invisible characters are dropped,
# ``i.g.n.o.r.e`` / ``save_artifact`` are joined when the joined word is in the lexicon).

_INVIS = "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u034f\u202a-\u202e\u2066-\u2069"
_INVIS_RE = re.compile(f"[{_INVIS}\U000e0000-\U000e007f]")
_TAG_RUN_RE = re.compile("[\U000e0000-\U000e007f]+")
_RAW_TOKEN_RE = re.compile(r"\S+")


@dataclass(frozen=True)
class RawInfo:
    subs: tuple[TokenInfo, ...]
    hot: bool  # holds an anchor or a word fragment, or hints at a regex rule
    single: bool  # one letter or digit (letter-spaced runs)
    rules: frozenset[int] = frozenset()  # regex rules this word hints at
    anchor: bool = False  # starts a token-rule check


_RAW_MEMO: dict[str, RawInfo] = {}


def classify_raw(raw: str) -> RawInfo:
    info = _RAW_MEMO.get(raw)
    if info is not None:
        return info
    clean = raw if raw.isascii() else _INVIS_RE.sub("", raw)
    subs = TOKEN_RE.findall(clean)
    if len(subs) >= 2:
        joined = classify("".join(subs))
        if joined.tags & ANCHORS or (len(subs) >= 3 and all(len(x) == 1 for x in subs)):
            subs = ["".join(subs)]
    infos = tuple(classify(x) for x in subs)
    rules = _hinted_rules(raw.lower(), tuple(i.norm for i in infos))
    anchor = any(i.tags & ANCHORS or i.fragment for i in infos)
    info = RawInfo(
        infos, bool(rules) or anchor, len(subs) == 1 and len(subs[0]) == 1, rules, anchor
    )
    if len(_RAW_MEMO) >= _MEMO_LIMIT:
        _RAW_MEMO.clear()
    _RAW_MEMO[raw] = info
    return info


# --------------------------------------------------------------------------------------------
# Regex rules: structure that words alone do not show (punctuation, chat templates, labels).
# A rule runs only on the few words around a raw token that hints at it (a substring such as
# ``<|`` or a word such as ``pretend``), on the window's words joined by single spaces.

_ROLE_WORDS = r"(?:system|developer|assistant|sys|admin|administrator|root|시스템|개발자|관리자)"


@dataclass(frozen=True)
class RegexRule:
    kind: str
    confidence: Confidence
    name: str
    pattern: re.Pattern[str]
    substrings: tuple[str, ...] = ()
    words: tuple[str, ...] = ()


REGEX_RULES: tuple[RegexRule, ...] = (
    RegexRule(
        "role_impersonation",
        "high",
        "chat_template",
        re.compile(
            r"<\|\s*(?:im_start|system|user|assistant|start_header_id)\s*\|>|\[/?INST\]"
            r"|<</?SYS>>|<start_of_turn>|<\|begin_of_text\|>",
            re.I,
        ),
        substrings=("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "<start_of_turn>"),
    ),
    RegexRule(
        "role_impersonation",
        "high",
        "role_label",
        re.compile(
            rf"(?<![\w'’-]){_ROLE_WORDS}(?:\s+(?:message|prompt|note|notice|override|update|"
            r"instructions?|mode|메시지|프롬프트|공지))?\s*[\])>}]*\s*[:：]",
            re.I,
        ),
        # hinted by a word with a colon (see _hinted_rules)
    ),
    RegexRule(
        "role_impersonation",
        "high",
        "role_tag",
        re.compile(r"<\s*(?:system|developer|assistant|instructions?|admin)\s*>", re.I),
        substrings=("<system", "<developer", "<assistant", "<instruction", "<admin", "< "),
    ),
    RegexRule(
        "role_impersonation",
        "high",
        "identity_reassign",
        re.compile(
            r"\b(?:you|u)\s*(?:are|r|['’]re)\s+(?:now|no\s+longer|henceforth|from\s+now\s+on)\b"
            r"[^.!?\n]{0,60}?\b(?:dan|developer\s+mode|jailbr\w*|unrestricted|uncensored|"
            r"unfiltered|evil|sudo|root|admin\w*|god\s+mode|system|do\s+anything|an?\s+ai|"
            r"an?\s+assistant|chatbot|free\s+of|without\s+(?:any\s+)?(?:rules|restrictions|"
            r"limits))\b",
            re.I,
        ),
        words=("you", "you're", "youre"),
    ),
    RegexRule(
        "role_impersonation",
        "high",
        "act_as",
        re.compile(
            r"\b(?:act|acting|behave|respond|pretend|roleplay|role-play)\s+(?:as|like|to\s+be|"
            r"you\s+are)\s+(?:an?\s+|the\s+)?(?:dan|unrestricted|uncensored|unfiltered|"
            r"jailbr\w*|evil|system|sudo|root\s+user|developer\s+mode|ai\s+without|chatbot\s+"
            r"without|llm|god\s+mode)",
            re.I,
        ),
        words=("act", "acting", "behave", "respond", "pretend", "roleplay", "role"),
    ),
    RegexRule(
        "role_impersonation",
        "high",
        "korean_identity",
        re.compile(
            r"(?:(?:너|당신|넌|귀하)\s*(?:는|은)?\s*(?:이제|지금부터|이제부터|앞으로)|"
            r"(?:이제|지금부터|이제부터|앞으로)\s*(?:너|당신|넌|귀하)\s*(?:는|은)?)"
            r"[^.!?\n]{0,30}?(?:역할|모드|관리자|개발자|시스템|제한\s*없|DAN|무제한|탈옥|"
            r"어시스턴트가\s*아니)"
        ),
        substrings=("너", "당신", "넌", "귀하"),
    ),
    RegexRule(
        "instruction_override",
        "high",
        "new_instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|true|revised|secret|hidden|override)\s+(?:system\s+)?"
            r"(?:instructions?|rules|task|prompt|directives?)\s*(?:are|is|follow|below)?\s*[:：]"
            r"|(?:새로운|진짜|실제|숨겨진|변경된)\s*(?:지시|지침|명령|규칙|임무|프롬프트)\w{0,4}\s*[:：]",
            re.I,
        ),
        # hinted by a word with a colon (see _hinted_rules)
    ),
    RegexRule(
        "instruction_override",
        "high",
        "do_not_follow",
        re.compile(
            r"\b(?:do\s*n[o']t|never|stop)\s+(?:follow(?:ing)?|obey(?:ing)?|listen(?:ing)?\s+to)"
            r"\s+(?:the\s+|any\s+|your\s+)?(?:previous\s+|prior\s+|above\s+|original\s+|system\s+"
            r"|earlier\s+)*(?:instructions?|rules|prompt|guidelines|directives)",
            re.I,
        ),
        words=("follow", "obey", "listen", "obeying"),
    ),
    RegexRule(
        "exfiltration_hint",
        "medium",
        "templated_url",
        re.compile(
            # The query part starts at the first ? or & (one way to split, so no backtracking
            # over every split); a collector host counts within the first 512 characters of a
            # URL (unbounded, each "http" of a long run re-scanned the rest: quadratic).
            r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s?&]*[?&][^)\s]*?(?:\{|%7b|<|\$)"
            r"|https?://[^\s\"'<>]{0,512}?(?:webhook\.site|requestbin|ngrok|pipedream|"
            r"burpcollaborator|interact\.sh|oast\.)",
            re.I,
        ),
        substrings=("http",),
    ),
    RegexRule(
        "delimiter_break",
        "low",
        "fence_or_end_marker",
        re.compile(
            r"⟦\s*/?\s*untrusted|\[\s*/?\s*(?:external|untrusted)\s+content\s+(?:start|end)"
            r"|\bend\s+of\s+(?:the\s+)?(?:untrusted|external|retrieved|tool)\s+"
            r"(?:content|data|text|document|output|result)"
            r"|</\s*(?:document|untrusted|context|data|external|content|tool_result|tool_output|"
            r"search_results?|function_results?|user|system|assistant)\s*>"
            r"|<\|\s*(?:im_end|endoftext|eot_id|end)\s*\|>"
            r"|-{3,}\s*end\s+of\s+(?:document|context|input|data|file)\b"
            r"|(?:외부\s*콘텐츠|신뢰할\s*수\s*없는\s*(?:내용|데이터))\s*(?:끝|종료)",
            re.I,
        ),
        substrings=("⟦", "untrusted", "</", "<|", "---", "외부", "신뢰할"),
        words=("untrusted", "external", "retrieved"),
    ),
)


@lru_cache(maxsize=8)
def _generic_tool_rule(name: str) -> RegexRule:
    q = re.escape(name)
    return RegexRule(
        "tool_directive",
        "high",
        f"generic_tool_call:{name}",
        re.compile(
            rf"\b(?:call|use|invoke|run|execute)\s+(?:the\s+)?[`'\"]?{q}[`'\"]?\s+(?:tool|function)\b"
            rf"|[`'\"]{q}[`'\"]\s*(?:tool|function)\b|\"name\"\s*:\s*\"{q}\"|\b{q}\s*\(\s*[{{\"'`]",
            re.I,
        ),
        words=(name.lower(),),
    )


@lru_cache(maxsize=64)
def _split_tool_rule(first: str, second: str) -> RegexRule:
    return RegexRule(
        "tool_directive",
        "high",
        f"tool_named_split:{first}{second}",
        re.compile(rf"\b{re.escape(first)}[ \t_\-.·]{{1,3}}{re.escape(second)}\b", re.I),
        words=(first,),
    )


@lru_cache(maxsize=1)
def _all_regex_rules() -> tuple[RegexRule, ...]:
    _, _, split = _tool_names()
    extra = [_generic_tool_rule(n) for n in _generic_tool_names()]
    extra += [_split_tool_rule(a, b) for a, b in split]
    return REGEX_RULES + tuple(extra)


_COLON_WORDS = {
    "system",
    "developer",
    "assistant",
    "sys",
    "admin",
    "administrator",
    "root",
    "시스템",
    "개발자",
    "관리자",
    "message",
    "prompt",
    "note",
    "notice",
    "override",
    "update",
    "instruction",
    "instructions",
    "mode",
    "rules",
    "task",
    "directive",
    "directives",
    "메시지",
    "프롬프트",
    "공지",
}
_COLON_STEMS = ("지시", "지침", "명령", "규칙", "임무", "프롬프트")


def _hinted_rules(raw_lower: str, norms: tuple[str, ...]) -> frozenset[int]:
    out = set()
    colon = (":" in raw_lower or "：" in raw_lower) and (
        any(n in _COLON_WORDS for n in norms) or any(st in raw_lower for st in _COLON_STEMS)
    )
    for k, rule in enumerate(_all_regex_rules()):
        if rule.name in ("role_label", "new_instructions"):
            if colon:
                out.add(k)
        elif any(sub in raw_lower for sub in rule.substrings) or any(
            n in rule.words for n in norms
        ):
            out.add(k)
    return frozenset(out)


def _directive_context(window: str) -> bool:
    """A spaced tool name (``Save Artifact``) counts only beside a verb and the word tool."""
    tags: set[str] = set()
    for tok in TOKEN_RE.findall(window):
        tags |= classify(tok).tags
    return bool(tags & {"VERB", "K_TOOLV"}) and bool(tags & {"TOOLWORD", "K_TOOLWORD"})


_LABEL_PUNCT_RE = re.compile(r"^[\[\](){}<>*#|\-=_~]+|[\[\](){}<>*#|\-=_~:：]+$")
_LINE_START_RE = re.compile(r"(?m)^[ \t>*#\[(<{|\-=_~]*(\S+)")


def _regex_window_hits(
    tokens: list[str], lo: int, hi: int, rule_ids: set[int], text: str, state: dict[str, Any]
) -> list[tuple[str, Confidence, str, int, int]]:
    """Regex rule hits in tokens[lo:hi] as (kind, confidence, rule, first token, last token)."""
    words = tokens[lo:hi]
    window = " ".join(words)
    starts = []
    pos = 0
    for w in words:
        starts.append(pos)
        pos += len(w) + 1
    rules = _all_regex_rules()
    hits = []
    for k in sorted(rule_ids):
        rule = rules[k]
        for m in rule.pattern.finditer(window):
            a = _token_at(starts, m.start())
            b = _token_at(starts, max(m.start(), m.end() - 1))
            if rule.name.startswith("tool_named_split") and not _directive_context(
                " ".join(words[max(0, a - 8) : b + 9])
            ):
                continue
            if rule.name == "role_label" and not _is_label(words, a, text, state):
                continue
            hits.append((rule.kind, rule.confidence, rule.name.split(":")[0], lo + a, lo + b))
    return hits


def _token_at(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _is_label(words: list[str], a: int, text: str, state: dict[str, Any]) -> bool:
    """A role word followed by a colon speaks as that role when it starts a line or a sentence,
    or is written in capitals (``SYSTEM:``)."""
    word = words[a]
    core = _LABEL_PUNCT_RE.sub("", word)
    if core.isupper() and len(core) > 1:
        return True
    if a == 0 and state.get("window_start_is_text_start"):
        return True
    if a > 0 and words[a - 1][-1:] in ".!?]})>⟧\"'":
        return True
    if "line_starts" not in state:
        state["line_starts"] = {m.group(1) for m in _LINE_START_RE.finditer(text)}
    return word in state["line_starts"]


# --------------------------------------------------------------------------------------------
# Token rules.


def _window(infos: list[TokenInfo], lo: int, hi: int) -> range:
    return range(max(0, lo), min(len(infos), hi))


def _has(infos: list[TokenInfo], rng: range, tag: str) -> int:
    for j in rng:
        if tag in infos[j].tags:
            return j
    return -1


def _token_rule_hits(
    infos: list[TokenInfo], centers: list[int]
) -> list[tuple[str, Confidence, str, int, int]]:
    """(kind, confidence, rule, first token, last token) for each rule firing at a center."""
    hits: list[tuple[str, Confidence, str, int, int]] = []
    for i in centers:
        info = infos[i]
        tags = info.tags
        if not tags & ANCHORS:
            continue
        if "IGN" in tags:
            j = _has(infos, _window(infos, i + 1, i + 7), "INSTR")
            if j >= 0:
                between = range(i + 1, j)
                strong = "INSTR_STRONG" in infos[j].tags and "IGN_BASE" in tags
                prior = _has(infos, between, "PRIOR") >= 0
                after = _has(infos, _window(infos, j + 1, j + 3), "POS") >= 0
                if prior or strong or after:
                    hits.append(("instruction_override", "high", "ignore_instructions", i, j))
                    continue
            j = _has(infos, _window(infos, i + 1, i + 5), "EVERY")
            if j >= 0:
                k = _has(infos, _window(infos, j + 1, j + 5), "POS")
                if k < 0:
                    k = _has(infos, _window(infos, j + 1, j + 4), "PRIOR")
                    if k >= 0 and infos[k].word not in (
                        "previous",
                        "prior",
                        "above",
                        "earlier",
                        "preceding",
                        "foregoing",
                    ):
                        k = -1
                if k >= 0:
                    hits.append(("instruction_override", "high", "ignore_everything", i, k))
                    continue
        if "K_IGN" in tags:
            # Korean order: (prior) instructions ... ignore
            lo = i - 5
            j = -1
            for jj in range(i, max(-1, lo), -1):
                if "K_INSTR" in infos[jj].tags:
                    if jj == i:
                        pos = dict((t, o) for o, t in infos[i].ordered)
                        if pos.get("K_INSTR", 99) > pos.get("K_IGN", -1):
                            continue
                    j = jj
                    break
            if j >= 0:
                prior = any(
                    "K_PRIOR" in infos[k].tags or "PRIOR" in infos[k].tags
                    for k in range(max(0, j - 3), i + 1)
                )
                if prior or "K_IMPER" in tags:
                    hits.append(("instruction_override", "high", "korean_ignore", j, i))
                    continue
        if "TOOL" in tags:
            tool, last, split = info.tool, i, False
            if tool:
                rng = _window(infos, i - 6, last + 7)
                verb = any(
                    ("VERB" in infos[j].tags or "K_TOOLV" in infos[j].tags)
                    for j in rng
                    if j not in (i, last)
                )
                toolword = any(
                    ("TOOLWORD" in infos[j].tags or "K_TOOLWORD" in infos[j].tags) for j in rng
                )
                if split:
                    if verb and toolword:
                        hits.append(("tool_directive", "high", "tool_named_split", i, last))
                elif verb or toolword:
                    hits.append(("tool_directive", "high", "tool_named", i, last))
                else:
                    hits.append(("tool_directive", "medium", "tool_mentioned", i, last))
                continue
        if "AUTH" in tags or "K_AUTH" in tags:
            rng = _window(infos, i - 8, i + 9)
            cue = [j for j in rng if j != i and (infos[j].tags & {"AUTH_CUE", "K_AUTH_CUE"})]
            addr = [j for j in rng if infos[j].tags & {"ADDR", "K_ADDR"}]
            # "you" alone is everyday text; it needs a command-like cue, or an AI addressee
            strong = any(infos[j].tags & {"AUTH_STRONG", "K_AUTH_CUE"} for j in cue) or any(
                infos[j].tags & {"ADDR_AI"}
                or (infos[j].tags & {"K_ADDR"} and infos[j].norm[:1] not in ("너", "당"))
                for j in addr
            )
            if cue and addr and strong:
                lo, hi = min([i, *cue, *addr]), max([i, *cue, *addr])
                hits.append(("authority_claim", "medium", "authority_addresses_model", lo, hi))
                continue
        if "SECRET_ANCHOR" in tags or "K_SEND" in tags:
            rng = _window(infos, i - 8, i + 9)
            if "K_SEND" in tags:
                sec = [j for j in rng if "K_SECRET" in infos[j].tags]
                if sec and any("K_DEST" in infos[j].tags or "DEST" in infos[j].tags for j in rng):
                    hits.append(
                        (
                            "exfiltration_hint",
                            "medium",
                            "korean_send_secret",
                            min(i, *sec),
                            max(i, *sec),
                        )
                    )
                continue
            send = [j for j in rng if "SEND" in infos[j].tags]
            dest = [j for j in rng if "DEST" in infos[j].tags]
            strong = "SECRET_STRONG" in tags
            if send and (dest or (strong and _has(infos, rng, "ADDR") >= 0)):
                hits.append(
                    (
                        "exfiltration_hint",
                        "medium",
                        "send_secret",
                        min(i, *send),
                        max(i, *send, *dest),
                    )
                )
    return hits


# --------------------------------------------------------------------------------------------


def _excerpt(text: str, start: int, end: int) -> str:
    if end - start >= MAX_EXCERPT:
        return text[start : start + MAX_EXCERPT]
    pad = (MAX_EXCERPT - (end - start)) // 2
    lo = max(0, start - min(pad, 40))
    hi = min(len(text), end + min(pad, 40))
    return " ".join(text[lo:hi].split())[:MAX_EXCERPT]


_NO_RAW = RawInfo((), False, False)
_SEEN_RAW: set[str] = set()
_HOT_RAW: set[str] = set()
_SHORT_RUN_RE = re.compile(rb"[\x01-\x03]{3,}")
_WIN_BEFORE, _WIN_AFTER = 10, 12


def _token_hits(text: str) -> list[tuple[str, Confidence, str, int, int]]:
    tokens = text.split()
    if not tokens:
        return []
    uniq = set(tokens)
    new = uniq - _SEEN_RAW
    if new:
        if len(_SEEN_RAW) >= _MEMO_LIMIT:
            _SEEN_RAW.clear()
            _HOT_RAW.clear()
        for t in new:
            if classify_raw(t).hot:
                _HOT_RAW.add(t)
        _SEEN_RAW.update(new)
    hot = uniq & _HOT_RAW
    anchors = [i for i, t in enumerate(tokens) if t in hot] if hot else []
    override: dict[int, RawInfo] = {}
    run_end: dict[int, int] = {}
    # letter-spaced runs (``i g n o r e``): three or more one-character words in a row, found
    # on a byte string of token lengths (C speed)
    lengths = bytes(map(min, map(len, tokens), repeat(9)))
    for m in _SHORT_RUN_RE.finditer(lengths):
        run = [j for j in range(m.start(), m.end()) if classify_raw(tokens[j]).single]
        # split into consecutive single-letter stretches
        stretch: list[int] = []
        for j in [*run, -2]:
            if stretch and j == stretch[-1] + 1:
                stretch.append(j)
                continue
            if len(stretch) >= 3:
                joined = classify_raw("".join(tokens[k] for k in stretch))
                if joined.hot:
                    override[stretch[0]] = joined
                    run_end[stretch[0]] = stretch[-1]
                    for k in stretch[1:]:
                        override[k] = _NO_RAW
                    anchors.append(stretch[0])
            stretch = [j]
    if not anchors:
        return []
    anchors = sorted(set(anchors))
    raw_hits: list[tuple[str, Confidence, str, int, int]] = []
    state: dict[str, Any] = {}
    for i in anchors:
        hinted = classify_raw(tokens[i]).rules
        if hinted:
            rlo = max(0, i - 8)
            state["window_start_is_text_start"] = rlo == 0
            raw_hits += _regex_window_hits(
                tokens, rlo, min(len(tokens), i + 14), set(hinted), text, state
            )
        if not (i in override or classify_raw(tokens[i]).anchor):
            continue
        lo, hi = max(0, i - _WIN_BEFORE), min(len(tokens), run_end.get(i, i) + _WIN_AFTER)
        infos: list[TokenInfo] = []
        owner: list[int] = []
        for j in range(lo, hi):
            raw = override.get(j) or classify_raw(tokens[j])
            infos.extend(raw.subs)
            owner.extend([j] * len(raw.subs))
        # rejoin words split in two (``ign ore``)
        for k in range(len(infos) - 1):
            if infos[k].fragment:
                for extra in (1, 2):
                    if k + extra >= len(infos):
                        break
                    probe = classify("".join(infos[m].norm for m in range(k, k + extra + 1)))
                    if probe.tags & ANCHORS or "INSTR" in probe.tags:
                        infos[k] = probe
                        for m in range(k + 1, k + extra + 1):
                            infos[m] = TokenInfo("", _EMPTY)
                        break
        centers = [k for k, o in enumerate(owner) if o == i]
        for kind, conf, rule, a, b in _token_rule_hits(infos, centers):
            raw_hits.append((kind, conf, rule, owner[a], run_end.get(owner[b], owner[b])))
    if not raw_hits:
        return []
    offsets = [m.span() for m in _RAW_TOKEN_RE.finditer(text)]
    return [(k, c, r, offsets[a][0], offsets[b][1]) for k, c, r, a, b in raw_hits]


def _scan(text: str, scope: str, span_of: Any = None) -> list[InjectionSignal]:
    raw_hits = _token_hits(text)
    signals: list[InjectionSignal] = []
    seen: set[tuple[str, int, int]] = set()
    for kind, conf, rule, start, end in sorted(raw_hits, key=lambda h: (h[3], h[4])):
        if (kind, start, end) in seen:
            continue
        seen.add((kind, start, end))
        span = span_of(start, end) if span_of else (start, end)
        signals.append(InjectionSignal(kind, conf, _excerpt(text, start, end), span, scope, rule))
    return signals


def inspect_injection(text: str) -> InjectionReport:
    """Deterministic injection signals in ``text`` (English and Korean)."""
    if not text:
        return InjectionReport()
    signals = _scan(text, "text")
    scopes = ["text"]
    if not text.isascii():
        runs = list(_TAG_RUN_RE.finditer(text))
        hidden = [(m.span(), decode_tags(m.group())) for m in runs]
        hidden = [(s, h) for s, h in hidden if h.strip()]
        if hidden:
            scopes.append("tag_characters")
            joined = " ".join(h for _, h in hidden)
            bounds = []
            pos = 0
            for span, h in hidden:
                bounds.append((pos, pos + len(h), span))
                pos += len(h) + 1

            def to_original(start: int, end: int) -> tuple[int, int]:
                spans = [sp for lo, hi, sp in bounds if lo < end and start < hi]
                if not spans:
                    return hidden[0][0]
                return spans[0][0], spans[-1][1]

            signals += _scan(joined, "tag_characters", to_original)
    # one signal per kind and place: keep the highest confidence where spans overlap
    signals.sort(key=lambda s: (s.span[0], -_RANK[s.confidence]))
    merged: list[InjectionSignal] = []
    # Kept signals start at or before ``s``: a non-empty ``s`` overlaps one of its kind and scope
    # iff the furthest end among them passes its start (one look-up, not a scan of all kept).
    furthest: dict[tuple[str, str], int] = {}
    for s in signals:
        key = (s.kind, s.scope)
        if s.span[0] < s.span[1]:
            if furthest.get(key, -1) > s.span[0]:
                continue
        elif any(
            m.kind == s.kind
            and m.span[0] < s.span[1]
            and s.span[0] < m.span[1]
            and m.scope == s.scope
            for m in merged
        ):
            continue
        merged.append(s)
        if s.span[1] > furthest.get(key, -1):
            furthest[key] = s.span[1]
    return InjectionReport(signals=merged, scopes=scopes)

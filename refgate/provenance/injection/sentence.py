"""The sentence around a hit: text that mentions an attack (news, training, a quoted example)
rather than making it. A hit drops to low when its sentence has a mention cue before it
(English), a cue anywhere in it up to the hit's end (Korean cues are particles-attached
nouns: 공격은, 연구진은), or when it sits in quotes followed by a Korean quotative
('...무시하라'는 문구)."""

from __future__ import annotations

import re

from refgate.provenance.injection.lexicon import lexicon

_SENTENCE_END = re.compile(r"[.!?\n](?=[\s\"'“”‘’)\]]|$)")
_STRIP = "\"'“”‘’()[]{}<>,;:!?*"
_QUOTES = "\"'“”‘’「」『』"
_QUOTATIVE = re.compile(r"^[\"'”’」』]\s*(?:는|라는|이라는|라고|이라고|고|란|이란|와|과|같은)")
_LOOKBACK = 160
# a hit that is the complement of a directing verb with a model as object reports what someone
# made a model do ("tells the model to output 'PWNED'", "tricking the AI into revealing")
_DIRECTED_BEFORE = re.compile(
    r"\b(?:tell|instruct|ask|make|force|trick|cause|get|lead|convince|persuade|manipulat|"
    r"coax|push|steer)\w*\s+(?:the\s+|a\s+|an\s+|its\s+)?(?:\w+\s+)?(?:model|ai|chatbot|"
    r"assistant|agent|llm|bot|system|it|them)s?\s+(?:into\s+|to\s+)$",
    re.I,
)
_NOUN_AFTER = re.compile(
    r"\s*(?:-?style|type|kind)?\s*(?:attacks?|phrases?|prompts?|tricks?|patterns?|messages?|"
    r"lines?|payloads?|injections?|examples?)\b",
    re.I,
)
_COPULA_AFTER = re.compile(r"[\s,.]*(?:is|was|are|were|has|have|remains|becomes|became)\b", re.I)
# connective endings: the clause goes on to what the hit leads to (무시하고 ..., 완화되었으니 ...:
# "since", fourth round)
_K_CLAUSE_GOES_ON: tuple[str, ...] = (
    "고",
    "서",
    "며",
    "세요",
    "해",
    "라",
    "줘",
    "하여",
    "면",
    ":",
    "：",
)
_K_CLAUSE_GOES_ON += ("니", "니까", "므로")


def _words(text: str) -> list[str]:
    out = []
    for raw in text.split():
        if "@" in raw or "://" in raw:
            continue
        w = raw.strip(_STRIP).lower()
        if w:
            out.append(w)
    return out


def _is_cue(words: list[str], k: int, cues: frozenset[str]) -> bool:
    w = words[k]
    if w == "such":
        return k + 1 < len(words) and words[k + 1] == "as"
    if w.startswith("같은") and k > 0 and words[k - 1].endswith(("와", "과")):
        return False  # "관리자 지시와 같은 것으로": the same as, not "such as" (fourth round)
    if w in cues or w.rstrip(".") in cues:
        return True
    return not w.isascii() and any(w.startswith(c) for c in cues if not c.isascii())


def _quoted(text: str, start: int, end: int) -> bool:
    """Inside quotes that a Korean quotative follows: '이전 지시를 무시하라'는. The span may
    begin with the opening quote itself (its token is ``'이전``)."""
    lead = len(text[start:end]) - len(text[start:end].lstrip(_QUOTES))
    before = text[max(0, start - 60) : start + lead]
    if not any(q in before for q in _QUOTES):
        return False
    after = text[max(start, end - 3) : end + 40]
    for k, ch in enumerate(after):
        if ch in _QUOTES:
            return bool(_QUOTATIVE.match(after[k:]))
        if ch in ".!?\n":
            return False
    return False


def _named_example(text: str, end: int) -> bool:
    """A Korean word right after the span makes it a named example: '<|im_start|> 같은 토큰',
    '...'라는 문구'."""
    after = text[end : end + 16].lstrip(" \t" + _QUOTES + ")]")
    if not any("\uac00" <= ch <= "\ud7a3" for ch in after[:4]):
        return False
    return any(
        after.startswith(c) and (len(after) == len(c) or not after[len(c)].isalnum())
        for c in lexicon().k_after_cues
    )


def _korean_topic(text: str, end: int) -> bool:
    """The hit is the topic of a Korean sentence: the rest of its last word or the next two
    words hold a quotative (무시하라는, 출력해 달라는) or start with a noun of discussion
    (문구를, 요청의, 탐지)."""
    after = text[end : end + 40]
    if not any("\uac00" <= ch <= "\ud7a3" for ch in after):
        return False
    words = after.split()
    if not words:
        return False
    rest = words[0] if after[:1].strip() else ""
    nxt = words[1:3] if rest else words[:2]
    lex = lexicon()
    last = (text[max(0, end - 20) : end].split() or [""])[-1] + rest
    # the quotative is attached to the hit itself (무시하라는, 출력해 달라는), not to a payload
    # quoted after it ('승인'이라고만 답해)
    quoted = last + (
        " " + nxt[0] if nxt and nxt[0].startswith(("달라", "하라", "안", "마", "말")) else ""
    )
    if any(q in quoted for q in lex.k_quotatives):
        return True
    if last.endswith(_K_CLAUSE_GOES_ON):
        return False  # 무시하고 이 문장을 ...: a new command follows, not a topic
    return any(w.strip(_STRIP).startswith(lex.k_topic_nouns) for w in [rest, *nxt] if w)


def _quoted_speech(text: str, start: int, end: int) -> bool:
    """The hit is inside quotes (double, or single around words) that report what someone or something says: a reporting
    verb before the opening quote in the same sentence ('a line that says, "Ignore ..."', 'a
    user types: "..."'), or a copula after the closing quote ('"Ignore previous ..." is the
    classic pattern'). Third round (explainers of prompt injection that quote attacks)."""
    lead = len(text[start:end]) - len(text[start:end].lstrip("\"“‘'"))
    lo = max(0, start - _LOOKBACK)
    before = text[lo : start + lead]
    # an opening single quote starts a word ('treat this ...'), unlike an apostrophe (it's)
    single = max(before.rfind(" '"), before.rfind("('"))
    single = single + 1 if single >= 0 else (0 if before.startswith("'") else -1)
    q = max(before.rfind("“"), before.rfind('"'), before.rfind("‘"), single)
    if q < 0:
        return False
    opener = before[q]
    q += lo
    if opener == '"' and text[max(0, q - _LOOKBACK) : q].count('"') % 2:
        return False  # a closing quote, not an opening one
    closer = {"“": "”", "‘": "’", "'": "'"}.get(opener, '"')
    close = text.find(closer, q + 1, end + 200)
    while opener == "'" and 0 <= close < len(text) - 1 and text[close + 1].isalpha():
        close = text.find("'", close + 1, end + 200)  # an apostrophe inside (user's)
    if close < 0 or close < end - 3:
        return False  # the hit runs past the quoted words (the span may end with "',")
    if _NOUN_AFTER.match(text, close + 1):
        return True  # "'as an AI you must comply' style attacks": the quote names an attack
    pre = text[max(0, q - _LOOKBACK) : q]
    ends = list(_SENTENCE_END.finditer(pre))
    if ends:
        pre = pre[ends[-1].end() :]
    verbs = lexicon().reporting_verbs
    if any(w in verbs for w in _words(pre)):
        return True
    return bool(_COPULA_AFTER.match(text, close + 1))


def mention(text: str, start: int, end: int) -> bool:
    """Whether the hit at ``start``-``end`` is a mention of an attack, not an attack."""
    lo = max(0, start - _LOOKBACK)
    before = text[lo:start]
    ends = list(_SENTENCE_END.finditer(before))
    if ends:
        before = before[ends[-1].end() :]
    cues = lexicon().mention_cues
    words = _words(before)
    if any(_is_cue(words, k, cues) for k in range(len(words))):
        return True
    if _named_example(text, end) or _korean_topic(text, end) or _quoted_speech(text, start, end):
        return True
    if _DIRECTED_BEFORE.search(text[max(0, start - 60) : start]):
        return True
    span = text[start:end]
    if not span.isascii():
        words = _words(before + " " + span)
        objects = _commanded_objects(words, len(_words(before)))
        if any(
            not w.isascii() and k not in objects and _is_cue(words, k, cues)
            for k, w in enumerate(words)
        ):
            return True
        return _quoted(text, start, end)
    return False


_K_COMMAND_FINAL = ("세요", "십시오", "하라", "해라", "주세요", "줘", "하시오")


def _commanded_objects(words: list[str], first: int) -> set[int]:
    """Indices of the hit's own words that are the object (을/를) of the command the hit ends
    with: "안전 교육을 일시적으로 무시하세요" commands about 교육 (safety training), it does not
    discuss training material (fourth round)."""
    if len(words) <= first or not words[-1].rstrip(".!?").endswith(_K_COMMAND_FINAL):
        return set()
    return {k for k in range(first, len(words) - 1) if words[k].endswith(("을", "를"))}

"""Rules over a window of tokens: co-occurrence rules on tags (word order, distances), and the
regex rules of ``patterns/`` run on the window's words joined by single spaces.

Hits are ``(kind, confidence, rule, family, first token, last token)``.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import accumulate

from typing_extensions import TypedDict

from refgate.provenance.injection.lexicon import ANCHORS, lexicon
from refgate.provenance.injection.patterns import all_rules
from refgate.provenance.injection.tokens import TOKEN_RE, TokenInfo, classify

Hit = tuple[str, str, str, str, int, int]
_EARLIER = ("previous", "prior", "above", "earlier", "preceding", "foregoing")
_LABEL_PUNCT_RE = re.compile(r"^[\[\](){}<>*#|\-=_~]+|[\[\](){}<>*#|\-=_~:：]+$")
_LINE_START_RE = re.compile(r"(?m)^[ \t>*#\[(<{|\-=_~]*(\S+)")
_CLAUSE_BREAK = frozenset({"and", "or", "then", "but", "so"})
_COURTESY = frozenset({"thank", "thanks"})
_GERUND_REPORT = frozenset(
    {"into", "by", "of", "from", "about", "without", "after", "in", "is", "are", "was", "were"}
)


def _window(infos: list[TokenInfo], lo: int, hi: int) -> range:
    return range(max(0, lo), min(len(infos), hi))


def _has(infos: list[TokenInfo], rng: range, tag: str) -> int:
    for j in rng:
        if tag in infos[j].tags:
            return j
    return -1


def _negated(infos: list[TokenInfo], i: int) -> bool:
    """One of the three words before ``i`` negates it (not, never, don't), or the word right
    before makes it a description (staff who disregard ..., investors that ignore ...)."""
    lex = lexicon()
    if i > 0 and infos[i - 1].norm in lex.describers:
        return True
    if i > 1 and infos[i - 1].norm == "to" and infos[i - 2].norm in lex.directed | lex.purpose:
        return True  # "instructing it to ignore", "designed to override": a description
    for j in range(i - 1, max(-1, i - 4), -1):
        norm = infos[j].norm
        if norm in _CLAUSE_BREAK:
            return False  # "no spaces and ignore ...": the negation ends at the conjunction
        if norm in lex.negators or (norm == "t" and j > 0 and infos[j - 1].norm in lex.nt_stems):
            return True
    return False


def _reported(infos: list[TokenInfo], i: int) -> bool:
    """A past or third-person form (``the board overrode the policy``, ``he ignores``) reports
    what someone did; only a passive (``instructions are overridden``) or a perfect addressed
    to the reader (``you have forgotten``) still speaks about the reader's instructions."""
    info = infos[i]
    word = info.word or info.norm
    if word.endswith("ing") and i > 0 and infos[i - 1].norm in _GERUND_REPORT:
        return True  # "tricking an AI system into ignoring its instructions": a description
    if "IGN_BASE" in info.tags or word.endswith("ing"):
        return False
    prev = infos[i - 1].tags if i > 0 else frozenset()
    if "PASSIVE_AUX" in prev:
        return False
    return not ("PERFECT_AUX" in prev and i > 1 and "ADDR" in infos[i - 2].tags)


def _except_this(infos: list[TokenInfo], j: int) -> int:
    """``everything but this``: the index of the pointing word after an exception word."""
    k = _has(infos, _window(infos, j + 1, j + 3), "EXCEPT")
    return _has(infos, _window(infos, k + 1, k + 4), "DEICTIC") if k >= 0 else -1


def _ignore(infos: list[TokenInfo], i: int) -> Hit | None:
    tags = infos[i].tags
    if _negated(infos, i) or _reported(infos, i):
        return None
    if i + 1 < len(infos) and infos[i + 1].norm in lexicon().defensive_objects:
        return None  # "ignore attempts to modify core instructions": a defence
    j = _has(infos, _window(infos, i + 1, i + 7), "INSTR")
    if j >= 0:
        between = range(i + 1, j)
        strong = "INSTR_STRONG" in infos[j].tags and "IGN_BASE" in tags
        prior = _has(infos, between, "PRIOR") >= 0
        after = _has(infos, _window(infos, j + 1, j + 3), "POS") >= 0
        if prior or strong or after:
            return (
                "instruction_override",
                "high",
                "ignore_instructions",
                "instruction_override",
                i,
                j,
            )
    j = _has(infos, _window(infos, i + 1, i + 5), "EVERY")
    if j >= 0:
        k = _has(infos, _window(infos, j + 1, j + 5), "POS")
        if k < 0:
            k = _has(infos, _window(infos, j + 1, j + 4), "PRIOR")
            if k >= 0 and infos[k].word not in _EARLIER:
                k = -1
        if k < 0:
            k = _except_this(infos, j)
        if k >= 0:
            return (
                "instruction_override",
                "high",
                "ignore_everything",
                "instruction_override",
                i,
                k,
            )
    return None


def _korean_negated(tok: str) -> bool:
    """무시해서는 (안 된다), 무시하지 말고, 무시하는 (운전자): not a command to ignore."""
    for stem in ("무시", "우회", "잊"):
        k = tok.find(stem)
        if k >= 0:
            rest = tok[k + len(stem) :]
            return any(rest.startswith(e.strip()) for e in lexicon().k_negated_endings)
    return False


_K_COMMAND_ENDS = ("세요", "십시오", "시오", "라", "줘", "해", "요")
# declarative endings of a later word in the clause: a description ("...우회하거나 덮어쓰는 방식으로
# 이루어집니다"), not a command (third round)
_K_DECLARATIVE = ("니다", "이다", "진다", "된다", "한다")


def _korean_narrative(infos: list[TokenInfo], i: int) -> bool:
    """The clause of ``i`` ends in a plain past tense (무시하고 ... 선반영했다) and no command
    follows in the window: a report of what someone did, not a command. A command ending
    (하세요, 해줘, 따라) before the first clause end, another plain ending (한다), or a command
    later in the window (a quoted payload "털렸다!" before 출력하세요) keeps the hit."""
    past = False
    for k in range(i, len(infos)):
        norm = infos[k].norm
        if not norm:
            continue
        if k > i and norm.endswith(_K_COMMAND_ENDS):
            return False
        if not past and norm.endswith("다") and len(norm) >= 2:
            prev = ord(norm[-2]) - 0xAC00
            declarative = norm.endswith(_K_DECLARATIVE) and k > i
            if not (0 <= prev < 11172 and prev % 28 == 20) and not declarative:
                return False  # final ㅆ (했다, 었다, 였다) or a later 입니다/이루어진다: a report
            past = True
    return past


def _korean_ignore(infos: list[TokenInfo], i: int) -> Hit | None:
    """Korean order: (prior) instructions ... ignore."""
    if _korean_negated(infos[i].norm) or _korean_narrative(infos, i):
        return None
    j, weak = -1, False
    for jj in range(i, max(-1, i - 5), -1):
        tags = infos[jj].tags
        if "K_INSTR" in tags or "K_INSTR_WEAK" in tags:
            tag = "K_INSTR" if "K_INSTR" in tags else "K_INSTR_WEAK"
            if jj == i:
                pos = dict((t, o) for o, t in infos[i].ordered)
                if pos.get(tag, 99) > pos.get("K_IGN", -1):
                    continue
            j, weak = jj, tag == "K_INSTR_WEAK"
            break
    if j < 0:
        return None
    prior_words = lexicon().k_prior_words
    prior = any(
        "K_PRIOR" in infos[k].tags or "PRIOR" in infos[k].tags or infos[k].norm in prior_words
        for k in range(max(0, j - 3), i + 1)
    )
    if prior or ("K_IMPER" in infos[i].tags and not weak):
        return ("instruction_override", "high", "korean_ignore", "instruction_override", j, i)
    return None


def _tool(infos: list[TokenInfo], i: int) -> Hit | None:
    if not infos[i].tool:
        return None
    rng = _window(infos, i - 6, i + 7)
    verb = any(("VERB" in infos[j].tags or "K_TOOLV" in infos[j].tags) for j in rng if j != i)
    toolword = any(("TOOLWORD" in infos[j].tags or "K_TOOLWORD" in infos[j].tags) for j in rng)
    if verb or toolword:
        return ("tool_directive", "high", "tool_named", "tool_call", i, i)
    return ("tool_directive", "medium", "tool_mentioned", "tool_call", i, i)


def _authority(infos: list[TokenInfo], i: int) -> Hit | None:
    rng = _window(infos, i - 8, i + 9)
    cue = [j for j in rng if j != i and (infos[j].tags & {"AUTH_CUE", "K_AUTH_CUE"})]
    addr = [
        j
        for j in rng
        if infos[j].tags & {"ADDR", "K_ADDR"}
        and not (j > 0 and infos[j - 1].norm in _COURTESY)  # "Thank you" addresses no one
    ]
    # "you" alone is everyday text; it needs a command-like cue, or an AI addressee
    strong = any(infos[j].tags & {"AUTH_STRONG", "K_AUTH_CUE"} for j in cue) or any(
        infos[j].tags & {"ADDR_AI"}
        or (infos[j].tags & {"K_ADDR"} and infos[j].norm[:1] not in ("너", "당"))
        for j in addr
    )
    korean = "K_AUTH" in infos[i].tags and "AUTH" not in infos[i].tags
    after = " ".join(infos[j].norm for j in rng if j > i)
    if korean and cue and not (commands(after) or re.search(r"야(?:\s|$)", after)):
        return None  # 개발자는 ... 부여하지만: a description of what developers do, no command
    if cue and addr and strong:
        lo, hi = min([i, *cue, *addr]), max([i, *cue, *addr])
        return ("authority_claim", "medium", "authority_addresses_model", "impersonation", lo, hi)
    return None


def _exfiltration(infos: list[TokenInfo], i: int) -> Hit | None:
    tags = infos[i].tags
    rng = _window(infos, i - 8, i + 9)
    if "K_SEND" in tags:
        if any(k in infos[j].norm for j in rng for k in ("절대", "금지", "마세요", "마십시오")):
            return None  # 절대 ... 마세요: a warning, not a request
        stem = next(
            (st for st in ("유출", "전송", "보내", "업로드", "공유") if st in infos[i].norm), ""
        )
        rest = infos[i].norm.split(stem, 1)[1] if stem else ""
        if rest.startswith(("되", "된", "될")):
            return None  # 유출되도록: a passive, what may happen, not a request
        sec = [j for j in rng if "K_SECRET" in infos[j].tags]
        if sec and any("K_DEST" in infos[j].tags or "DEST" in infos[j].tags for j in rng):
            return (
                "exfiltration_hint",
                "medium",
                "korean_send_secret",
                "exfiltration",
                min(i, *sec),
                max(i, *sec),
            )
        return None
    if _negated(infos, i) or (i > 0 and _negated(infos, i - 1)):
        return None
    nouns = lexicon().noun_markers
    send = [
        j
        for j in rng
        if "SEND" in infos[j].tags
        and not _negated(infos, j)
        and not (j > 0 and infos[j - 1].norm in nouns)
    ]
    dest = [j for j in rng if "DEST" in infos[j].tags]
    strong = "SECRET_STRONG" in tags
    if send and (dest or (strong and _has(infos, rng, "ADDR") >= 0)):
        return (
            "exfiltration_hint",
            "medium",
            "send_secret",
            "exfiltration",
            min(i, *send),
            max(i, *send, *dest),
        )
    return None


def token_rule_hits(infos: list[TokenInfo], centers: list[int]) -> list[Hit]:
    """Hits of the co-occurrence rules at each center (first rule that fires wins)."""
    hits: list[Hit] = []
    for i in centers:
        tags = infos[i].tags
        if not tags & ANCHORS:
            continue
        checks = []
        if "IGN" in tags:
            checks.append(_ignore)
        if "K_IGN" in tags:
            checks.append(_korean_ignore)
        if "TOOL" in tags:
            checks.append(_tool)
        if "AUTH" in tags or "K_AUTH" in tags:
            checks.append(_authority)
        if "SECRET_ANCHOR" in tags or "K_SEND" in tags:
            checks.append(_exfiltration)
        for check in checks:
            hit = check(infos, i)
            if hit:
                hits.append(hit)
                break
    return hits


_ADDRESS_RE = re.compile(
    r"[\w.+-]+@[\w-]+\.\w+|https?://|www\.|\b[\w-]+\.(?:com|org|net|io|site|example)\b"
    r"|\b[A-Z]{2}\d{2}[A-Z0-9]{10,}\b|\b\d{3}-\d{4}-\d{4}\b|[$€£]\s?\d"
)


def risky(text: str) -> bool:
    """A consequential action: money, credentials, deletion, access, an external address."""
    return bool(_ADDRESS_RE.search(text) or _risky_re().search(text))


@cache
def _risky_re() -> re.Pattern[str]:
    words = sorted(lexicon().risky, key=len, reverse=True)
    return re.compile(
        "|".join(rf"\b{re.escape(w)}" if w.isascii() else re.escape(w) for w in words), re.I
    )


@cache
def _command_re() -> re.Pattern[str]:
    lex = lexicon()
    verbs = "|".join(sorted(map(re.escape, lex.command_verbs), key=len, reverse=True))
    endings = "|".join(sorted(map(re.escape, lex.k_command_endings), key=len, reverse=True))
    return re.compile(
        rf"(?:^|[:：.!?;,\-–—*\]>)]\s*|\b(?:please|kindly|then|and|now|also|to|simply|just|so)\s+)"
        rf"(?:{verbs})\b"
        r"|\byou\s+(?:must|need\s+to|should|have\s+to|will\s+(?:now|only)|are\s+(?:required|"
        r"instructed|expected|asked)\s+to)\b|\b(?:ensure|make\s+sure)\s+(?:to|that|you)\b"
        r"|\bdo\s+the\s+following\b"
        rf"|([가-힣]*(?:{endings}))(?=[\s.!?'\"”’)\]:]|$)",
        re.I,
    )


_QUOTED_RE = re.compile(r"['\"“‘][^'\"”’\n]{2,60}['\"”’]")
# a claim to be put into the reader's output ("add a sentence saying that ...", "...다는 문장을"):
# content injected into an answer (fourth round)
_CLAIM_ADDED_RE = re.compile(
    r"\b(?:sentence|line|note|statement|paragraph|remark|disclaimer|warning)s?\s+(?:saying|"
    r"stating|claiming|that\s+(?:says|states|claims))\b|(?:다는|라는)\s*(?:문장|말|내용|문단)"
    r"|(?<=[가-힣\d])(?:이)?라고\s*(?:만\s*)?(?:답|말|쓰|적|출력|응답|대답)",
    re.I,
)


def for_a_model(text: str) -> bool:
    """A sign that a command in ``text`` is for a model rather than a person: a word of what
    a model does (output, instructions, secrets), a quoted string, a consequential action."""
    lex = lexicon()
    if _QUOTED_RE.search(text) or risky(text) or _CLAIM_ADDED_RE.search(text):
        return True
    if any(c in text for c in lex.k_ai_cues):
        return True
    return any(w.strip(".,;:!?()[]*'\"").lower() in lex.ai_cues for w in text.split())


def _sentence(window: str, start: int, end: int) -> str:
    """The match and the rest of its sentence (up to the next . ! ? or line break)."""
    stop = _SENTENCE_STOP.search(window, end)
    return window[start : stop.end() if stop else len(window)]


_SENTENCE_STOP = re.compile(r"[.!?\n](?=\s|$)")


def commands(text: str) -> bool:
    """A command to the reader in ``text`` (an English imperative at a clause start, "you
    must", "do the following"; a Korean command ending)."""
    lex = lexicon()
    for m in _command_re().finditer(text):
        word = m.group(1)
        if word is None:
            return True
        if word in lex.k_not_commands:
            continue
        longer = [e for e in lex.k_command_endings if word.endswith(e) and len(e) > 1]
        final = re.match(r"[\s\"'”’)\]]*(?:[.!?]|$)", text[m.end() :])
        if word.endswith(lex.k_sentence_final) and not longer and not final:
            continue  # 답해. / 따르지 마. end a sentence; 침해 또는 ... does not
        return True
    return False


def _directive_context(window: str) -> bool:
    """A spaced tool name (``Save Artifact``) counts only beside a verb and the word tool."""
    tags: set[str] = set()
    for tok in TOKEN_RE.findall(window):
        tags |= classify(tok).tags
    return bool(tags & {"VERB", "K_TOOLV"}) and bool(tags & {"TOOLWORD", "K_TOOLWORD"})


def _token_at(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


class WindowState(TypedDict, total=False):
    """What the regex rules of one scan share across its windows: whether the current window
    starts the text, the words that start a line, and the memo of ``_speaks``."""

    window_start_is_text_start: bool
    line_starts: set[str]
    speaks: dict[str, bool]


def _is_label(words: list[str], a: int, text: str, state: WindowState, head: str = "") -> bool:
    """A role word followed by a colon speaks as that role when it starts a line or a sentence,
    or is written in capitals (``SYSTEM:``), or opens a cell or a quoted value inside its word
    (``revenue,"=ASSISTANT: ...``: ``head`` is the part of the word before the role word)."""
    word = words[a]
    if word.startswith("`"):
        return False  # inline code names a key or a prefix (`user:*`) in documentation
    if head and head[-1] in "\"'=,|;([{":
        return True  # a CSV cell, a formula or a quoted value starts with the label
    core = _LABEL_PUNCT_RE.sub("", word)
    if core.isupper() and len(core) > 1:
        return True
    if a == 0 and state.get("window_start_is_text_start"):
        return True
    if a > 0 and (words[a - 1][-1:] in ".!?]})>⟧\"'" or words[a - 1] == "<!--"):
        return True  # after a sentence end, a bracket or quote, or opening an HTML comment
    if "line_starts" not in state:
        state["line_starts"] = {m.group(1) for m in _LINE_START_RE.finditer(text)}
    return word in state["line_starts"]


_ADDRESS_OR_DUTY_RE = re.compile(
    r"\b(?:you|your|yours|yourself|must|shall|should|is\s+required\s+to|are\s+required\s+to)\b"
    r"|너|당신|네가|니가|해야|하십시오|할\s*것",
    re.I,
)


def _addressed(after: str) -> bool:
    """What follows speaks to the reader: a second-person address or an obligation, or a
    Korean command ending (an English verb right after a bracket may start a title: "[System]
    Open Market Account holdings")."""
    if _ADDRESS_OR_DUTY_RE.search(after):
        return True
    return bool(_HANGUL_RE.search(after)) and commands(after)


_HANGUL_RE = re.compile("[가-힣]")
# an obligation put on the reader (check "ai_duty"): injected steps written as duties
_DUTY_RE = re.compile(
    r"\b(?:must|have\s+to|has\s+to|need\s+to|is\s+required\s+to|are\s+required\s+to)\b"
    r"|해야\s*(?:합니다|한다|해|돼|됨|함|하며)|하여야|할\s*것|이\s*필수|것이\s*필수|려면\s*필수",
    re.I,
)


def _speaks(after: str) -> bool:
    """What follows a role label (the next 200 characters of the scan window) reads as a message
    to a model: a command, a second-person address or an obligation ("must", "해야"), or a word
    of what a model does ("System: SAP ERP 6.0" and "Assistant: J. Doe" in a document's header
    are none of these)."""
    return bool(commands(after) or _ADDRESS_OR_DUTY_RE.search(after) or for_a_model(after))


def _speaks_memo(after: str, state: WindowState) -> bool:
    """:func:`_speaks`, memoised per scan: overlapping windows see the same label and the same
    text after it ("system: " x 8,000 took 46 s, each label checked in every window)."""
    memo = state.setdefault("speaks", {})
    if after not in memo:
        memo[after] = _speaks(after)
    return memo[after]


def regex_window_hits(
    tokens: list[str], lo: int, hi: int, rule_ids: set[int], text: str, state: WindowState
) -> list[Hit]:
    """Regex rule hits in tokens[lo:hi]."""
    words = tokens[lo:hi]
    window = " ".join(words)
    starts: list[int] = []  # word start offsets, computed at the first match (most have none)
    rules = all_rules()
    hits: list[Hit] = []
    for k in sorted(rule_ids):
        rule = rules[k]
        for m in rule.pattern.finditer(window):
            if not starts:
                starts = list(accumulate((len(w) + 1 for w in words[:-1]), initial=0))
            a = _token_at(starts, m.start())
            b = _token_at(starts, max(m.start(), m.end() - 1))
            if rule.check == "directive_context" and not _directive_context(
                " ".join(words[max(0, a - 8) : b + 9])
            ):
                continue
            head = words[a][: max(0, m.start() - starts[a])]
            if rule.check == "label" and not _is_label(words, a, text, state, head):
                continue
            if rule.check == "command" and not commands(
                window[max(0, m.start() - 100) : m.end() + 160]
            ):
                continue
            if rule.check == "command_here" and not commands(_sentence(window, m.start(), m.end())):
                continue
            if rule.check == "addressed" and not _addressed(window[m.end() : m.end() + 200]):
                continue
            if rule.check in ("ai_task", "ai_duty"):
                # the sign must lie outside the match ("in your response" names a response
                # but says nothing about who is asked: "include your account number in your
                # response to this letter")
                # duties run longer (steps of an injected procedure): they look further on
                ahead = 300 if rule.check == "ai_duty" else 160
                before, after = (
                    window[max(0, m.start() - 100) : m.start()],
                    window[m.end() : m.end() + ahead],
                )
                region = window[max(0, m.start() - 100) : m.end() + ahead]
                ordered = commands(region) or (
                    rule.check == "ai_duty" and bool(_DUTY_RE.search(region))
                )
                if not (ordered and for_a_model(before + " \n " + after)):
                    continue
            confidence = rule.confidence
            if rule.check == "label" and not _speaks_memo(window[m.end() : m.end() + 200], state):
                # a label with no message after it ("System: SAP ERP 6.0" in a header) is
                # fenced, not withheld
                confidence = "medium"
            if rule.check == "risky_task":
                # a labelled task counts only when it asks for a consequential action
                if not risky(window[m.start() : m.end() + 200]):
                    continue
                end = _token_at(starts, min(len(window) - 1, m.end() + 200))
                b = max(b, min(end, _token_at(starts, m.end()) + 12))
            name = rule.name.split(":")[0]
            hits.append((rule.kind, confidence, name, rule.family, lo + a, lo + b))
    return hits

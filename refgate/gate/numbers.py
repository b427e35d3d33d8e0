"""Number mentions in text (English and Korean formats), for the GATE.

``find_numbers`` returns every number a piece of text states, with the precision it shows, its
scale word, its kind (plain / percent / bp / x) and whether it carries an explicit sign. Unit
and scale strings of refs ("USD millions", "%", "백만원") are read by ``units.parse_unit``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from . import korean
from .units import CURRENCIES, SCALE_WORDS

_KO_BIG = {"만": 1e4, "억": 1e8, "조": 1e12}
_KO_SMALL = {"십": 10.0, "백": 100.0, "천": 1000.0}


@dataclass(slots=True)
class Num:
    """One number stated in text (treat as immutable; not frozen only because frozen dataclasses
    are several times slower to build, and the gate builds one per number of every claim and cell).

    ``shown`` is the value as written in its own scale (``4.5`` in "$4.5 billion"), ``step`` the
    place of its last shown digit in those units (0.1), ``scale`` the multiplier of its scale
    word(s) (1e9; 1.0 with none), ``kind`` one of plain / percent / bp / x.
    """

    text: str
    start: int
    end: int
    shown: float
    step: float
    scale: float
    has_scale: bool
    kind: str
    signed: bool
    currency: str = ""


#: ``(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+`` with its first character read by a class
#: (a digit or a point; the lookbehinds tell which): a pattern that starts with a class lets the
#: regex engine skip other characters in C instead of trying the branches at each (same matches).
_CORE = re.compile(r"[\d.](?:(?<=\d)(?:\d{0,2}(?:,\d{3})+|\d*)(?:\.\d+)?|(?<=\.)\d+)")
_LEFT = re.compile(
    r"(?P<sign>[-−+])?[ \t]?(?P<paren>\()?[ \t]?"
    r"(?P<cur>US\$|A\$|C\$|HK\$|S\$|\$|€|£|¥|₩|(?:USD|EUR|GBP|JPY|KRW|CNY|RMB)[ \t]?)?"
    r"[ \t]*(?P<paren2>\()?(?P<sign2>[-−])?\Z"
)
_EN_SCALE = re.compile(
    r"(?P<sp>[ \t]?)(?P<w>thousands?|millions?|billions?|trillions?|mn|bn|tn|mm|mio|[kKmMbB])(?![A-Za-z])"
)
_KO_UNIT = re.compile(r"[ \t]?(?P<small>[십백천])?[ \t]?(?P<big>[만억조])?")
_KO_NEXT = re.compile(
    r"[ \t]?(?P<num>\d[\d,]*(?:\.\d+)?)[ \t]?(?P<small>[십백천])?[ \t]?(?P<big>[만억조])?"
)
_SUFFIX = re.compile(
    r"[ \t]?(?:(?P<pct>%p|%포인트|%|percentage[ \t]points?|percent(?:age)?|per[ \t]cent|pct|pp|퍼센트|포인트)"
    r"|(?P<bp>bps|bp|basis[ \t]points?)"
    r"|(?P<x>times(?![A-Za-z])|배))"
)
_CUR_AFTER = re.compile(
    r"[ \t]?(?P<cur>dollars?|euros?|yen|won|USD|EUR|GBP|JPY|KRW|CNY|RMB|원|달러|엔|위안)(?![A-Za-z])"
)
_CLOSE = re.compile(r"[ \t]?\)")
#: Branches that each start with a literal (not a class): the regex engine skips to a first
#: character of one of them in C.
_LEFT_HINT = re.compile("|".join([*map(re.escape, "-−+($€£¥₩"), "USD|EUR|GBP|JPY|KRW|CNY|RMB"]))
#: "(12.3 million)", "(4.5%)": the closing parenthesis after a scale word or unit.
_CLOSE_AFTER = re.compile(
    r"[ \t]?(?:thousands?|millions?|billions?|trillions?|mn|bn|tn|[kKmMbB]|%|[십백천만억조]+)?[ \t]?(?:원)?\)"
)
_XGLUED = re.compile(r"[xX×](?![A-Za-z])")


_DOLLARS = {"a$": "AUD", "c$": "CAD", "hk$": "HKD", "s$": "SGD"}


@lru_cache(maxsize=64)  # the tokens _LEFT's currency group can read: a few dozen
def _prefix_currency(token: str) -> str:
    t = token.strip().lower()
    if "$" in t:
        return _DOLLARS.get(t, "USD")
    return CURRENCIES.get(t, t.upper())


def dec_step(digits: str) -> float:
    """The place of the last digit ``digits`` shows ("12.34" -> 0.01, "1,200" -> 1)."""
    if "." in digits:
        return 10.0 ** -(len(digits) - digits.index(".") - 1)
    return 1.0


def _to_float(digits: str) -> float:
    return float(digits.replace(",", ""))


#: First characters each right-context pattern can start with (after its optional blanks): the
#: pattern is tried only when one of them is there (``text[i : i + w].lstrip(" \t")[:1]``: the
#: first character at ``i`` after at most ``w - 1`` blanks, inline in the scan loop).
_KO_FIRST = frozenset("십백천만억조")
_SCALE_FIRST = frozenset("tmbkKMB")
_SUFFIX_FIRST = frozenset("%pbt퍼포배")
_X_FIRST = frozenset("xX×")
_CUR_FIRST = frozenset("deywUEGJKCR원달엔위")
#: Characters right after a number that can begin its right context besides letters: blanks (a
#: spaced scale word or unit), %, a closing parenthesis, ×.
_RIGHT_FIRST = frozenset(" \t%)×")
#: The last character of a non-blank left context (sign, parenthesis, currency symbol) or blank.
_LEFT_LAST = frozenset(" \t-−+($€£¥₩")
#: Every character _LEFT can match: blanks, signs, parentheses, currency symbols and the letters
#: of the currency codes and prefixes (US$, A$, C$, HK$, S$, USD, EUR, ...).
_LEFT_CHARS = frozenset(" \t-−+($€£¥₩USDEURGBPJYKWCNMAH")


#: Up to this many spans a linear test is cheapest; beyond, ``span_test`` bisects (a text with
#: thousands of dates would otherwise cost dates x numbers comparisons).
_LINEAR_SPANS = 8


def span_test(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """``s -> any(a <= s < b for a, b in spans)``, in O(log n) per test for many spans."""
    if len(spans) <= _LINEAR_SPANS:

        def inside_few(s: int) -> bool:
            for a, b in spans:  # noqa: SIM110 (a loop is cheaper than any() over a generator)
                if a <= s < b:
                    return True
            return False

        return inside_few
    starts: list[int] = []
    ends: list[int] = []
    for a, b in sorted(spans):
        if starts and a <= ends[-1]:
            if b > ends[-1]:
                ends[-1] = b
        elif a < b:
            starts.append(a)
            ends.append(b)

    def inside(s: int) -> bool:
        i = bisect_right(starts, s) - 1
        return i >= 0 and s < ends[i]

    return inside


def find_numbers(text: str, masked: list[tuple[int, int]] | None = None) -> list[Num]:
    """Every number stated in ``text`` outside the ``masked`` spans (dates, ranks, ids)."""
    out: list[Num] = []
    pos = 0
    n = len(text)
    search = _CORE.search
    masked_at = span_test(masked) if masked else None
    while True:
        m = search(text, pos)
        if m is None:
            break
        s, e = m.span()
        pos = e
        if masked_at is not None and masked_at(s):
            continue
        prev = text[s - 1] if s else ""
        nxt = text[e] if e < n else ""
        # Most numbers follow a blank or a sign and are followed by neither "-" nor ".": only
        # the rest can be glued to an identifier (the test of ``_glued``, asked only then).
        if (
            (prev and prev.isascii() and (prev.isalnum() or prev in "_./^-"))
            or nxt == "-"
            or nxt == "."
        ) and _glued(text, s, e, prev, nxt, n):
            continue
        digits = m.group()
        shown = float(digits.replace(",", "")) if "," in digits else float(digits)
        step = 10.0 ** -(len(digits) - digits.index(".") - 1) if "." in digits else 1.0
        # Left context: sign, parenthesis, currency prefix. Anything it can hold ends in one of
        # _LEFT_LAST (or a blank, or a currency code, whose last letter would be glued to the
        # number and was skipped above).
        # A blank after a character no left context holds ("was 5") holds none either.
        if (
            prev
            and prev in _LEFT_LAST
            and not ((prev == " " or prev == "\t") and (s < 2 or text[s - 2] not in _LEFT_CHARS))
        ):
            start, sign, paren, negative, cur = _left_context(text, s, e, prev)
        else:
            start, sign, paren, negative, cur = s, False, False, False, ""
        scale = 1.0
        has_scale = False
        kind = "plain"
        end = e
        # Right context. Each pattern is tried only when the character it must start with (after
        # its optional blanks) is there; nothing can follow when ``nxt`` is none of these.
        if nxt and (nxt in _RIGHT_FIRST or nxt.isalpha()):
            right = _right_context(text, e, nxt, shown, step, paren, sign, cur)
            if right is None:
                continue
            end, shown, step, scale, has_scale, kind, cur = right
        value = -shown if negative else shown
        out.append(Num(text[start:end], start, end, value, step, scale, has_scale, kind, sign, cur))
        if end > pos:
            pos = end
    # Korean signs need Hangul or a triangle: never in ASCII text (a flag of the string).
    return out if text.isascii() else korean.signs(text, out)


def _glued(text: str, s: int, e: int, prev: str, nxt: str, n: int) -> bool:
    """Glued to an identifier (Q4, v1.2, COVID-19, 10-K, x86) or a version string: no number."""
    if prev and prev.isascii():
        if prev.isalnum() or prev in "_./^":
            return True
        if prev == "-" and s >= 2 and text[s - 2].isascii() and text[s - 2].isalpha():
            return True
    if nxt == "-" and e + 1 < n and text[e + 1].isascii() and text[e + 1].isalpha():
        return True
    return nxt == "." and e + 1 < n and text[e + 1].isdigit()


def _left_context(text: str, s: int, e: int, prev: str) -> tuple[int, bool, bool, bool, str]:
    """(start, signed, in parentheses, negative, currency) from what precedes the number."""
    sign = paren = negative = False
    cur = ""
    start = s
    # A left context only holds characters of _LEFT_CHARS: search from the first of the run of
    # them that ends at the number (at most 8 back, as before).
    w0 = s - 8 if s > 8 else 0
    q = s - 1
    while q > w0 and text[q - 1] in _LEFT_CHARS:
        q -= 1
    # A lone blank before the number holds no sign, parenthesis or currency.
    lm = (
        None
        if q == s - 1 and (prev == " " or prev == "\t")
        else _LEFT.search(text, q, s)
        if _LEFT_HINT.search(text, q, s)
        else None
    )
    if not (lm and lm.group().strip()):
        return start, sign, paren, negative, cur
    # _LEFT's groups, in order (one call instead of one per group).
    g_sign, g_paren, g_cur, g_paren2, g_sign2 = lm.groups()
    sg_group = "sign" if g_sign else ("sign2" if g_sign2 else "")
    if sg_group:
        sg = g_sign if g_sign else g_sign2
        sign_at = lm.start(sg_group)
        before = text[sign_at - 1] if sign_at > 0 else ""
        # "2017-2019", "10-20%": a dash between numbers is a range, not a sign.
        if sg == "+" or not (before.isascii() and before.isalnum()):
            sign = True
            negative = sg != "+"
    if g_paren or g_paren2:
        paren = _CLOSE.match(text, e) is not None or bool(_CLOSE_AFTER.match(text, e))
        if paren:
            negative = sign = True
    if g_cur:
        cur = _prefix_currency(g_cur)
    if sign or paren or cur:
        # The groups (1-5: sign, paren, cur, paren2, sign2) are in text order: the first one
        # matched starts the number.
        start = lm.start(1 if g_sign else 2 if g_paren else 3 if g_cur else 4 if g_paren2 else 5)
    return start, sign, paren, negative, cur


def _right_context(
    text: str, e: int, nxt: str, shown: float, step: float, paren: bool, sign: bool, cur: str
) -> tuple[int, float, float, float, bool, str, str] | None:
    """(end, shown, step, scale, has scale word, kind, currency) from what follows the number:
    Korean amounts, scale words, percent/bp/multiple suffixes, currency words, the closing
    parenthesis; ``None`` when glued letters make it no number ("3D", "2nd")."""
    end = e
    closed = False
    if paren:
        cm = _CLOSE.match(text, e)
        if cm:  # "(12.3) million": the parenthesis closes before the scale word
            end, closed = cm.end(), True
    # The character after ``end`` and at most one blank ("" if none; ``nxt`` when that is no
    # blank): each pattern below is tried only when it can start with it (a Korean unit after up
    # to two blanks).
    at = end
    first = (
        nxt if end == e and nxt != " " and nxt != "\t" else text[end : end + 2].lstrip(" \t")[:1]
    )
    end, shown, step, scale, has_scale = _scale_after(text, end, first, shown, step)
    after = first if end == at else text[end : end + 2].lstrip(" \t")[:1]
    end, kind, cur = _kind_after(text, end, e, nxt, after, cur)
    if paren and not closed:
        cm = _CLOSE.match(text, end)
        if cm:
            end = cm.end()
    if not (sign or has_scale or cur) and kind == "plain" and _glued_letters(text, e, nxt):
        return None
    return end, shown, step, scale, has_scale, kind, cur


def _scale_after(
    text: str, end: int, first: str, shown: float, step: float
) -> tuple[int, float, float, float, bool]:
    """(end, shown, step, scale, has scale word) after a Korean compound amount (1.2조, 3억 2천만,
    5천억, 1,234백만) or an English scale word at ``end`` (``first``: its first character)."""
    ko_first = first or text[end : end + 3].lstrip(" \t")[:1]
    km = _KO_UNIT.match(text, end) if ko_first in _KO_FIRST else None
    if km and (km.group("small") or km.group("big")):
        total, lead, last_place, end = _korean_amount(text, shown, step, km)
        if lead > 1.0:
            return end, total / lead, last_place / lead, lead, True
        return end, total, last_place, 1.0, False
    sm = _EN_SCALE.match(text, end) if first in _SCALE_FIRST else None
    # Single letters (4.5m, 10K) count only when glued to the number.
    if sm and (len(sm.group("w")) > 1 or not sm.group("sp")):
        return sm.end(), shown, step, SCALE_WORDS[sm.group("w").lower()], True
    return end, shown, step, 1.0, False


def _kind_after(
    text: str, end: int, e: int, nxt: str, after: str, cur: str
) -> tuple[int, str, str]:
    """(end, kind, currency) after a multiple glued to the number ("2.3x"), a percent, bp or
    multiple suffix, or a currency word at ``end`` (``after``: its first character)."""
    xg = _XGLUED.match(text, end) if end == e and nxt in _X_FIRST else None
    if xg:
        return xg.end(), "x", cur
    sfx = _SUFFIX.match(text, end) if after in _SUFFIX_FIRST else None
    if sfx:
        kind = "percent" if sfx.group("pct") else "bp" if sfx.group("bp") else "x"
        return sfx.end(), kind, cur
    cm2 = _CUR_AFTER.match(text, end) if after in _CUR_FIRST else None
    if cm2:
        return cm2.end(), "plain", cur or CURRENCIES.get(cm2.group("cur").lower(), "")
    return end, "plain", cur


def _glued_letters(text: str, e: int, nxt: str) -> bool:
    """3D, 2nd, 3rd: letters glued to the number that are not scale words or units."""
    return (
        nxt.isascii() and nxt.isalpha() and not (nxt in _SCALE_FIRST and _EN_SCALE.match(text, e))
    )


def _korean_amount(
    text: str, first: float, first_step: float, km: re.Match[str]
) -> tuple[float, float, float, int]:
    """Sum a Korean compound amount starting at a number whose unit match is ``km``."""
    total = 0.0
    lead = 0.0
    value, step, m = first, first_step, km
    last_big = float("inf")
    end = km.end()
    last_place = first_step
    while True:
        small = _KO_SMALL.get(m.group("small") or "", 1.0)
        big = _KO_BIG.get(m.group("big") or "", 1.0)
        mult = small * big
        if big >= last_big:
            break
        total += value * mult
        last_place = step * mult
        if lead == 0.0:
            lead = mult if m.group("big") else (mult if small > 1.0 else 1.0)
        end = m.end()
        if not m.group("big"):
            break
        last_big = big
        nm = _KO_NEXT.match(text, end)
        if nm is None or not (nm.group("small") or nm.group("big")):
            break
        value = _to_float(nm.group("num"))
        step = dec_step(nm.group("num"))
        m = nm
    return total, lead, last_place, end


_NEXT_WORD = re.compile(r"[ \t]*([A-Za-z][A-Za-z-]+)")
#: Words after a number that do not make it a count of something ("5 of", "12 in 2008", "3 to
#: 4"), and words that are units or periods rather than counted things.
_NOT_COUNTED_WORDS = """
    of in on at to for from by with and or as is are was were be than the a an per vs versus
    while which that this it its from through over under between into during after before
    percent percentage pct points point basis bp bps times x
    thousand thousands million millions billion billions trillion trillions mn bn tn
    dollars dollar euros euro yen won pounds usd eur gbp jpy krw
"""
_NOT_COUNTED = frozenset(_NOT_COUNTED_WORDS.split())


def counts_noun(text: str, num: Num) -> bool:
    """Is ``num`` a count of the thing the next word names ("5 members", "120 employees")?"""
    if num.kind != "plain" or num.has_scale or num.currency:
        return False
    m = _NEXT_WORD.match(text, num.end)
    return m is not None and m.group(1).lower() not in _NOT_COUNTED

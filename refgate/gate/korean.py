"""Korean number and period forms the general scans (``numbers``, ``dates``) leave to this module.

- **Triangle signs.** Korean filings and tables write a negative as △1,234 (또는 ▽, ▼), and news
  an increase as ▲3.2%: the triangle before a number is its sign (an explicit sign, checked
  against the value's sign like "-").
- **Direction words.** A change followed by a direction word states its sign: "전년 대비 14.3%
  감소", "4조원 줄었다" are -14.3% and -4조원, "12% 증가" +12%. Only a word right after the
  number counts (a particle like 가/이/만큼/가량 may sit between); "2.5%로 하락" (fell *to* 2.5%:
  a level) is left unsigned.
- **Profit words.** "영업이익은 1,214억원", "흑자 500억원": an amount stated as a profit is
  positive (a loss is written 영업손실 1,214억원, 영업이익 △1,214억원 or -1,214억원), so it is
  signed; "영업손실은 1,214억원" stays a magnitude.
- **Periods.** Half years and quarters with a two-digit year: 1H24, 2H23, 1H 2024, 24년 3분기,
  24년 상반기, '24년 (the general scan reads none of them, or only the year of "1H 2024").

- **Relative periods.** 전년, 전기, 전년 동기, 작년 name the period a year before the one the
  text states (2023년 ... 전년(30조원) -> 2022; 2024년 3분기 ... 전년 동기에는 -> 2023Q3), 당기,
  금년, 올해 that period itself; without a stated period they name none. "전년 대비" (compared
  with the year before) is the base of a change, not a claim about that year: no period.
- **Metric words.** A change is named by its direction (증가, 감소, 상승, 하락, 늘, 줄, 개선, 악화:
  all the metric word 증감, as a label 증감률 or 증감 reads), and a loss by the profit account it
  is the negative of (영업손실 ~ 영업이익, as DART's account 영업이익(손실); 적자 and 흑자 ~ 이익).

``signs`` post-processes the numbers ``find_numbers`` found; ``periods`` adds date mentions to
``find_dates``'s (replacing a coarser reading of the same words); ``metric_forms`` gives the
binding's metric words of one Korean word.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import Field, replace
from typing import ClassVar, Protocol, TypeVar


class _Number(Protocol):
    """What ``signs`` reads of a number: ``numbers.Num`` (a dataclass; that module imports this
    one)."""

    __dataclass_fields__: ClassVar[dict[str, Field[object]]]
    start: int
    end: int
    shown: float
    signed: bool
    kind: str


class _Dated(Protocol):
    """What ``periods`` reads of a date mention: ``dates.DateMention`` (that module imports this
    one)."""

    start: int
    end: int
    keys: tuple[str, ...]


NumberT = TypeVar("NumberT", bound=_Number)
DatedT = TypeVar("DatedT", bound=_Dated)
#: Builds a date mention from its text, span and keys (``dates.DateMention``).
MakeDated = Callable[[str, int, int, tuple[str, ...]], DatedT]

#: Signs written as triangles: minus (filings, tables) and plus (news).
MINUS_MARKS = "△▽▼"
PLUS_MARKS = "▲"
_MARKS = MINUS_MARKS + PLUS_MARKS
_DOWN = r"감소|하락|줄|축소|악화|감액|떨어|낮아|내려|후퇴|급감|급락|감익"
_UP = r"증가|상승|늘|확대|개선|증액|올라|높아|급증|급등|성장|증익"
_PARTICLES = r"가|이|만큼|가량|정도|나|씩|이나"
_DIRECTION = re.compile(rf"[ \t]*(?:(?:{_PARTICLES})[ \t]*)?(?:(?P<down>{_DOWN})|(?P<up>{_UP}))")
#: What can follow a number that a direction word follows: a blank, a particle or the word.
_DIRECTION_NEXT = frozenset(w[0] for w in f" |\t|{_PARTICLES}|{_DOWN}|{_UP}".split("|"))
#: A profit word right before the number: "영업이익은 ", "순이익이 약 ", "흑자 ".
_PROFIT = re.compile(r"(?:이익|흑자)(?:은|는|이|가|도)?[ \t]*(?:약[ \t]*)?$")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def needed(text: str) -> bool:
    """Whether ``text`` can hold a form of this module (Hangul or a triangle sign): never an
    ASCII text (``str.isascii`` is a flag of the string, read in constant time)."""
    if text.isascii():
        return False
    return _HANGUL.search(text) is not None or any(m in text for m in _MARKS)


def signs(text: str, nums: list[NumberT]) -> list[NumberT]:
    """``nums`` (``numbers.Num``) with triangle signs and direction words applied."""
    if not nums or not needed(text):
        return nums
    out = []
    for num in nums:
        if not num.signed:
            q = num.start
            while q > 0 and text[q - 1] in " \t":
                q -= 1
            mark = text[q - 1] if q > 0 else ""
            if mark and mark in _MARKS:
                negative = mark in MINUS_MARKS
                num = replace(
                    num,
                    text=text[q - 1 : num.end],
                    start=q - 1,
                    shown=-abs(num.shown) if negative else abs(num.shown),
                    signed=True,
                )
            else:
                d = (
                    _DIRECTION.match(text, num.end)
                    if text[num.end : num.end + 1] in _DIRECTION_NEXT
                    else None
                )
                if d is not None:
                    down = d.group("down") is not None
                    num = replace(
                        num, shown=-abs(num.shown) if down else abs(num.shown), signed=True
                    )
                elif num.kind == "plain" and _PROFIT.search(text, max(0, q - 12), q):
                    num = replace(num, shown=abs(num.shown), signed=True)
        out.append(num)
    return out


_YEAR2 = r"'?(?P<{}>(?:19|20)\d\d|\d\d)"
_PERIOD = re.compile(
    rf"(?<![A-Za-z0-9_])(?:(?P<h>[12])H[ \t]?{_YEAR2.format('y')}(?![A-Za-z0-9_%])"
    rf"|{_YEAR2.format('ky')}[ \t]?년[ \t]?(?:(?P<q>[1-4])[ \t]?분기|(?P<kh>상|하)반기))"
)


#: Where a period form can be: each holds 년 or H at most 6 characters after its start ("'2024 년")
#: and is at most 12 characters long ("'2024 년 3 분기"). ``_period_matches`` searches only there.
_PERIOD_KEY = re.compile("[년H]")
_KEY_BEFORE = 6
_PERIOD_WIDTH = 12


def _period_matches(text: str) -> list[re.Match[str]]:
    """``_PERIOD.finditer(text)``, searched only near each 년 and H. The leftmost match from
    ``pos`` starts at most ``_KEY_BEFORE`` before the first key character ``j`` at or after
    ``pos``; one starting by ``j`` reads nothing past ``j + _PERIOD_WIDTH`` (its last character
    and the one after it, for the lookahead), so the search window ends there. No match starting
    by ``j``: none starts before the next key character's window."""
    out = []
    pos = 0
    search = _PERIOD.search
    for k in _PERIOD_KEY.finditer(text):
        j = k.start()
        if j < pos:  # inside the last match
            continue
        m = search(text, max(pos, j - _KEY_BEFORE), j + _PERIOD_WIDTH + 1)
        if m is not None and m.start() <= j:
            out.append(m)
            pos = m.end()
    return out


def _year(raw: str) -> int:
    y = int(raw)
    return 2000 + y if y < 100 else y


#: 전기/당기 only as words of their own (전기차, 전기요금, 당기순이익 are other words): followed by
#: no Hangul, or by a particle that ends the word.
_WORD_END = r"(?=(?:에|의|는|은|와|과|보다|말|도)?(?![가-힣]))"
#: "전년 대비", "전년 동기 대비": the base of a comparison, not a claim about that period.
_NOT_BASE = r"(?![ \t]*(?:동기[ \t]*)?대비)"
_RELATIVE = re.compile(
    rf"(?:(?P<prev>전년(?:도)?(?:[ \t]?동기)?|작년|전기{_WORD_END})"
    rf"|(?P<this>금년|올해|당기{_WORD_END})){_NOT_BASE}"
)
#: A character every relative period word starts with (a cheap search before ``_RELATIVE``).
_RELATIVE_FIRST = re.compile("[전작금올당]")
_KEY = re.compile(r"^(?P<y>\d{4})(?P<rest>(?:Q[1-4]|H[12])?)$")


def _relative(text: str, found: list[DatedT], mention: MakeDated[DatedT]) -> list[DatedT]:
    """Mentions of 전년/전기/당기... relative to the first period ``found`` states."""
    base = next((m for d in found for k in d.keys if (m := _KEY.match(k))), None)
    if base is None:
        return []
    y, rest = int(base.group("y")), base.group("rest")
    out = []
    for m in _RELATIVE.finditer(text):
        key = f"{y - 1 if m.group('prev') else y:04d}{rest}"
        out.append(mention(m.group(), m.start(), m.end(), (key,)))
    return out


def periods(text: str, found: list[DatedT], mention: MakeDated[DatedT]) -> list[DatedT]:
    """``found`` (``dates.DateMention``) plus the periods above; a general mention overlapping
    one of them is replaced by it. ``mention`` builds a ``DateMention``."""
    if "H" not in text and (text.isascii() or ("년" not in text and "기" not in text)):
        return found
    found = _with_periods(text, found, mention)
    relative = (
        _relative(text, found, mention)
        if _RELATIVE_FIRST.search(text) is not None and _RELATIVE.search(text)
        else []
    )
    return sorted(found + relative, key=lambda d: d.start) if relative else found


def _period_key(m: re.Match[str]) -> str:
    h, y, ky, q, kh = m.groups()
    # A year is 1900-2099: four digits, no padding needed.
    year = _year(y or ky)
    if h:
        return f"{year}H{h}"
    if q:
        return f"{year}Q{q}"
    return f"{year}H1" if kh == "상" else f"{year}H2"


def _with_periods(text: str, found: list[DatedT], mention: MakeDated[DatedT]) -> list[DatedT]:
    matches = _period_matches(text)
    if not matches:
        return found
    read = [(m.start(), m.end(), (_period_key(m),)) for m in matches]
    # "2023년 3분기 누적" read as nine months (``dates``' 9M key) is no third quarter
    nine = [d for d in found if d.keys and d.keys[0].endswith("Y9M")]
    if nine:
        read = [r for r in read if not any(d.start <= r[0] < d.end for d in nine)]
        if not read:
            return found
    # The general scan read each of them already, at the same span with the same keys ("2021년
    # 1분기"; a general mention's text is its span of ``text``): general mentions never overlap,
    # so no other one overlaps them.
    if len(read) <= len(found) and {(d.start, d.end, d.keys) for d in found}.issuperset(read):
        return found
    extra = [mention(text[a:b], a, b, keys) for a, b, keys in read]
    kept = [
        d
        for d in found
        if not any(d.start < e.end and e.start < d.end for e in extra)
        or any(e.start <= d.start and d.end <= e.end and d.keys == e.keys for e in extra)
    ]
    kept = [d for d in kept if not any(e.start <= d.start and d.end <= e.end for e in extra)]
    return sorted(kept + extra, key=lambda d: d.start)


#: Words that name a change by its direction: the metric word is 증감 (change).
_CHANGE = re.compile(
    r"^(?:증가|감소|상승|하락|증감|변동|늘|줄|개선|악화|축소|확대|급증|급감|급등|급락)"
)
_LOSS = re.compile(r"(손실|적자|흑자)")


#: Period and reference words (checked as periods, or naming no metric) and particles standing
#: alone: no metric words.
_NO_METRIC = re.compile(
    r"^(?:전년|전기|당기|동기|작년|금년|올해|대비|기준|현재|분기|반기|연도)"
    r"|^(?:으로|로|은|는|이|가|을|를|의|와|과|및|에|에서|도|만|까지|부터|이며|이고|으며|였고|이었고)$"
)


def metric_forms(word: str) -> tuple[str, ...]:
    """The metric words one Korean word stands for (itself, unless it names a direction or a
    period)."""
    # 당기순이익, 당기연결순이익, 당기순손익: an account, though it starts with a period word
    if (
        _NO_METRIC.match(word)
        and not word.startswith("당기순")
        and "순이익" not in word
        and ("순손" not in word)
    ):
        return ()
    if _CHANGE.match(word):
        return ("증감",)
    if _LOSS.search(word):
        return (word, _LOSS.sub("이익", word))
    return (word,)

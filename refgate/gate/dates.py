"""Date and period mentions (English and Korean) as canonical keys, for the GATE.

Keys by granularity: day ``2008-12-16``, month ``2008-12``, quarter ``2008Q4``, half ``2008H2``,
nine months to date ``2008Y9M`` (3분기 누적, 9M 2008: not its third quarter),
year ``2008`` (``FY2008`` and "fiscal 2008" read as the year label ``2008``), a month-day with no
year ``--12-16``, a quarter with no year ``*Q4``, and ``asof`` for an "as of" with no readable date.
``expand`` gives a ref date the keys of every period that contains it, so a claim of coarser
granularity ("Q4 2008", "December 2008", "2008") is supported by a ref dated 2008-12-16, never the
other way round.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from functools import lru_cache

from . import korean

_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
_MON = (
    r"(?P<mon>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_Y = r"(?:19|20)\d\d"
_NB = r"(?<![A-Za-z0-9_$€£¥₩.,])"  # not glued to a word, currency or number on the left
_NA = r"(?![A-Za-z0-9_%]|[.,]\d)"  # not glued on the right

_PATTERNS: list[tuple[str, str]] = [
    ("ymd", rf"{_NB}(?P<y>{_Y})[-/.](?P<m>0?[1-9]|1[0-2])[-/.](?P<d>0?[1-9]|[12]\d|3[01]){_NA}"),
    (
        "ko_ymd",
        rf"(?P<y>{_Y})\s?년\s?(?P<m>0?[1-9]|1[0-2])\s?월\s?(?P<d>0?[1-9]|[12]\d|3[01])\s?일",
    ),
    ("mdy", rf"\b{_MON}\s(?P<d>[0-3]?\d)(?:st|nd|rd|th)?,?\s(?P<y>{_Y}){_NA}"),
    ("dmy", rf"{_NB}(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\s{_MON},?\s(?P<y>{_Y}){_NA}"),
    # Nine months to date (3분기 누적, 1~3분기, 9M 2023): a period of its own, not Q3.
    ("ko_9m", rf"(?P<y>{_Y})\s?년\s?(?:3\s?분기\s?누적|누적\s?3\s?분기|1\s?[~-]\s?3\s?분기)"),
    ("ko_q", rf"(?P<y>{_Y})\s?년\s?(?P<q>[1-4])\s?분기"),
    ("ko_h", rf"(?P<y>{_Y})\s?년\s?(?P<h>상|하)반기"),
    ("ko_ym", rf"(?P<y>{_Y})\s?년\s?(?P<m>0?[1-9]|1[0-2])\s?월"),
    ("my", rf"\b{_MON},?\s(?P<y>{_Y}){_NA}"),
    ("md", rf"\b{_MON}\s(?P<d>[0-3]?\d)(?:st|nd|rd|th)?(?![A-Za-z0-9_%]|[.,]\d|,?\s(?:19|20)\d\d)"),
    ("ym", rf"{_NB}(?P<y>{_Y})[-/.](?P<m>0[1-9]|1[0-2]){_NA}"),
    ("y9m", rf"{_NB}(?P<y>{_Y})\s?9M{_NA}"),
    ("yq", rf"{_NB}(?P<y>{_Y})\s?[-.]?\s?Q(?P<q>[1-4]){_NA}"),
    ("yq2", rf"{_NB}(?P<y>{_Y})\.?\s?(?P<q>[1-4])Q{_NA}"),
    ("qy", rf"\bQ(?P<q>[1-4])\s?(?:FY\s?|CY\s?)?'?(?P<y>{_Y}|\d\d){_NA}"),
    ("qy2", rf"{_NB}(?P<q>[1-4])Q\s?'?(?P<y>{_Y}|\d\d){_NA}"),
    (
        "oq",
        rf"\b(?P<o>(?i:first|second|third|fourth)|1st|2nd|3rd|4th)\s(?i:fiscal\s)?(?i:quarter)"
        rf"(?:,?\s(?:of\s)?(?i:fiscal\s(?:year\s)?)?(?:FY\s?)?(?P<y>{_Y}))?",
    ),
    ("m9y", rf"{_NB}9M\s?(?:FY\s?)?'?(?P<y>{_Y}|\d\d){_NA}"),
    (
        "nine",
        rf"\b(?i:first\snine\smonths)(?:\s(?i:of|ended\s\w+\s\d\d?,))?\s(?:FY\s?)?(?P<y>{_Y}){_NA}",
    ),
    ("hy", rf"\b(?P<h>H[12]|[12]H)\s?(?:FY\s?)?'?(?P<y>{_Y}|\d\d){_NA}"),
    ("yh", rf"{_NB}(?P<y>{_Y})\s?(?P<h>H[12]){_NA}"),
    (
        "oh",
        rf"\b(?P<o>(?i:first|second))\s(?i:half)(?:\sof)?(?:\s(?i:fiscal\s)?(?:year\s)?(?:FY\s?)?(?P<y>{_Y}))?",
    ),
    ("fy", rf"\b(?:FY|CY)\s?'?(?P<y>{_Y}|\d\d){_NA}"),
    ("fiscal", rf"\b(?i:fiscal)\s(?:(?i:year)\s)?(?P<y>{_Y}){_NA}"),
    ("range", rf"{_NB}(?P<y>{_Y})\s?[-–~/]\s?(?P<y2>{_Y}|\d\d){_NA}"),
    ("ko_y", rf"(?P<y>{_Y})\s?년(?:도)?"),
    ("ko_q0", r"(?<!\d)(?P<q>[1-4])\s?분기"),
    ("ko_h0", r"(?P<h>상|하)반기"),
    ("q0", r"\bQ(?P<q>[1-4])\b"),
    (
        "year",
        rf"{_NB}(?P<y>{_Y})(?![A-Za-z0-9_%]|[.,]\d|\)?\s?(?:%|percent|thousand|million|billion|trillion|"
        rf"mn|bn|tn|[조억만천]|원|달러|달러))",
    ),
]


def _lead(name: str) -> str:
    if name in ("mdy", "my", "md", "qy", "q0", "hy", "fy"):
        return "U"
    if name in ("oq", "oh", "fiscal", "hy", "nine"):
        return "W"
    if name == "ko_h0":
        return "K"
    return "D"


#: Leading-character guards keep the alternation cheap: each branch group is tried only where
#: its first character can start (a digit, a capital, a word, 상/하).
_GUARDS = {"D": r"(?=\d)", "U": r"(?=[JFMASONDQHC])", "W": r"(?=[FfSsTtH1-4])", "K": r"(?=[상하])"}
_GROUP_NAMES: dict[str, list[str]] = {}
_branches: dict[str, list[str]] = {"D": [], "U": [], "W": [], "K": []}
for _name, _pat in _PATTERNS:
    _renamed = _pat.replace("(?P<", f"(?P<{_name}_")
    _GROUP_NAMES[_name] = re.findall(rf"\(\?P<{_name}_(\w+)>", _renamed)
    _branches[_lead(_name)].append(f"(?P<_{_name}>{_renamed})")
_DATE_RE = re.compile("|".join(f"{_GUARDS[k]}(?:{'|'.join(v)})" for k, v in _branches.items() if v))
#: The leading guard holds the first character of every branch (same matches, faster scan).
_AS_OF = re.compile(r"(?=[aA기현])(?:\bas\s+(?:of|at)\b|기준|현재)", re.I)


@dataclass(slots=True)
class DateMention:
    """One date or period stated in text, as one or more canonical keys (a range gives two).

    Treat as immutable (not frozen only because frozen dataclasses are slower to build)."""

    text: str
    start: int
    end: int
    keys: tuple[str, ...]


def _year(raw: str) -> int:
    y = int(raw)
    return 2000 + y if y < 100 else y


def _keys(name: str, g: dict[str, str | None]) -> tuple[str, ...]:
    y = g.get("y")
    yy = _year(y) if y else None
    if name in ("ymd", "ko_ymd", "mdy", "dmy"):
        mon = g.get("mon")
        m = _MONTHS[mon[:3].lower()] if mon else int(g["m"] or 0)
        d = int(g["d"] or 0)
        try:
            _dt.date(yy or 2000, m, d)
        except ValueError:
            return ()
        return (f"{yy:04d}-{m:02d}-{d:02d}",)
    if name == "md":
        m = _MONTHS[(g["mon"] or "")[:3].lower()]
        d = int(g["d"] or 0)
        if not 1 <= d <= 31:
            return ()
        return (f"--{m:02d}-{d:02d}",)
    if name in ("ko_ym", "my", "ym"):
        mon = g.get("mon")
        m = _MONTHS[mon[:3].lower()] if mon else int(g["m"] or 0)
        return (f"{yy:04d}-{m:02d}",)
    if name in ("ko_q", "yq", "yq2", "qy", "qy2", "oq", "ko_q0", "q0"):
        q_text = g.get("q")
        q = int(q_text) if q_text else _ORD[(g["o"] or "").lower()]
        return (f"{yy:04d}Q{q}",) if yy else (f"*Q{q}",)
    if name in ("ko_9m", "y9m", "m9y", "nine"):
        return (f"{yy:04d}Y9M",) if yy else ()
    if name in ("ko_h", "hy", "yh", "oh", "ko_h0"):
        h = (g.get("h") or g.get("o") or "").lower()
        half = 1 if h in ("상", "h1", "1h", "first") else 2
        return (f"{yy:04d}H{half}",) if yy else ()
    if name == "range" and yy is not None:
        y2 = g["y2"] or ""
        y2i = int(y2) if len(y2) == 4 else (yy // 100) * 100 + int(y2)
        if y2i <= yy:
            return ()
        return (f"{yy:04d}", f"{y2i:04d}")
    if yy:
        return (f"{yy:04d}",)
    return ()


#: Where a date can start: a digit run, a month name, Q/H (quarters, halves), FY/CY, an ordinal
#: or "fiscal", 상/하반기. The full pattern is tried only at these anchors (a literal-branch
#: search is far cheaper than an alternation with guards at every position). This and
#: ``_DIGIT_ANCHOR`` are pattern text, only ever matched as parts of ``_ANCHOR``.
_ANCHOR_WORD = (
    r"Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Q|H|FY|CY|first|First|second|Second"
    r"|third|Third|fourth|Fourth|fiscal|Fiscal|상반기|하반기"
)
#: Digit runs that can start a date: a run starting 19/20 (a year), or a run of one or two digits
#: followed by a blank, an ordinal suffix, "Q" or 분 (16 December, 1st quarter, 4Q08, 3분기).
#: Other runs ("58" of "58,684.5", "10" of "10-K") cannot start any branch of ``_DATE_RE``.
_DIGIT_ANCHOR = r"(?<!\d)(?:19|20|\d\d?(?!\d)(?=[\ssnrtQM분]))"
#: Both kinds of anchor in one pattern (a digit anchor and a word anchor never start at the same
#: character, and neither consumes a character the other could start at), found in text order.
#: The leading guard holds the first character of every branch (same matches, faster scan).
_ANCHOR = re.compile(f"(?=[\\dJFMASONDQHCTfst상하])(?:(?P<d>{_DIGIT_ANCHOR})|{_ANCHOR_WORD})")
#: The named groups of each branch, as (key, group name) pairs.
_GROUPS: dict[str, tuple[tuple[str, str], ...]] = {
    name: tuple((k, f"{name}_{k}") for k in keys) for name, keys in _GROUP_NAMES.items()
}

#: The same as (keys, full group names), for one ``m.group(*names)`` call per match.
_GROUP_ARGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    name: (tuple(k for k, _ in pairs), tuple(f for _, f in pairs))
    for name, pairs in _GROUPS.items()
}


def find_dates(text: str) -> list[DateMention]:
    """Every date or period stated in ``text`` (the first reading that fits at each anchor)."""
    out: list[DateMention] = []
    last = -1
    match = _DATE_RE.match
    # Anchors in text order; digit runs only where they start a token (not the "214" of
    # "63,214" or the "5" of "1.5").
    for am in _ANCHOR.finditer(text):
        pos = am.start()
        if pos < last:
            continue
        if (
            pos
            and am.lastgroup == "d"
            and text[pos - 1] in ",."
            and text[pos - 2 : pos - 1].isdigit()
        ):
            continue
        m = match(text, pos)
        if m is None:
            continue
        name = m.lastgroup
        if not name:
            continue
        name = name[1:]
        keys_of, fulls = _GROUP_ARGS[name]
        if len(fulls) == 1:
            g = {keys_of[0]: m.group(fulls[0])}
        else:
            g = dict(zip(keys_of, m.group(*fulls), strict=True))
        keys = _keys(name, g)
        if keys:
            out.append(DateMention(m.group(), m.start(), m.end(), keys))
            last = m.end()
    # Korean periods need Hangul or an "H" (1H24): ASCII text without "H" holds none.
    if "H" not in text and text.isascii():
        return out
    return korean.periods(text, out, DateMention)


def find_as_of(text: str) -> list[tuple[int, int]]:
    """Spans of "as of" / "as at" phrases."""
    # Case-insensitive "as" is [aA][sSſ]; skip the (case-insensitive, slow) search without it.
    if "기준" not in text and "현재" not in text:
        low = text.lower()
        if "as" not in low and "aſ" not in low:
            return []
    return [(m.start(), m.end()) for m in _AS_OF.finditer(text)]


def expand(key: str) -> set[str]:
    """A ref date's key and the keys of every period containing it."""
    out = {key}
    if len(key) == 10 and key[4] == "-" and key[:4].isdigit():
        y, m = key[:4], int(key[5:7])
        out |= {key[:7], f"{y}Q{(m - 1) // 3 + 1}", f"{y}H{1 if m <= 6 else 2}", y, "--" + key[5:]}
        out.add(f"*Q{(m - 1) // 3 + 1}")
    elif len(key) == 7 and key[4] == "-":
        y, m = key[:4], int(key[5:7])
        out |= {f"{y}Q{(m - 1) // 3 + 1}", f"{y}H{1 if m <= 6 else 2}", y, f"*Q{(m - 1) // 3 + 1}"}
    elif len(key) == 6 and key[4] == "Q":
        q = int(key[5])
        out |= {f"{key[:4]}H{1 if q <= 2 else 2}", key[:4], f"*Q{q}"}
    elif len(key) == 6 and key[4] == "H" or len(key) == 7 and key[4:] == "Y9M":
        out.add(key[:4])
    return out


def date_keys_of(value: object) -> set[str]:
    """All expanded date keys a ref field carries (a string, a date, a year number)."""
    if value is None or isinstance(value, bool):
        return set()
    if isinstance(value, _dt.datetime | _dt.date):
        return expand(value.strftime("%Y-%m-%d"))
    if isinstance(value, int) and 1900 <= value <= 2099:
        return expand(str(value))
    if isinstance(value, float) and value.is_integer() and 1900 <= value <= 2099:
        return expand(str(int(value)))
    if isinstance(value, str):
        return set(_str_date_keys(value))
    return set()


def date_keys_frozen(value: object) -> frozenset[str]:
    """``date_keys_of`` as a frozenset, cached for strings (periods and column names repeat)."""
    if type(value) is str:
        return _str_date_keys(value)
    return frozenset(date_keys_of(value))


#: A field or column name that holds periods ("period", "fiscal year", "기준일"): its values are
#: dates, and a 1900-2099 in it is a year.
PERIOD_NAME = re.compile(
    r"\b(?:period|year|date|quarter|as\s?of|fy|fiscal)\b|기간|연도|년도|분기|기준일|일자|날짜", re.I
)


@lru_cache(maxsize=4096)
def is_period_name(name: str) -> bool:
    """Whether a payload field or table column called ``name`` holds periods."""
    # a dataset's column names join their words with "_" (period_label, fiscal_year)
    return PERIOD_NAME.search(name.replace("_", " ") if "_" in name else name) is not None


@lru_cache(maxsize=8192)
def _str_date_keys(value: str) -> frozenset[str]:
    out: set[str] = set()
    for dm in find_dates(value):
        for k in dm.keys:
            out |= expand(k)
    return frozenset(out)

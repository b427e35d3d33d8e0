"""Metric words, for the GATE's binding: what a claim says it measures and what a location is
labelled, as sets of normalised words that can be compared.

Normalisation: lower case, split at anything but letters and digits (``unemployment_rate`` is
two words), numbers dropped, a light English stemmer (plural, -ing/-ed, a few irregular verbs
and their nouns: "grew", "growth" -> "grow"), and stop words dropped: function words, verbs of
reporting ("was", "reached", "stood"), quantity words that name no metric ("figure", "value",
"amount") and period, unit and scale words (they are checked as period and unit, not as metric).
Korean words keep their stem and are compared by prefix (a particle may follow: 매출은 ~ 매출);
an English label word of three letters or more matches the claim words it begins (a column
name's abbreviation: "rev" ~ "revenue", "unemp" ~ "unemployment").
"""

from __future__ import annotations

import re
from functools import lru_cache

from refgate.refs import CITATION_BRACKET

from . import korean

_WORD = re.compile(r"[a-z]+|[가-힣]+")
#: A ref id written outside a citation bracket (``val_0123456789``): no metric word (nor is a
#: citation, ``refs.CITATION_BRACKET``).
_BARE_REF_ID = re.compile(r"\b[a-z]{2,5}_[0-9a-f]{3,}\b")

_STOP_WORDS = """
    a an the of in on at to for from by with and or as is are was were be been being has have had
    it its this that these those their there which who whom whose what when where how than then
    per into over under about above below after before during between within up down out off
    same also only just still more less most least much many some any each all both very
    so not no nor but if while since until via vs versus
    value values figure figures amount amounts number numbers level levels report
    reports reporting data dataset result results overall respectively approximately
    about around nearly roughly almost
    reach reached reaching stood stand stands come came comes amounted amount totaled totalled
    record recorded show showed shown shows saw see seen rose rise rises risen fell fall falls
    fallen increase increased decrease decreased decline declined climb climbed drop dropped
    jump jumped go went gone hit hits end ended ending change changed remain remained stay stayed
    get got gave give given make made do did does
    year years yearly annual annually quarter quarters quarterly month months monthly half fiscal
    fy period periods date dates day days week weeks ytd q1 q2 q3 q4 h1 h2
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    percent percentage percentages pct point points pp bp bps basis times multiple
    thousand thousands million millions billion billions trillion trillions mn bn tn mm mio k m b
    usd eur gbp jpy krw cny rmb dollar dollars euro euros yen won pound pounds
    company companys companies firm group
"""
_STOP = frozenset(_STOP_WORDS.split())
#: Korean scale and currency characters: a word made of them only is a unit (조원, 억, 천만).
_KO_UNITS = frozenset("십백천만억조원달러엔위안")
#: Words that say which of several quantities less than the rest ("total revenue" ~ "revenue").
WEAK = frozenset({"total", "consolidated", "reported", "net", "other"})

_IRREGULAR = {
    "grew": "grow",
    "grown": "grow",
    "growth": "grow",
    "grows": "grow",
    "growing": "grow",
    "sales": "sale",
    "losses": "loss",
    "expenses": "expense",
    "incomes": "income",
    "employees": "employee",
    "liabilities": "liability",
    "activities": "activity",
    "companies": "company",
    "taxes": "tax",
    "inventories": "inventory",
    "equities": "equity",
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light stem: enough that "revenues", "revenue" and "employees", "employee" meet."""
    w = _IRREGULAR.get(word)
    if w is not None:
        return w
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    return word


#: Abbreviations common in column names and the words they stand for (a label holding one
#: also holds those words).
ABBREVIATIONS: dict[str, str] = {
    "eps": "earnings per share",
    "cpi": "consumer price index inflation",
    "ppi": "producer price index",
    "gdp": "gross domestic product",
    "capex": "capital expenditure",
    "opex": "operating expense",
    "ebit": "earnings before interest tax operating income",
    "ebitda": "earnings before interest tax depreciation amortization",
    "roe": "return on equity",
    "roa": "return on assets",
    "cogs": "cost of goods sold sales",
    "sga": "selling general administrative",
    "yoy": "year over year growth",
    "qoq": "quarter over quarter growth",
    "fcf": "free cash flow",
    "nav": "net asset value",
    "aum": "assets under management",
    "pe": "price earnings ratio",
    "fx": "foreign exchange rate",
    "unemp": "unemployment",
    "unrate": "unemployment rate",
    "rev": "revenue",
    "emp": "employment employees",
    "mktcap": "market capitalization",
}


#: Korean account and basis names of DART statements (fnlttSinglAcntAll ``account_nm``, 연결/별도)
#: and the English words an analyst writes for them: a label holding one also holds those words.
KOREAN_ACCOUNTS: dict[str, str] = {
    "매출액": "revenue sales",
    "매출": "매출액 revenue sales",
    # the names companies give their revenue line: 영업수익 (telecoms, holdings), 수익(매출액)
    "영업수익": "매출액 revenue sales",
    "매출및지분법손익": "매출액 revenue sales",
    "수익": "revenue",
    "매출원가": "cost sales",
    "매출총이익": "gross profit",
    "영업이익": "operating profit income",
    "영업손익": "영업이익 operating profit income",
    "영업이익률": "operating margin",
    "당기순이익": "net income profit",
    "당기순손익": "당기순이익 net income profit",
    "당기연결순이익": "당기순이익 net income profit",
    "연결당기순이익": "당기순이익 net income profit",
    "순이익": "net income profit",
    "자산총계": "total assets",
    "부채총계": "total liabilities",
    "자본총계": "total equity",
    "증감률": "change growth",
    "연결": "consolidated",
    "별도": "separate standalone parent",
}


#: A Korean account name's usual name, where the glossary gives one (영업수익: 매출액).
_KOREAN_USUAL = {k: v.split()[0] for k, v in KOREAN_ACCOUNTS.items() if not v.split()[0].isascii()}


def usual_korean_names(words: frozenset[str]) -> frozenset[str]:
    """``words`` with each Korean account name put as it is usually written (당기순손익:
    당기순이익), or ``words`` itself when none has another name."""
    if not any(w in _KOREAN_USUAL for w in words):
        return words
    return frozenset(_KOREAN_USUAL.get(w, w) for w in words)


@lru_cache(maxsize=65536)
def label_words(text: str) -> frozenset[str]:
    """A place's label words, abbreviations expanded ("eps" also holds "earning", "share"), and
    a Korean account's English words (매출액: revenue, sales)."""
    words = metric_words(text)
    extra = [metric_words(ABBREVIATIONS[w]) for w in words if w in ABBREVIATIONS]
    if not text.isascii():
        extra += [metric_words(KOREAN_ACCOUNTS[w]) for w in words if w in KOREAN_ACCOUNTS]
    return words.union(*extra) if extra else words


@lru_cache(maxsize=65536)
def metric_words(text: str) -> frozenset[str]:
    """The metric words of a text (a claim's clause, a row label, a value name, a description)."""
    out = set()
    low = text.lower()
    if "[" in low:
        low = CITATION_BRACKET.sub(" ", low)
    if "_" in low:
        low = _BARE_REF_ID.sub(" ", low)
    for w in _WORD.findall(low.replace("_", " ")):
        if w in _STOP or len(w) < 2 or (not w.isascii() and _KO_UNITS.issuperset(w)):
            continue
        s = stem(w)
        if s not in _STOP:
            if s.isascii():
                out.add(s)
            else:
                out.update(korean.metric_forms(s))
    return frozenset(out)


def _same(claim: str, label: str) -> bool:
    """Does a claim's word name a label's word? Equal, or (Korean) the same stem with a
    particle after it (매출은 ~ 매출), or (English) the label abbreviates it ("rev", "unemp")."""
    if claim == label:
        return True
    if claim.isascii() != label.isascii():
        return False
    if not claim.isascii():
        # a particle after the label's word (매출액은 ~ 매출액), or one syllable more on the
        # label's (매출 ~ 매출액); not a longer compound (연결 ~ 연결당기순이익, 매출 ~ 매출원가)
        return min(len(claim), len(label)) >= 2 and (
            claim.startswith(label) or (label.startswith(claim) and len(label) - len(claim) <= 1)
        )
    return (len(label) >= 3 and claim.startswith(label)) or (
        len(claim) >= 4 and label.startswith(claim)
    )


@lru_cache(maxsize=1 << 16)
def overlap(claim: frozenset[str], label: frozenset[str]) -> int:
    """How many of the claim's metric words the label holds (weak words count for nothing)."""
    if not claim or not label:
        return 0
    n = 0
    # Weak words count only in a claim that has no other ("Other, net": "net").
    skip = WEAK if not claim <= WEAK else frozenset()
    for w in claim:
        if w in skip:
            continue
        if w in label or any(_same(w, x) for x in label):
            n += 1
    return n


#: Words of a label that make its bare numbers percentages rather than amounts.
PERCENT_WORDS = frozenset(
    {"rate", "ratio", "margin", "yield", "grow", "change", "return", "proportion"}
)


@lru_cache(maxsize=1 << 16)
def named(claim: frozenset[str], core: frozenset[str]) -> bool:
    """Does the claim name every (non-weak) word of a location's own label?"""
    strong = [w for w in core if w not in WEAK] or list(core)
    if not strong:
        return False
    for w in strong:
        if w in claim:
            continue
        if not any(_same(x, w) for x in claim):
            return False
    return True


@lru_cache(maxsize=1 << 14)
def strong_count(claim: frozenset[str]) -> int:
    """How many words ``overlap`` can count for a claim (the most any place can share)."""
    return len(claim) if claim <= WEAK else len(claim - WEAK)

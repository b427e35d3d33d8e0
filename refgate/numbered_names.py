"""Names that contain numbers ("S&P 500", "Form 10-K", "Rule 10b-5"): the built-in list and the
check of a workspace's additions (``[gate] names`` in ``refgate.toml``).

The GATE (``refgate.nodes.gate.names``) masks these names before it reads numbers and dates.
``check_names`` rejects an addition that could hide a real number: one with no digit, or with
only scale, unit or currency words beside its digits ("500 million", "USD 500", "5 %").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Index, list, form and rule names that contain numbers.
DEFAULT_NAMES: tuple[str, ...] = (
    "S&P 500",
    "S&P 400",
    "S&P 600",
    "S&P 100",
    "S&P 1500",
    "Russell 1000",
    "Russell 2000",
    "Russell 3000",
    "FTSE 100",
    "FTSE 250",
    "FTSE 350",
    "Nasdaq-100",
    "Nasdaq 100",
    "NASDAQ-100",
    "DAX 40",
    "CAC 40",
    "IBEX 35",
    "AEX 25",
    "SMI 20",
    "Euro Stoxx 50",
    "EURO STOXX 50",
    "Stoxx 600",
    "STOXX Europe 600",
    "Nikkei 225",
    "TOPIX 100",
    "KOSPI 200",
    "KOSDAQ 150",
    "KRX 300",
    "코스피 200",
    "코스닥 150",
    "Hang Seng 50",
    "CSI 300",
    "CSI 500",
    "SSE 50",
    "Nifty 50",
    "Sensex 30",
    "ASX 200",
    "S&P/ASX 200",
    "S&P/TSX 60",
    "TSX 60",
    "MSCI ACWI",
    "Fortune 500",
    "Fortune 1000",
    "Fortune Global 500",
    "Forbes 2000",
    "Global 2000",
    "Inc. 5000",
    "Form 10-K",
    "Form 10-Q",
    "Form 8-K",
    "Form 20-F",
    "Form 40-F",
    "Form 13F",
    "Form S-1",
    "Schedule 13D",
    "Schedule 13G",
    "Rule 10b-5",
    "Rule 10b5-1",
    "Rule 144A",
    "Rule 144",
    "Rule 15c3-3",
    "Section 16",
    "Section 13(d)",
    "Section 404",
    "Basel III",
    "IFRS 9",
    "IFRS 15",
    "IFRS 16",
    "IFRS 17",
    "ASC 606",
    "ASC 842",
    "Covid-19",
    "COVID-19",
    "G7",
    "G20",
)

#: Words that, alone beside the digits, make a "name" a quantity.
_QUANTITY_WORDS = frozenset(
    [
        "thousand",
        "thousands",
        "million",
        "millions",
        "billion",
        "billions",
        "trillion",
        "trillions",
        "k",
        "m",
        "mn",
        "bn",
        "b",
        "tn",
        "percent",
        "pct",
        "pp",
        "bp",
        "bps",
        "basis",
        "points",
        "point",
        "usd",
        "eur",
        "gbp",
        "jpy",
        "krw",
        "cny",
        "rmb",
        "dollars",
        "dollar",
        "euro",
        "euros",
        "yen",
        "won",
        "x",
        "times",
        "천",
        "만",
        "억",
        "조",
        "원",
        "달러",
        "엔",
        "위안",
        "퍼센트",
        "배",
    ]
)


def check_names(names: Iterable[object], where: str = "gate.names") -> tuple[str, ...]:
    """Validate user-supplied names; raise ``ValueError`` naming the bad entry."""
    out: list[str] = []
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise ValueError(f"{where}[{i}]: a name is a string, got {type(name).__name__}")
        text = " ".join(name.split())
        if not text or len(text) > 80:
            raise ValueError(f"{where}[{i}]: a name is 1 to 80 characters, got {name!r}")
        if not any(ch.isdigit() for ch in text):
            raise ValueError(
                f"{where}[{i}]: {name!r} holds no digit (only names with numbers need listing)"
            )
        words = [w.lower() for w in re.findall(r"[^\W\d_]+", text)]
        if not words or all(w in _QUANTITY_WORDS for w in words) or sum(map(len, words)) < 2:
            raise ValueError(
                f"{where}[{i}]: {name!r} reads as a quantity, not a name (a name needs words "
                "besides scale, unit or currency words)"
            )
        out.append(text)
    return tuple(out)

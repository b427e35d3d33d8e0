"""Korean number and period forms (refgate/gate/korean.py): triangle signs, direction words,
profit words, and half years / quarters with two-digit years."""

from __future__ import annotations

import pytest

from refgate.gate.dates import find_dates
from refgate.gate.numbers import find_numbers


@pytest.mark.parametrize(
    ("text", "shown", "signed"),
    [
        ("영업손실 △1,214억원", -1214.0, True),
        ("(△121,400)", -121400.0, True),
        ("▽ 35", -35.0, True),
        ("▲3.2%", 3.2, True),
        ("전년 대비 14.3% 감소", -14.3, True),
        ("4조 3,212억원 줄었다", -4.3212, True),
        ("12%가량 증가", 12.0, True),
        ("11.8%p 하락", -11.8, True),
        ("2.5%로 하락", 2.5, False),  # fell *to* 2.5%: a level
        ("영업이익은 6,567억원", 6567.0, True),
        ("영업손실은 1,214억원", 1214.0, False),
        ("매출액은 25조 8,935억원", 25.8935, False),
        ("Revenue fell 14.3%", 14.3, False),  # English text is not read by these rules
    ],
)
def test_signs(text, shown, signed):
    (num,) = find_numbers(text)
    assert num.shown == pytest.approx(shown) and num.signed is signed


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("1H24 매출", [("2024H1",)]),
        ("2H23", [("2023H2",)]),
        ("1H 2024 results", [("2024H1",)]),
        ("24년 3분기", [("2024Q3",)]),
        ("'24년 하반기", [("2024H2",)]),
        ("2024년 3분기", [("2024Q3",)]),
        ("3Q24", [("2024Q3",)]),
        ("FY2024", [("2024",)]),
        ("2024.12.31 기준", [("2024-12-31",)]),
        ("H1 2024", [("2024H1",)]),
        ("2023년 매출, 전년(30조원) 대비", [("2023",), ("2022",)]),
        ("2024년 3분기, 전년 동기에는", [("2024Q3",), ("2023Q3",)]),
        ("FY2023 당기 매출과 전기 매출", [("2023",), ("2023",), ("2022",)]),
        ("2023년 매출은 전년 대비 14.3% 감소", [("2023",)]),  # the base of a change
        ("2023년 전기차 판매, 당기순이익", [("2023",)]),  # other words
        ("전년 매출", []),  # no stated period to count from
    ],
)
def test_periods(text, keys):
    assert [d.keys for d in find_dates(text)] == keys


def test_period_search_near_keys_finds_every_period():
    """``korean._period_matches`` searches near each 년 and H only: the same matches as a scan of
    the whole text, on random strings of period parts."""
    import random

    from refgate.gate import korean

    rng = random.Random(5)

    def pick(*options: str) -> str:
        return rng.choice(options)

    def part() -> str:
        blank = pick("", " ", "\t", "  ")
        year = pick("", "'") + pick("2024", "24", "1999", "7", "123", "a1")
        if rng.random() < 0.3:
            return pick("1", "2", "3", "x") + "H" + blank + year + pick("", "a", "%", " ")
        tail = pick("3", "4", "5") + pick("", " ", "  ") + "분기" if rng.random() < 0.6 else ""
        return year + blank + "년" + pick("", " ") + (tail or pick("상", "하", "") + "반기")

    for _ in range(20000):
        text = "".join(part() + pick("", " ", "x", "_", "9", "'") for _ in range(rng.randint(0, 3)))
        want = [(m.span(), m.groupdict()) for m in korean._PERIOD.finditer(text)]
        got = [(m.span(), m.groupdict()) for m in korean._period_matches(text)]
        assert got == want, text

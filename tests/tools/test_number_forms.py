"""Numbers read in every written form and matched by value (``refgate.tools.number_forms``)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from refgate.tools.number_forms import matches, mentions, numbers_in, own_numbers

VALUE = Decimal("98765.4321")


def carries(text: str, value: Decimal = VALUE, digits: int = 3) -> bool:
    return any(matches(m, value, min_digits=digits) for m in mentions(text))


@pytest.mark.parametrize(
    "text",
    [
        "98765.4321", "98,765.4321", "98.765,4321", "98 765.4321", "98\u202f765,4321",
        "98'765.4321", "USD98765.4321", "$98,765.43", "98765 4321", "987654321",
        "98.765 thousand", "98.765 Thousands", "98.8k", "0.0987654321 million", "98765",
        "9.87654321억", "9876543.21%",
    ],
)  # fmt: skip
def test_every_written_form_of_the_value_matches(text):
    assert carries(text), text


@pytest.mark.parametrize(
    "text",
    ["2024", "top 10", "S&P 500", "98764", "98.7", "1 2 3 4 5 6", "12345", "98800000"],
)
def test_other_numbers_do_not(text):
    assert not carries(text), text


def test_small_numbers_years_and_percent_counts_carry_nothing_by_value():
    assert all(m.small for m in mentions("in 2023 the top 25% of 10 firms, 500 and 0.5"))
    assert not any(m.small for m in mentions("9.6% and 123"))


def test_printed_output_and_the_questions_own_numbers():
    assert list(numbers_in("realgdp  98,765.4321\n0  12")) == [VALUE, 0, 12]
    found = mentions("revenue 98765.4321 and 12345.678")
    kept = own_numbers(found, ["Why was revenue 98,765.4321?"])
    assert [m.text for m in kept] == ["12345.678"]

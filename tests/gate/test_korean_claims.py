"""The GATE on Korean claims (tests/support/korean_claims.py): at least 99% of right claims
accepted and 99% of wrong ones blocked, on the companies the Korean rules were written against
and on the held-out ones, counted separately."""

from __future__ import annotations

import pytest

from refgate.gate import check_answer
from tests.support.korean_claims import HELD_OUT, TUNING, claims


def rates(companies):
    accepted = blocked = right = wrong = 0
    misses = []
    for claim, refs, is_right in claims(companies):
        passed = check_answer(claim, refs).passed
        if is_right:
            right += 1
            accepted += passed
        else:
            wrong += 1
            blocked += not passed
        if passed != is_right:
            misses.append(claim)
    return accepted / right, blocked / wrong, right, wrong, misses


@pytest.mark.parametrize("split", [TUNING, HELD_OUT], ids=["tuning", "held-out"])
def test_korean_claims_right_accepted_and_wrong_blocked(split):
    accepted, blocked, right, wrong, misses = rates(split)
    assert right >= 20 and wrong >= 20
    assert accepted >= 0.99 and blocked >= 0.99, misses

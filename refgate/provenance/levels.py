"""One scale of three levels for what the content scans find: how sure the injection scan is of
a signal (its confidence) and how grave a unicode finding is (its severity)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Level = Literal["high", "medium", "low"]
RANK: dict[Level, int] = {"high": 3, "medium": 2, "low": 1}


def highest(levels: Iterable[Level]) -> Level | None:
    """The highest of ``levels`` (None when there are none)."""
    return max(levels, key=RANK.__getitem__, default=None)

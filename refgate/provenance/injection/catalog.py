"""Tool names the detector recognises: the tool name table (``refgate.catalog.tool_names``,
a layer below), or the names a test sets with :func:`register_tool_names`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from refgate.catalog.tool_names import CATALOG

_NAMES: list[tuple[str, ...]] = [tuple(CATALOG)]
_LISTENERS: list = []


def register_tool_names(names: Iterable[str]) -> None:
    """Make ``names`` (the tool catalog) the tool names the detector looks for."""
    new = tuple(names)
    if new == _NAMES[0]:
        return
    _NAMES[0] = new
    tool_names.cache_clear()
    for clear in _LISTENERS:
        clear()


def on_change(clear) -> None:
    """Register a cache-clearing callback run when the tool names change."""
    _LISTENERS.append(clear)


@lru_cache(maxsize=1)
def tool_names() -> tuple[tuple[str, ...], dict[str, str], dict[tuple[str, str], str]]:
    """(all names, exact normalised identifier -> name, split (first, second) -> name)."""
    names = _NAMES[0]
    exact: dict[str, str] = {}
    split: dict[tuple[str, str], str] = {}
    for name in names:
        parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
        parts = [p for p in parts if p] or [name.lower()]
        joined = "".join(parts)
        if len(parts) >= 2 or len(joined) >= 8:
            exact[joined] = name
        if len(parts) == 2:
            split[(parts[0], parts[1])] = name
    return names, exact, split


def generic_tool_names() -> list[str]:
    """Catalog names that are plain words (``read``): only explicit call syntax counts."""
    names, exact, _ = tool_names()
    taken = set(exact.values())
    return [n for n in names if n not in taken]

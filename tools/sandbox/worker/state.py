"""The template's state, set once by ``init`` and inherited by every call it forks."""

from __future__ import annotations


class State:
    """The template's state, set once by ``init``."""

    config: dict = {}
    frames: dict = {}
    pd = None
    np = None

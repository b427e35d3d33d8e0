"""The template's state, set once by ``init`` and inherited by every call it forks."""

from __future__ import annotations

from typing import Any


class State:
    """The template's state, set once by ``init``."""

    config: dict[str, Any] = {}
    frames: dict[str, Any] = {}
    #: pandas and numpy, imported by ``init`` (never on the host).
    pd: Any = None
    np: Any = None

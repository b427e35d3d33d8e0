"""No cyclic garbage collection while a GATE check runs.

A check allocates many short-lived objects (the units of an answer, each cited ref's index, the
claims' quantities): CPython's cyclic collector runs every 700 net allocations and, every few
runs, walks older generations too (in a server process, a full walk of its whole heap). A check
creates no reference cycles of its own to reclaim (its temporaries die by reference count), so
these walks find nothing. While any check runs the collector is paused; it is resumed when the
last concurrent check ends, only if it was on when the first began (a caller that turned it off
keeps it off). Measured in docs/benchmarks.md ("GATE speed", "Binding").
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_running = 0
_resume = False


def _pause() -> None:
    global _running, _resume
    with _lock:
        if _running == 0:
            _resume = gc.isenabled()
            gc.disable()
        _running += 1


def _end() -> None:
    global _running
    with _lock:
        _running -= 1
        if _running == 0 and _resume:
            gc.enable()


def without_collection(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run with the cyclic collector paused (see the module docstring)."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        _pause()
        try:
            return fn(*args, **kwargs)
        finally:
            _end()

    return run

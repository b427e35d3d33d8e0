"""``Closing``: the ``with`` form of an object that holds a resource and has a ``close()``."""

from __future__ import annotations

from typing import Self


class Closing:
    """A mixin for a class with ``close()``: ``with X(...) as x:`` gives the object itself, and
    leaving the block, by error or not, calls ``x.close()`` (the error, if any, propagates)."""

    def close(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define close()")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

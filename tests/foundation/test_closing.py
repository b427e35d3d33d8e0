"""``refgate.closing.Closing``: ``with`` gives the object and always closes it."""

from __future__ import annotations

import pytest

from refgate.closing import Closing


class _Resource(Closing):
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_with_gives_the_object_and_closes_it_once() -> None:
    res = _Resource()
    with res as got:
        assert got is res
        assert res.closed == 0
    assert res.closed == 1


def test_an_error_in_the_block_closes_and_propagates() -> None:
    res = _Resource()
    with pytest.raises(KeyError), res:
        raise KeyError("x")
    assert res.closed == 1


def test_a_class_without_close_says_so() -> None:
    with pytest.raises(NotImplementedError, match="_Bare must define close"), _Bare():
        pass


class _Bare(Closing):
    pass

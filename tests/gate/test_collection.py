"""The cyclic collector is paused while a GATE check runs and resumed as it was after it."""

from __future__ import annotations

import gc
import threading

import pytest

from refgate.gate import check, check_answer
from refgate.gate.collection import without_collection
from refgate.refs import Ref

REF = Ref(id="val_1", kind="valueRef", payload={"values": {"gdp": 2.5}, "units": {"gdp": "%"}})


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_a_check_runs_with_the_collector_paused_and_resumes_it(monkeypatch):
    seen = []
    real_split = check.split_units

    def split(*args, **kwargs):
        seen.append(gc.isenabled())
        return real_split(*args, **kwargs)

    monkeypatch.setattr(check, "split_units", split)
    assert check_answer("GDP grew 2.5% [val_1].", [REF]).passed
    assert seen == [False] and gc.isenabled()
    seen.clear()

    @without_collection
    def probe() -> None:
        seen.append(gc.isenabled())

    probe()
    assert seen == [False] and gc.isenabled()


def test_the_collector_resumes_when_the_check_raises():
    @without_collection
    def fails() -> None:
        raise RuntimeError("bad ref")

    with pytest.raises(RuntimeError):
        fails()
    assert gc.isenabled()
    with pytest.raises(TypeError):
        check_answer(None, [REF])  # type: ignore[arg-type]
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off():
    gc.disable()
    assert check_answer("GDP grew 2.5% [val_1].", [REF]).passed
    assert not gc.isenabled()


def test_overlapping_checks_resume_the_collector_only_when_the_last_ends():
    first_in, second_done, states = threading.Event(), threading.Event(), []

    @without_collection
    def long_check() -> None:
        first_in.set()
        second_done.wait(10)
        states.append(("first, after the second ended", gc.isenabled()))

    @without_collection
    def short_check() -> None:
        states.append(("second", gc.isenabled()))

    t = threading.Thread(target=long_check)
    t.start()
    first_in.wait(10)
    short_check()
    states.append(("between", gc.isenabled()))
    second_done.set()
    t.join(10)
    assert states == [
        ("second", False),
        ("between", False),
        ("first, after the second ended", False),
    ]
    assert gc.isenabled()

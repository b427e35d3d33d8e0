"""The CLI's one-line view of a ref (``refgate ask``'s evidence table): every valueRef shape a
tool or a stored thread can hold, never an exception."""

from __future__ import annotations

from refgate.cli.ask import value_preview
from refgate.refs import Ref


def _value_ref(payload: dict) -> Ref:
    return Ref(id="v1", kind="valueRef", payload=payload)


def test_named_values_with_units_and_scale():
    ref = _value_ref(
        {"values": {"rate": 9.6, "prior": 6.0}, "units": {"rate": "%"}, "scale": "pct"}
    )
    assert value_preview(ref) == "rate=9.6 %, prior=6.0 (pct)"


def test_a_list_of_values_is_named_by_position():
    assert value_preview(_value_ref({"values": [9.6, 6.0]})) == "0=9.6, 1=6.0"


def test_a_lone_value_and_malformed_values_do_not_raise():
    assert value_preview(_value_ref({"value": 4.2})) == "value=4.2"
    assert value_preview(_value_ref({"values": "9.6"})) == "9.6"
    assert value_preview(_value_ref({"values": {"a": 1}, "units": "%"})) == "a=1"
    assert value_preview(_value_ref({})) == ""

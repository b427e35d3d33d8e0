import re

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from pydantic import ValidationError

from refgate.graph.state import WorkbenchState
from refgate.refs import (
    ID_HEX_LEN,
    KIND_PREFIX,
    REF_KINDS,
    Ref,
    RefLedger,
    as_ref_map,
    cited_ids,
    merge_refs,
    new_ref_id,
)


def test_only_id_kind_payload_are_required():
    ref = Ref(id="val_0123456789", kind="valueRef", payload={"values": {"x": 1}})
    assert ref.source_type == "internal" and ref.title == "" and ref.created_by == ""
    with pytest.raises(ValidationError):
        Ref(id="val_0123456789", kind="valueRef")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Ref(id="x", kind="noSuchRef", payload={})


def test_refs_are_immutable():
    ref = Ref.new("valueRef", {"values": {"x": 1}})
    with pytest.raises(ValidationError):
        ref.title = "changed"  # type: ignore[misc]


def test_ids_are_short_typed_and_do_not_collide():
    ids = {new_ref_id("valueRef") for _ in range(20000)}
    assert len(ids) == 20000
    assert all(re.fullmatch(rf"val_[0-9a-f]{{{ID_HEX_LEN}}}", i) for i in ids)
    assert set(KIND_PREFIX) == set(REF_KINDS)
    with pytest.raises(ValueError, match="unknown ref kind"):
        new_ref_id("nope")


def test_ids_that_cannot_be_cited_are_rejected():
    with pytest.raises(ValidationError, match="cannot be cited"):
        Ref(id="a b", kind="valueRef", payload={})


def test_merge_reducer_unions_and_refuses_clashes():
    a = Ref.new("valueRef", {"values": {"x": 1}})
    b = Ref.new("dateRef", {"date": "2008-12-16"})
    merged = merge_refs({a.id: a}, [b.model_dump()])
    # The ledger channel holds plain data (checkpointed without an allowlist), valid as refs.
    assert merged == {a.id: a.model_dump(mode="json"), b.id: b.model_dump(mode="json")}
    assert as_ref_map(merged) == {a.id: a, b.id: b}
    with pytest.raises(ValueError, match="kind"):
        merge_refs(merged, [{"id": "x_1", "kind": "nonsense", "payload": {}}])
    clash = Ref(id=a.id, kind="valueRef", payload={"values": {"x": 2}})
    with pytest.raises(ValueError, match="clash"):
        merge_refs(merged, {clash.id: clash})


def test_ledger_redraws_a_clashing_id():
    a = Ref.new("valueRef", {"values": {"x": 1}})
    ledger = RefLedger({a.id: a})
    other = Ref(id=a.id, kind="valueRef", payload={"values": {"x": 2}})
    added = ledger.add(other)
    assert added.id != a.id and added.payload == other.payload and len(ledger) == 2


def test_refs_survive_a_sqlite_checkpoint_round_trip(tmp_path):
    external = Ref.new(
        "docRef",
        {"doc_id": "20081216", "excerpt": "0 to 1/4 percent"},
        title="FOMC statement",
        source="documents/20081216.txt",
        source_type="external",
        created_by="work/EngineCall",
    )
    value = Ref.new(
        "valueRef",
        {"values": {"tbilrate": 0.12}, "units": {"tbilrate": "%"}, "period": "2008Q4"},
        source_type="internal",
        created_by="work",
    )

    def issue(state):
        return {"refs": {external.id: external, value.id: value}}

    builder = StateGraph(WorkbenchState)
    builder.add_node("issue", issue)
    builder.add_edge(START, "issue")
    path = tmp_path / "cp.sqlite"
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(str(path)) as saver:
        builder.compile(checkpointer=saver).invoke({"question": "q"}, config)
    with SqliteSaver.from_conn_string(str(path)) as saver:  # a fresh connection: real reload
        refs = as_ref_map(builder.compile(checkpointer=saver).get_state(config).values["refs"])
    assert refs[external.id] == external
    assert refs[external.id].source_type == "external"
    assert refs[value.id].model_dump() == value.model_dump()


def test_refs_are_hashable_and_equal_by_content():
    a = Ref.new("valueRef", {"values": {"x": 1}})
    same = Ref(**a.model_dump())
    assert a == same and hash(a) == hash(same)
    assert len({a, same, Ref.new("valueRef", {"values": {"x": 1}})}) == 2


def test_payloads_become_plain_data():
    import datetime as dt

    import numpy as np
    import pandas as pd

    ref = Ref.new(
        "tableRef",
        {
            "rows": [[np.int64(3), np.float64(2.5), pd.Timestamp("2009-09-30")]],
            "when": dt.date(2008, 12, 16),
            "arr": np.array([1, 2]),
        },
    )
    assert ref.payload == {
        "rows": [[3, 2.5, "2009-09-30T00:00:00"]],
        "when": "2008-12-16",
        "arr": [1, 2],
    }
    assert type(ref.payload["rows"][0][0]) is int
    assert type(ref.payload["rows"][0][1]) is float
    with pytest.raises(ValidationError, match="payload.bad"):
        Ref.new("valueRef", {"bad": object()})


def test_payload_nested_too_deeply_is_a_clear_error_and_a_gate_verdict():
    from refgate.gate import check_answer
    from refgate.refs import MAX_PAYLOAD_DEPTH

    deep: dict = {}
    cur = deep
    for _ in range(3000):  # deeper than Python's recursion limit
        cur["a"] = {}
        cur = cur["a"]
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_PAYLOAD_DEPTH} levels"):
        Ref.new("valueRef", {"deep": deep})
    ok = {"a": [1]}
    for _ in range(MAX_PAYLOAD_DEPTH - 3):  # with the payload and {"a": [1]}: MAX levels
        ok = {"a": ok}
    assert Ref.new("valueRef", {"ok": ok}).payload["ok"]["a"]
    report = check_answer(
        "Revenue was 5 [val_00000000a1].",
        [{"id": "val_00000000a1", "kind": "valueRef", "payload": {"values": {"x": 5}, "d": deep}}],
    )
    assert report.passed is False
    assert report.issues[0].code == "invalid_ref"


def test_the_report_cards_read_citations_as_the_gate_does():
    """One rule for what an answer cites (``refgate.refs.cited_ids``): ``[a; b]`` cites both,
    ``[a, page 3]`` is no citation, an id named in prose is no citation; the report's cards follow
    it in citation order."""
    from refgate.report.cards import build_cards

    refs = {
        i: {"id": i, "kind": "valueRef", "payload": {"values": {"x": 1}}}
        for i in ("val_a", "val_b", "val_c")
    }
    answer = "Before val_c, x was 1 [val_b; val_a]. Also [val_c, page 3]."
    assert cited_ids(answer, refs) == ["val_b", "val_a"]
    cited, _ = build_cards(answer, refs, None)
    assert [c["id"] for c in cited] == ["val_b", "val_a"]


def test_payload_of_reads_a_refs_payload_as_its_kinds_type_and_nothing_else():
    from refgate.payloads import PAYLOAD_TYPES, DatePayload, ValuePayload, payload_of
    from refgate.refs import REF_KINDS

    assert set(PAYLOAD_TYPES) <= set(REF_KINDS)
    ref = Ref.new("valueRef", {"values": {"x": 5}})
    assert payload_of(ref, ValuePayload) == {"values": {"x": 5}}
    with pytest.raises(ValueError, match=r"is a valueRef, not a dateRef"):
        payload_of(ref, DatePayload)
    with pytest.raises(TypeError, match="dict is not a ref payload type"):
        payload_of(ref, dict)


def test_the_filing_fields_a_ref_may_carry_are_those_citations_copy():
    from refgate.payloads import DocPayload, FilingFields, RefMeta
    from refgate.retrieval.citations import FILING_FIELDS

    assert tuple(FilingFields.__annotations__) == FILING_FIELDS
    for record in (RefMeta, DocPayload):
        assert set(FILING_FIELDS) <= set(record.__optional_keys__)

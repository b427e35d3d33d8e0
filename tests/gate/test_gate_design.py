"""The GATE rules of issue 21: documented behaviour, the ranking frame, empty evidence, names.

Refs come from the real tools on the sample workspace (ReadCapability's catalog entry for top_n,
the top_n capability on the S&P 500 snapshot, InspectDataset's schema table).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from refgate.catalog.capabilities import EngineEnv, get_capability
from refgate.catalog.toolspec import ToolContext
from refgate.config import load_settings
from refgate.gate import check_answer
from refgate.graph.capabilities import register_default_capabilities
from refgate.refs import Ref, RefLedger
from refgate.tools.read_capability import entries
from refgate.tools.registry import get_spec
from refgate.workspace import WorkspaceError, load_workspace

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "us-macro"
A, T, V, D = "api_00000000a1", "tbl_00000000b2", "val_00000000c3", "doc_00000000d4"


def codes(report) -> list[str]:
    return [i.code for i in report.issues if i.severity == "block"]


@pytest.fixture(scope="module")
def workspace():
    return load_workspace(SAMPLE)


@pytest.fixture(scope="module", autouse=True)
def _capabilities() -> None:
    """top_n is a capability the graph registers: register them here, not by import order."""
    register_default_capabilities()


@pytest.fixture(scope="module")
def api_ref() -> Ref:
    entry = next(e for e in entries() if e["name"] == "top_n")
    payload = {k: entry[k] for k in ("name", "signature", "doc", "kind")}
    return Ref(id=A, kind="apiRef", payload=payload, title="Capability top_n")


@pytest.fixture(scope="module")
def top5(workspace) -> Ref:
    ev = get_capability("top_n").func(
        dataset="sp500", column="Market Cap", n=5, env=EngineEnv(workspace=workspace)
    )
    return Ref(id=T, kind="tableRef", payload=ev.refs[0].payload)


def _table(ref: Ref, with_values: bool = True) -> str:
    head = (
        "| Rank | Symbol | Market Cap (USD) |\n|---|---|---|\n"
        if with_values
        else ("| Rank | Symbol |\n|---|---|\n")
    )
    rows = []
    for rank, symbol, _name, _sector, cap in ref.payload["rows"]:
        cells = f"| {rank} | {symbol} | {cap:,.0f} |" if with_values else f"| {rank} | {symbol} |"
        rows.append(f"{cells} [{ref.id}]")
    return head + "\n".join(rows) + "\n"


# --- item 1: explanations of documented behaviour ---------------------------------------------


def test_an_explanation_cited_to_the_capability_documentation_passes(api_ref) -> None:
    answer = (
        f"`top_n` ranks the rows of a dataset by a numeric column and lists the largest first "
        f"unless ascending is True [{A}]. By default it returns n=10 rows, and n may be 1 to "
        f"100 [{A}]."
    )
    report = check_answer(answer, [api_ref])
    assert report.passed, report.to_dict()["issues"]
    ranking = [m for c in report.claims for m in c.mentions if m.kind == "ranking"]
    assert ranking and all(m.matches[0].how == "documented behaviour" for m in ranking)


def test_documentation_does_not_support_claims_about_data(api_ref) -> None:
    # A ranking of data items cited to documentation: Apple is no word of top_n's docstring.
    report = check_answer(f"According to top_n, Apple is the largest company [{A}].", [api_ref])
    assert "missing_ranking_table_ref" in codes(report)
    # A number that happens to be in the documentation, in a claim naming nothing documented.
    report = check_answer(f"Unemployment peaked at 10 percent [{A}].", [api_ref])
    assert "unsupported_numeric_claim" in codes(report)
    assert "names nothing it documents" in report.issues[0].detail
    # A number the documentation does not state, in a claim about the capability.
    report = check_answer(f"By default `top_n` returns n=20 rows [{A}].", [api_ref])
    assert "unsupported_numeric_claim" in codes(report)
    # Example dates in a docstring are no evidence of a period.
    value_at = next(e for e in entries() if e["name"] == "value_at")
    ref = Ref(id=A, kind="apiRef", payload={k: value_at[k] for k in ("name", "signature", "doc")})
    report = check_answer(f"value_at read the column for 2008Q4 [{A}].", [ref])
    assert "unsupported_date_claim" in codes(report)


# --- item 2: the ranking frame ------------------------------------------------------------------


def test_a_ranking_with_universe_metric_and_value_table_passes(top5) -> None:
    answer = (
        "Among the S&P 500 constituents, ranked by market capitalization, "
        f"NVDA is the largest [{T}].\n\n" + _table(top5)
    )
    report = check_answer(answer, [top5])
    assert report.passed, report.to_dict()["issues"]


def test_a_ranking_with_only_symbol_and_rank_blocks_with_a_retry_message(top5) -> None:
    answer = f"NVDA is the largest [{T}].\n\n" + _table(top5, with_values=False)
    report = check_answer(answer, [top5])
    assert not report.passed
    frame = [i for i in report.issues if i.code == "missing_ranking_frame"]
    assert len(frame) == 1
    for what in ("universe", "metric", "raw value"):
        assert what in frame[0].detail
    # The table alone, without the prose, is a ranking answer too.
    report = check_answer(f"Ranks [{T}]:\n\n" + _table(top5, with_values=False), [top5])
    assert "missing_ranking_frame" in codes(report)


def test_the_frame_needs_the_universe_even_with_a_value_table(top5) -> None:
    answer = f"Ranked by market capitalization, NVDA is the largest [{T}].\n\n" + _table(top5)
    report = check_answer(answer, [top5])
    assert codes(report) == ["missing_ranking_frame"]
    assert "its universe" in report.issues[0].detail
    assert "its metric" not in report.issues[0].detail


# --- item 3: empty evidence ---------------------------------------------------------------------


def test_a_data_claim_with_only_a_schema_table_blocks(workspace) -> None:
    ledger = RefLedger()
    ctx = ToolContext("work", ledger, load_settings({}), workspace)
    spec = get_spec("InspectDataset")
    result = spec.func(spec.args_schema(dataset="macro"), ctx)
    assert result.ok
    schema = result.refs[0]
    rows = {r[0]: r for r in schema.payload["rows"]}
    top = rows["unemp"][7]  # the schema's max of the unemployment rate
    answer = f"The unemployment rate reached {top}% [{schema.id}]."
    report = check_answer(answer, [schema])
    assert codes(report) == ["emit_result_missing"]
    assert "InspectDataset" in report.issues[0].detail
    # The same claim with an emitted value passes.
    val = Ref(id=V, kind="valueRef", payload={"values": {"unemp": top}, "units": {"unemp": "%"}})
    assert check_answer(f"The unemployment rate reached {top}% [{V}].", [schema, val]).passed


def test_no_emitted_result_blocks_data_claims_but_not_document_answers() -> None:
    exe = Ref(id="exe_00000000e5", kind="executionRef", payload={"stdout": "9.6"})
    report = check_answer("Unemployment was 9.6% [exe_00000000e5].", [exe])
    assert "emit_result_missing" in codes(report)
    doc = Ref(
        id=D,
        kind="docRef",
        payload={"excerpt": "The Committee decided to lower the target to 0.25 percent."},
        source_type="external",
    )
    report = check_answer(f"The Committee lowered its target to 0.25 percent [{D}].", [doc])
    assert report.passed and "emit_result_missing" not in [i.code for i in report.issues]


# --- item 9: names that contain numbers ---------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["S&P 500", "FTSE 100", "Nasdaq-100", "Russell 2000", "KOSPI 200", "Nikkei 225",
     "Fortune 500", "Form 10-K", "Rule 10b-5", "Section 16"],
)  # fmt: skip
def test_names_with_numbers_are_not_claims(name) -> None:
    val = Ref(id=V, kind="valueRef", payload={"values": {"eps": 6.42}, "units": {"eps": "USD"}})
    report = check_answer(f"Under the {name} heading, earnings were $6.42 a share [{V}].", [val])
    assert report.passed, report.to_dict()["issues"]


def test_a_real_number_does_not_hide_behind_a_name() -> None:
    val = Ref(id=V, kind="valueRef", payload={"values": {"x": 12.0}})
    for answer in (
        f"The S&P 500 rose 500 points [{V}].",
        f"The S&P 5000 rose 12 points [{V}].",
        f"The FTSE 100,000 rose 12 points [{V}].",
        f"Section 16.5 of the plan added 12 [{V}].",
    ):
        assert "unsupported_numeric_claim" in codes(check_answer(answer, [val])), answer


def test_a_workspace_extends_the_names(tmp_path) -> None:
    val = Ref(id=V, kind="valueRef", payload={"values": {"x": 12.0}})
    answer = f"Of the MSCI World 100 members, 12 beat the index [{V}]."
    assert not check_answer(answer, [val]).passed
    assert check_answer(answer, [val], names=["MSCI World 100"]).passed
    (tmp_path / "refgate.toml").write_text('name = "t"\n[gate]\nnames = ["MSCI World 100"]\n')
    assert load_workspace(tmp_path).gate_names == ("MSCI World 100",)
    for bad in ('["500 million"]', '["USD 500"]', '"S&P 500"', '["no digits"]'):
        (tmp_path / "refgate.toml").write_text(f'name = "t"\n[gate]\nnames = {bad}\n')
        with pytest.raises(WorkspaceError, match="gate.names"):
            load_workspace(tmp_path)
    with pytest.raises(ValueError, match="quantity"):
        check_answer(answer, [val], names=["12 billion"])

"""Computed means computed (issue 28, observation 5): the sandbox records which datasets a call
actually read; an emitted value the code wrote as a literal, or from a call that read no dataset,
is no primary evidence for the GATE (``value_not_computed``), whatever ``sources=`` says."""

from __future__ import annotations

from refgate.catalog.capabilities import register
from refgate.gate import check_answer
from refgate.refs import Ref
from refgate.tools.capabilities import CAPABILITIES
from refgate.tools.run_python import run_python

register(CAPABILITIES)  # the engine's dataset capabilities, as loading the tools registers them

HARD_CODED = "emit_result(values={'acme_sales_growth': 37.2}, sources=['macro'])"


def _blocks(answer: str, refs: list[Ref]) -> list[str]:
    return [i.code for i in check_answer(answer, refs).blocking]


def test_a_hard_coded_value_is_not_computed(sample_ws, settings, ledger) -> None:
    result = run_python(HARD_CODED, workspace=sample_ws, settings=settings, ledger=ledger)
    assert result.ok, result.error
    exe, value = result.refs
    assert exe.payload["read"] == []
    assert value.payload["meta"]["read"] == []
    assert "sources" not in value.payload["meta"]  # the model's word is kept apart
    assert value.payload["meta"]["declared_sources"] == ["macro"]
    answer = f"Acme's sales grew 37.2% [{value.id}]."
    assert _blocks(answer, [exe, value]) == ["value_not_computed"]


def test_a_value_computed_without_reading_a_dataset_is_not_computed(
    sample_ws, settings, ledger
) -> None:
    # 9.6 is written nowhere in the code (no literal rule applies): only the no-read rule blocks it
    code = "emit_result(values={'unemp': sum([4.6, 5.0])}, period='2009Q3')"
    result = run_python(code, workspace=sample_ws, settings=settings, ledger=ledger)
    assert result.ok, result.error
    _, value = result.refs
    assert value.payload["values"] == {"unemp": 9.6}
    assert value.payload["meta"]["read"] == [] and not value.payload["meta"].get("literals")
    answer = f"The unemployment rate was 9.6% in 2009Q3 [{value.id}]."
    assert _blocks(answer, [value]) == ["value_not_computed"]


def test_a_literal_beside_a_real_read_is_still_not_computed(sample_ws, settings, ledger) -> None:
    code = (
        "df = datasets['macro']\n"
        "emit_result(values={'unemp': float(df.unemp.iloc[-1]), 'acme_sales_growth': 37.2})"
    )
    result = run_python(code, workspace=sample_ws, settings=settings, ledger=ledger)
    assert result.ok, result.error
    exe, value = result.refs
    assert exe.payload["read"] == ["macro"]
    assert value.payload["meta"]["sources"] == ["macro"]
    assert value.payload["meta"]["literals"] == ["acme_sales_growth"]
    assert _blocks(f"Acme's sales grew 37.2% [{value.id}].", [value]) == ["value_not_computed"]
    assert check_answer(f"The unemployment rate was 9.6% [{value.id}].", [value]).passed


def test_reads_through_sql_and_capabilities_count(sample_ws, settings, ledger) -> None:
    code = (
        "r = sql('SELECT MAX(unemp) AS top FROM macro')\n"
        "emit_result(values={'unemp_max': float(r.top[0])})"
    )
    result = run_python(code, workspace=sample_ws, settings=settings, ledger=ledger)
    assert result.ok, result.error
    assert result.refs[0].payload["read"] == ["macro"]
    code = "rows = engine.series('macro', 'unemp', start='2009Q1', end='2009Q3')\nprint(rows)"
    result = run_python(code, workspace=sample_ws, settings=settings, ledger=ledger)
    assert result.ok, result.error
    assert result.refs[0].payload["read"] == ["macro"]


def test_a_literal_also_in_a_dataset_backed_ref_passes(sample_ws, settings, ledger) -> None:
    result = run_python(
        "emit_result(values={'unemp': 9.6}, period='2009Q3')",
        workspace=sample_ws,
        settings=settings,
        ledger=ledger,
    )
    literal = result.refs[1]
    backed = Ref(
        id="val_00000000ab",
        kind="valueRef",
        payload={"values": {"unemp": 9.6}, "units": {"unemp": "%"}, "period": "2009Q3"},
    )
    alone = f"The unemployment rate was 9.6% in 2009Q3 [{literal.id}]."
    assert _blocks(alone, [literal]) == ["value_not_computed"]
    answer = f"The unemployment rate was 9.6% in 2009Q3 [{literal.id}][{backed.id}]."
    assert check_answer(answer, [literal, backed]).passed

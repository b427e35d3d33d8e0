"""Evidence cards of computed values name the dataset, columns and filter that produced them
(read from the RunPython code and its sql() queries, not only shown inside the collapsed code)."""

from __future__ import annotations

from refgate.report.cards import build_cards
from refgate.report.lineage import lineage

CODE = (
    'df = datasets["macro"]\n'
    'row = df[(df["year"] == 2009) & (df["quarter"] == 3)]\n'
    'emit_result(values={"unemp": float(row["unemp"].iloc[0])})\n'
)


def test_lineage_reads_datasets_columns_and_filters_from_code_and_sql():
    assert lineage(CODE) == {
        "datasets": ["macro"],
        "columns": ["year", "quarter", "unemp"],
        "filters": ["(df['year'] == 2009) & (df['quarter'] == 3)"],
    }
    q = lineage('t = sql("SELECT year, unemp FROM macro WHERE year >= 2008 ORDER BY year")')
    assert q["datasets"] == ["macro"] and q["filters"] == ["year >= 2008"]
    e = lineage("rows = engine.series('macro', 'unemp', start='2008Q1', end='2009Q4')")
    assert e == {
        "datasets": ["macro"],
        "columns": ["unemp"],
        "filters": ["start='2008Q1', end='2009Q4'"],
    }
    # the datasets the sandbox recorded the call reading come first; broken code is no error
    assert lineage("df = datasets[name]", read=["cpi"])["datasets"] == ["cpi"]
    assert lineage("def (:") == {"datasets": [], "columns": [], "filters": []}


def test_a_computed_value_card_names_dataset_columns_and_filter():
    refs = {
        "exe_0123456789": {
            "id": "exe_0123456789",
            "kind": "executionRef",
            "payload": {
                "tool": "RunPython",
                "code": CODE,
                "read": ["macro"],
                "emitted": ["val_0123456789"],
            },  # fmt: skip
        },
        "val_0123456789": {
            "id": "val_0123456789",
            "kind": "valueRef",
            "source": "RunPython:exe_0123456789",
            "payload": {"values": {"unemp": 9.6}, "units": {"unemp": "%"}},
        },
    }
    (card,), _ = build_cards("Unemployment was 9.6% [val_0123456789].", refs, {})
    details = dict(card["source"]["details"])
    assert card["source"]["label"] == "computed by RunPython"
    assert details["dataset"] == "macro"
    assert details["columns"] == "year, quarter, unemp"
    assert details["filter"] == "(df['year'] == 2009) & (df['quarter'] == 3)"

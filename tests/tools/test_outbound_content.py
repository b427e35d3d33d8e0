"""Outbound by content: what a run's code read from the workspace counts as workspace data.

The outbound check used to consider only emitted refs: code that read a value and called
``engine.deep_research(question=f"company revenue {v}")``, or printed a dataset before the model
searched ``revenue 98765.4321``, sent the workspace's numbers to the search provider, and a
reformatted value (``98765 4321``, ``987654321``, ``98.765 thousand``, ``USD98765.4321``) passed
even before any untrusted read. Each case is refused now; honest queries still go out.
Real sandbox (bubblewrap), real DuckDB scans of the dataset.
"""

from __future__ import annotations

import pytest

from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.graph.capabilities import register_default_capabilities
from refgate.refs import RefLedger
from refgate.tools.dataset_values import DatasetValues
from refgate.tools.executor import execute_tool_call
from refgate.tools.outbound import check_outbound_text
from refgate.workspace import load_workspace

register_default_capabilities()  # search_documents and deep_research, as build_graph does

REVENUE = 98765.4321
FORMS = [
    "revenue 98765.4321",
    "revenue 98765 4321",
    "revenue 987654321",
    "revenue 98.765 thousand",
    "revenue USD98765.4321",
    "revenue 98,765.4321",
    "revenue 98.765,4321",
    "revenue 98 765.4321",
    "revenue 98.8k",
    "revenue 0.0987654321 million",
]
HONEST = [
    "company revenue outlook 2025",
    "US unemployment rate forecast",
    "S&P 500 earnings growth 2024",
    "top 10 banks by total assets",
    "Federal Reserve interest rate decision December 2024",
    "10-year treasury yield trend",
]


class SearchServer:
    """A search provider that keeps every query it receives."""

    name = "recording"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, *, max_results: int = 8) -> list:
        self.queries.append(query)
        return []


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "fin.csv").write_text(
        f"company,revenue,year\nAcme Holdings,{REVENUE},2024\nBrill Corp,12345.678,2024\n",
        encoding="utf-8",
    )
    (root / "refgate.toml").write_text(
        'name = "fin"\n[datasets.fin]\npath = "fin.csv"\n', encoding="utf-8"
    )
    return load_workspace(root)


@pytest.fixture
def ctx(ws):
    settings = Settings(model="scripted", api_key="k")
    return ToolContext("work", RefLedger(), settings, ws, extra={"web_search": SearchServer()})


@pytest.fixture
def research(monkeypatch):
    """The research run deep_research starts, keeping the questions it was given."""
    questions: list[str] = []

    def run(question, env, limits):
        questions.append(question)
        empty = ("findings", "confirmed", "refuted", "unverified", "caveats", "openQuestions")
        return {"status": "ok", "question": question, "summary": "", "stats": {}} | {
            k: [] for k in empty
        }

    monkeypatch.setattr("refgate.graph.research_capability._run", run)
    return questions


def call(ctx: ToolContext, name: str, **args):
    return execute_tool_call({"name": name, "args": args, "id": "c1"}, {name}, ctx)


def run_code(ctx: ToolContext, code: str):
    out = call(ctx, "RunPython", code=code)
    assert out.result is not None and out.result.ok, out.message.content
    return out.result.data["stdout"]


ASK = """
try:
    engine.deep_research(question=f"company revenue {v}")
    print("SENT")
except Exception as exc:
    print("REFUSED", exc)
"""


@pytest.mark.parametrize("column", ["revenue", "company"])
def test_code_that_read_a_value_cannot_send_it_through_deep_research(ctx, research, column):
    stdout = run_code(ctx, f'v = datasets["fin"][{column!r}].iloc[0]' + ASK)
    assert "REFUSED" in stdout and "workspace data" in stdout, stdout
    assert research == []


def test_code_cannot_send_a_value_it_computed_from_the_data(ctx, research):
    stdout = run_code(ctx, 'v = round(datasets["fin"]["revenue"].sum(), 2)' + ASK)
    assert "REFUSED" in stdout and "code that could read" in stdout, stdout
    assert research == []


def test_code_may_send_the_question_without_workspace_numbers(ctx, research):
    stdout = run_code(ctx, 'v = "outlook 2025"' + ASK)
    assert "SENT" in stdout, stdout
    assert research == ["company revenue outlook 2025"]


def test_printed_data_cannot_be_searched_after_the_code_ran(ctx):
    run_code(ctx, 'print(datasets["fin"])\nprint(round(datasets["fin"]["revenue"].sum(), 3))')
    server = ctx.extra["web_search"]
    for query in ("revenue 98765.4321", "total 111111.11", "Acme Holdings revenue"):
        out = call(ctx, "WebSearch", query=query)
        assert out.event["status"] == "refused", (query, out.message.content)
        assert "workspace data" in str(out.message.content)
    assert server.queries == []
    # the honest query of the same run still goes out
    assert call(ctx, "WebSearch", query=HONEST[0]).event["status"] == "ok"
    assert server.queries == [HONEST[0]]


@pytest.mark.parametrize("query", FORMS)
def test_every_written_form_of_a_value_is_refused_before_any_untrusted_read(ctx, query):
    out = call(ctx, "WebSearch", query=query)
    assert out.event["status"] == "refused", out.message.content
    assert ctx.extra["web_search"].queries == []


@pytest.mark.parametrize("query", HONEST)
def test_honest_queries_without_workspace_numbers_go_through(ctx, query):
    run_code(ctx, 'print(datasets["fin"].describe())')
    out = call(ctx, "WebSearch", query=query)
    assert out.event["status"] == "ok", out.message.content
    assert ctx.extra["web_search"].queries == [query]


def test_the_questions_own_numbers_and_the_setting_let_data_out(ws):
    datasets = DatasetValues.of(ws)
    kwargs = {"to": "the search provider", "untrusted_turn": False, "datasets": datasets}
    asked = ["Why was revenue 98765.4321 last year?"]
    assert check_outbound_text("revenue 98765.4321", trusted=asked, **kwargs) is None
    assert check_outbound_text("revenue 987654321", trusted=[], **kwargs)
    assert check_outbound_text("revenue 987654321", trusted=[], allow_data=True, **kwargs) is None


def test_a_dataset_that_cannot_be_scanned_in_time_fails_closed(ws):
    rows = "".join(f"firm{i},{i * 1.37:.4f},2024\n" for i in range(200_000))
    with (ws.root / "fin.csv").open("a", encoding="utf-8") as fh:
        fh.write(rows)  # a scan of 200,000 rows cannot finish within a millisecond
    slow = DatasetValues(DatasetValues.of(ws).datasets, seconds=0.001)
    why = check_outbound_text(
        "revenue 98765.4321", to="x", untrusted_turn=False, trusted=[], datasets=slow
    )
    assert why and "could not be checked" in why

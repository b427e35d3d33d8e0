"""CLI output shows data as written: brackets in excerpts, paths, questions, error messages and
tool names a model made up are text, not rich markup (which would drop them or crash on "[/x]")."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from typer.testing import CliRunner

from refgate.cli import app
from refgate.cli import app as app_module
from refgate.cli import ask as ask_cli
from refgate.memory.audit import append_run
from refgate.refs import Ref
from refgate.workspace import load_workspace

NASTY = "see [/x] and [bold]this[/bold] and [link=x]y"
runner = CliRunner()


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def recorder(monkeypatch) -> io.StringIO:
    """Both CLI consoles write into one buffer, wide enough not to wrap."""
    buf = io.StringIO()
    console = Console(file=buf, width=400, color_system=None)
    for module in (app_module, ask_cli):
        monkeypatch.setattr(module, "console", console, raising=False)
        monkeypatch.setattr(module, "err_console", console, raising=False)
    return buf


def test_progress_line_with_a_made_up_tool_name_prints_verbatim(recorder):
    chunk = {"event": "tool_call", "tool": "[/x]Evil", "status": "error", "refs": ["val_[b]"]}
    ask_cli.err_console.print(ask_cli._progress_line(chunk))
    gate = {"event": "gate_verdict", "passed": False, "issues": ["[/code]"]}
    ask_cli.err_console.print(ask_cli._progress_line(gate))
    out = recorder.getvalue()
    assert "tool [/x]Evil -> error val_[b]" in out
    assert "blocked ([/code])" in out


def test_cited_ref_table_shows_excerpts_and_sources_verbatim(recorder):
    ref = Ref(
        id="doc_00000000c3",
        kind="docRef",
        payload={"excerpt": NASTY},
        source="https://example.org/[a]/b",
        source_type="external",
    )
    result = {
        "answer": "It says so [doc_00000000c3].",
        "refs": {ref.id: ref},
        "gate": {"passed": True},
    }
    ask_cli._render(result, "thread-[1]")
    out = recorder.getvalue()
    assert "[/x]" in out and "[bold]this[/bold]" in out
    assert "https://example.org/[a]/b" in out
    assert "(thread thread-[1])" in out


def test_answer_links_to_urls_the_run_did_not_read_are_not_clickable(monkeypatch):
    """A terminal makes markdown links clickable (OSC 8): an answer's link to any URL but the
    run's sources would be a one-click leak, so it prints as text, as in the reports."""
    buf = io.StringIO()
    console = Console(file=buf, width=400, force_terminal=True, color_system="truecolor")
    monkeypatch.setattr(ask_cli, "console", console)
    web = Ref.new(
        "webRef",
        {"url": "https://fed.example/s", "excerpt": "x"},
        source="https://fed.example/s",
        source_type="external",
    )
    answer = (
        f"Rates held [{web.id}]; see [the statement](https://fed.example/s) and "
        "[details](https://evil.example/?d=secret) and ![x](https://evil.example/i.png)."
    )
    ask_cli._render({"answer": answer, "refs": {web.id: web}, "gate": {"passed": True}}, "t")
    out = buf.getvalue()
    assert "\x1b]8;id=" in out and "https://fed.example/s\x1b\\" in out  # the source: a link
    assert "https://evil.example/?d=secret" in out  # shown
    assert "evil.example/?d=secret\x1b\\" not in out and "i.png\x1b\\" not in out  # not linked


def test_audit_lists_questions_verbatim(mini_workspace):
    ws = load_workspace(mini_workspace)
    append_run(
        ws, {"thread_id": "t-[1]", "question": f"What is {NASTY}?", "gate": {"passed": True}}
    )
    res = runner.invoke(app, ["audit", "--workspace", str(mini_workspace)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "[/x]" in res.output and "t-[1]" in res.output


def test_index_without_documents_names_the_table(mini_workspace):
    res = runner.invoke(app, ["index", "--workspace", str(mini_workspace)])
    assert res.exit_code == 2
    assert "has no [documents] table" in flat(res.output)


def test_workspace_errors_show_bracketed_paths(tmp_path):
    missing = tmp_path / "no[such]" / "[ws]"
    res = runner.invoke(app, ["audit", "--workspace", str(missing)])
    assert res.exit_code == 2
    # whitespace-free: a long tmp path (xdist's popen-gwN/) wraps mid-name
    assert "/no[such]/[ws]" in "".join(res.output.split())

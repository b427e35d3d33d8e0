"""Terminal safety (issue 13, observation 7) and visible GATE warnings (observation 6): nothing the
CLI prints carries C0/C1 controls but newline and tab; warnings are shown, not only blocks."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

from refgate.cli import app
from refgate.cli import ask as ask_cli
from refgate.cli.app import SafeConsole, esc, json_safe, terminal_safe
from refgate.testing_openai import OpenAIStub, tool, tool_reply
from tests.support.evidence import ids_in
from tests.support.stub_answers import PLAN

TITLE = "\x1b]0;pwned title\x07"
CLEAR = "\x1b[2J"
C1 = "\x9b31m"


def test_terminal_safe_makes_every_control_visible_but_newline_and_tab():
    text = f"a{TITLE}b{CLEAR}c\td\ne\r\x00\x7f{C1}"
    safe = terminal_safe(text)
    assert "\t" in safe and "\n" in safe
    assert not any(ord(ch) < 0x20 and ch not in "\t\n" for ch in safe)
    assert not any(0x7F <= ord(ch) <= 0x9F for ch in safe)
    assert "␛]0;pwned title␇" in safe and "␛[2J" in safe and "\\x9b31m" in safe
    assert esc("[x]\x1b[2J") == "\\[x]␛[2J"
    assert json.loads(json_safe(json.dumps({"a": "\x9b\x7f"}, ensure_ascii=False))) == {
        "a": "\x9b\x7f"
    }


@pytest.mark.parametrize("terminal", [False, True])
def test_safe_console_keeps_its_own_styling_and_drops_data_controls(terminal):
    from rich.markdown import Markdown

    buf = io.StringIO()
    console = SafeConsole(file=buf, width=200, force_terminal=terminal, color_system="standard")
    console.print(Markdown(f"Answer {TITLE} and {CLEAR} and {C1}"))
    console.print(f"[green]ok[/green] {esc(CLEAR)}")
    out = buf.getvalue()
    assert "\x1b]0;" not in out and "\x1b[2J" not in out and "\x9b" not in out
    assert "␛[2J" in out
    if terminal:  # rich's own colour codes still reach the terminal
        assert "\x1b[32m" in out


def test_ask_never_prints_a_models_control_sequences(mini_workspace, env, gdp_tool):
    def answer(req) -> str:
        val = ids_in(req.text, "val")[-1]
        return f"Real GDP in 2009Q3 was 12,990.3 billion USD [{val}].{TITLE}{CLEAR}{C1}"

    script = [
        PLAN,
        tool_reply(tool(f"Evil{CLEAR}Tool", x=1), tool("RunPython", code="emit")),
        "done",
        "[]",
        answer,
        "no more",
        answer,
        "nothing",
    ]
    with OpenAIStub(script=script) as stub:
        env.setenv("OPENAI_BASE_URL", stub.base_url)
        env.setenv("OPENAI_API_KEY", "stub-key")
        env.setenv("REFGATE_MODEL", "stub-model")
        result = CliRunner().invoke(
            app, ["ask", "What was real GDP in 2009Q3?", "--workspace", str(mini_workspace)]
        )
    assert result.exit_code in (0, 3), result.output
    out = result.output
    # stdout (the answer, tables, verdict) carries no control at all; stderr (progress) none but
    # the carriage returns of a library's own progress bar (model loading)
    for stream, allowed in ((result.stdout, "\t\n"), (result.stderr, "\t\n\r")):
        bad = sorted({repr(ch) for ch in stream if ord(ch) < 0x20 and ch not in allowed})
        assert not bad, bad
        assert not any(0x7F <= ord(ch) <= 0x9F for ch in stream)
    assert "␛[2J" in out and "12,990.3" in out


def test_ask_shows_gate_warnings(monkeypatch):
    buf = io.StringIO()
    console = Console(file=buf, width=300, color_system=None)
    monkeypatch.setattr(ask_cli, "console", console)
    gate = {
        "passed": True,
        "issues": [
            {
                "code": "external_only_numeric",
                "claim": "Sales rose 12.5% [web_0123456789].",
                "detail": "12.5% is supported only by secondary refs",
                "ref_ids": ["web_0123456789"],
                "severity": "warn",
            }
        ],
    }
    ask_cli._render({"answer": "Sales rose 12.5%.", "refs": {}, "gate": gate}, "t-1")
    out = buf.getvalue()
    assert "GATE warning external_only_numeric" in out and "secondary refs" in out
    assert "GATE passed" in out

"""CLI behaviour users expect: --version, completion, no silent workspace fallback, blank
questions, a busy thread, unreachable endpoints, token totals at the end of a run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refgate import __version__
from refgate.api.threadlock import thread_lock
from refgate.cli import app
from refgate.testing_openai import OpenAIStub, tool, tool_reply
from tests.support.stub_answers import PLAN, good

REFGATE = [sys.executable, "-m", "refgate.cli"]


@pytest.fixture
def env(env):
    """The shared offline environment, without the embedded smoke model."""
    env.setenv("REFGATE_LOCAL_LLM", "0")
    return env


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"refgate {__version__}"


def test_shell_completion_completes_commands(tmp_path):
    env = {
        **os.environ,
        "_REFGATE_COMPLETE": "complete_bash",
        "COMP_WORDS": "refgate res",
        "COMP_CWORD": "1",
    }
    script = Path(sys.executable).parent / "refgate"  # the console script (completion keys on it)
    out = subprocess.run(
        [str(script)], env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert out.stdout.split() == ["research"]
    assert "--install-completion" in CliRunner().invoke(app, ["--help"]).stdout


@pytest.mark.parametrize(
    "command",
    [["ask", "What was GDP?"], ["research", "What is X?"], ["audit"], ["trace", "t1"], ["index"]],
)
def test_outside_a_workspace_commands_say_so_and_write_nothing(tmp_path, env, command):
    env.chdir(tmp_path)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "refgate init" in text and "--workspace examples/us-macro" in text
    assert list(tmp_path.iterdir()) == []
    sample_state = Path(__file__).resolve().parents[2] / "examples" / "us-macro" / ".refgate"
    before = sorted(sample_state.rglob("*")) if sample_state.exists() else []
    CliRunner().invoke(app, command)
    after = sorted(sample_state.rglob("*")) if sample_state.exists() else []
    assert after == before


def test_a_workspace_above_the_current_folder_is_found(mini_workspace, env):
    sub = mini_workspace / "notes" / "deep"
    sub.mkdir(parents=True)
    env.chdir(sub)
    result = CliRunner().invoke(app, ["audit"])
    assert result.exit_code == 0, result.output
    assert "no runs recorded yet" in result.output


@pytest.mark.parametrize("question", ["", "   ", "\t \n"])
def test_a_blank_question_exits_2(mini_workspace, env, question):
    result = CliRunner().invoke(app, ["ask", question, "--workspace", str(mini_workspace)])
    assert result.exit_code == 2
    assert "no question" in result.output
    assert not (mini_workspace / ".refgate" / "audit.jsonl").exists()


def test_a_busy_thread_is_refused_with_exit_2(mini_workspace, env):
    with thread_lock(mini_workspace / ".refgate", "busy"):
        out = subprocess.run(
            [*REFGATE, "ask", "What was GDP?", "-w", str(mini_workspace), "--thread", "busy"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ},
        )
    assert out.returncode == 2, out.stderr
    assert "already running" in " ".join(out.stderr.split())


def test_an_unreachable_endpoint_names_endpoint_and_model(mini_workspace, env):
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("OPENAI_API_KEY", "k")
    result = CliRunner().invoke(
        app,
        [
            "ask",
            "What was GDP?",
            "-w",
            str(mini_workspace),
            "--model",
            "missing-model",
            "--thread",
            "c1",
        ],
    )
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "http://127.0.0.1:9/v1" in text and "missing-model" in text
    assert f"refgate ask --workspace {mini_workspace} --thread c1" in text


def test_token_totals_are_printed_and_audited(mini_workspace, env, gdp_tool):
    script = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, "nothing"]
    with OpenAIStub(script=script, model="gpt-4o-mini") as stub:
        env.setenv("OPENAI_BASE_URL", stub.base_url)
        env.setenv("OPENAI_API_KEY", "stub-key")
        result = CliRunner().invoke(
            app,
            [
                "ask",
                "What was real GDP in 2009Q3?",
                "-w",
                str(mini_workspace),
                "--model",
                "gpt-4o-mini",
            ],
        )
    assert result.exit_code == 0, result.output
    record = json.loads((mini_workspace / ".refgate" / "audit.jsonl").read_text().splitlines()[-1])
    total = record["usage"]["total"]
    assert total["total_tokens"] > 0
    expected = (total["input_tokens"] * 0.15 + total["output_tokens"] * 0.60) / 1e6
    assert record["usage"]["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert f"tokens: {total['total_tokens']:,}" in result.output
    assert "estimated cost $" in result.output


def test_ask_help_says_how_to_enable_web_search_and_model_strings():
    text = " ".join(CliRunner().invoke(app, ["ask", "--help"]).stdout.split())
    assert "REFGATE_WEB_SEARCH=searx:" in text and "REFGATE_WEB_FETCH=http" in text
    assert "offline" in text and "refgate[anthropic]" in text and "provider:model" in text


def test_library_progress_bars_are_off_in_the_cli(tmp_path):
    """Model-loading bars (tqdm, huggingface_hub) would interleave with refgate's own lines.

    In a fresh interpreter: tqdm reads TQDM_DISABLE when it is first imported, as it is in a real
    CLI run (by the model loader, after the app's callback); in this process another test may
    have imported it already."""
    code = (
        "import io, os\n"
        "from typer.testing import CliRunner\n"
        "from refgate.cli import app\n"
        "CliRunner().invoke(app, ['audit'])\n"
        "assert os.environ['TQDM_DISABLE'] == '1', os.environ.get('TQDM_DISABLE')\n"
        "assert os.environ['HF_HUB_DISABLE_PROGRESS_BARS'] == '1'\n"
        "import tqdm\n"
        "buf = io.StringIO()\n"
        "for _ in tqdm.tqdm(range(3), file=buf):\n"
        "    pass\n"
        "assert buf.getvalue() == '', repr(buf.getvalue())\n"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_ask_takes_another_question_on_a_finished_thread_as_a_follow_up(
    mini_workspace, env, gdp_tool
):
    run = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, "nothing"]
    script = [*run, *run]
    with OpenAIStub(script=script) as stub:
        env.setenv("OPENAI_BASE_URL", stub.base_url)
        env.setenv("OPENAI_API_KEY", "stub-key")
        args = ["-w", str(mini_workspace), "--model", "stub-model", "--thread", "t-q"]
        first = CliRunner().invoke(app, ["ask", "What was real GDP in 2009Q3?", *args])
        assert first.exit_code == 0, first.output
        other = CliRunner().invoke(app, ["ask", "And real GDP in 2009Q3, again?", *args])
        assert stub.remaining == 0  # the whole pass graph ran for the follow-up
    assert other.exit_code == 0, other.output
    assert "different question" not in other.output

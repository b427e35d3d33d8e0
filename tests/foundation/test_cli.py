"""`refgate ask` and `refgate trace` in-process, with the real ChatOpenAI path to a loopback stub."""

import json

import pytest
from foundation_helpers import ids_in
from typer.testing import CliRunner

from refgate.cli import app
from refgate.testing_openai import OpenAIStub, http_error, tool, tool_reply

PLAN = '{"lens": "single value", "criteria": []}'
HARVEST = "nothing worth remembering"


def good(req) -> str:
    return f"Real GDP in 2009Q3 was 12,990.3 billion USD [{ids_in(req.text, 'val')[-1]}]."


def bad(req) -> str:
    return f"Real GDP in 2009Q3 was 15,000 billion USD [{ids_in(req.text, 'val')[-1]}]."


@pytest.fixture
def env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REFGATE_MODEL", "REFGATE_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REFGATE_MAX_RETRIES", "1")
    return monkeypatch


def use(stub, env):
    env.setenv("OPENAI_BASE_URL", stub.base_url)
    env.setenv("OPENAI_API_KEY", "stub-key")
    env.setenv("REFGATE_MODEL", "stub-model")


def test_ask_passes_with_exit_0_and_json_output(mini_workspace, env, gdp_tool):
    runner = CliRunner()
    script = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, HARVEST]
    with OpenAIStub(script=script) as stub:
        use(stub, env)
        result = runner.invoke(
            app,
            [
                "ask",
                "What was real GDP in 2009Q3?",
                "--workspace",
                str(mini_workspace),
                "--json",
                "--thread",
                "cli-1",
            ],
        )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["gate"]["passed"] is True and out["thread_id"] == "cli-1"
    cited = ids_in(out["answer"], "val")[0]
    assert out["refs"][cited]["payload"]["values"]["realgdp"] == 12990.341
    assert (mini_workspace / ".refgate").is_dir()

    trace = runner.invoke(app, ["trace", "cli-1", "--workspace", str(mini_workspace), "--json"])
    assert trace.exit_code == 0, trace.output
    events = json.loads(trace.stdout)
    assert [e["pass"] for e in events if e["type"] == "pass_start"] == [
        "brief",
        "work",
        "critique",
        "compose",
        "gate",
        "harvest",
    ]


def test_ask_exits_3_when_the_answer_goes_out_with_unmet_claims(mini_workspace, env, gdp_tool):
    script = [
        PLAN,
        tool_reply(tool("RunPython", code="emit")),
        "done",
        "[]",
        bad,
        "no more",
        bad,
        HARVEST,
    ]
    with OpenAIStub(script=script) as stub:
        use(stub, env)
        result = CliRunner().invoke(
            app, ["ask", "What was real GDP in 2009Q3?", "--workspace", str(mini_workspace)]
        )
    assert result.exit_code == 3, result.output
    assert "GATE blocked" in result.stdout


def test_ask_without_any_model_exits_2_naming_the_settings(mini_workspace, env):
    env.setenv("REFGATE_LOCAL_LLM", "0")
    result = CliRunner().invoke(app, ["ask", "anything", "--workspace", str(mini_workspace)])
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output and "REFGATE_MODEL" in result.output


def test_bad_workspace_exits_2(tmp_path, env):
    result = CliRunner().invoke(app, ["ask", "q", "--workspace", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "workspace" in result.output


def test_interrupted_run_resumes_with_thread(mini_workspace, env, gdp_tool):
    runner = CliRunner()
    with OpenAIStub(
        script=[
            PLAN,
            tool_reply(tool("RunPython", code="emit")),
            "done",
            http_error(500),
            http_error(500),
        ]
    ) as stub:
        use(stub, env)
        first = runner.invoke(
            app,
            [
                "ask",
                "What was real GDP in 2009Q3?",
                "--workspace",
                str(mini_workspace),
                "--thread",
                "resume-me",
            ],
        )
        assert first.exit_code == 1
        # the hint names the workspace, so it resumes from any folder
        hint = f"refgate ask --workspace {mini_workspace} --thread resume-me"
        assert hint in " ".join(first.output.split())
        stub.add("[]", good, HARVEST)
        second = runner.invoke(
            app, ["ask", "--workspace", str(mini_workspace), "--thread", "resume-me", "--json"]
        )
    assert second.exit_code == 0, second.output
    assert gdp_tool.func.executed == ["emit"], "finished passes were not redone"
    assert json.loads(second.stdout)["gate"]["passed"] is True

"""`refgate ask` and `refgate trace` in-process, with the real ChatOpenAI path to a loopback stub."""

import json

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.testing_openai import OpenAIStub, http_error, tool, tool_reply
from tests.support.evidence import ids_in
from tests.support.stub_answers import HARVEST, PLAN, bad, good


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


def _dotenv_folder(tmp_path, stub, extra: str = ""):
    folder = tmp_path / "here"
    folder.mkdir()
    (folder / ".env").write_text(
        f"OPENAI_BASE_URL={stub.base_url}\nOPENAI_API_KEY=stub-key\n"
        f"REFGATE_MODEL=stub-model-from-dotenv\n{extra}",
        encoding="utf-8",
    )
    return folder


def test_ask_reads_the_model_endpoint_from_dotenv(mini_workspace, env, gdp_tool, tmp_path):
    """A local model named in ``./.env`` got runs sent to OpenAI's gpt-4o-mini: the CLI passed
    ``os.environ`` and skipped ``.env`` (issue 31, item 3). The run must reach the stub."""
    script = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, HARVEST]
    with OpenAIStub(script=script) as stub:
        env.chdir(_dotenv_folder(tmp_path, stub))
        result = CliRunner().invoke(
            app, ["ask", "What was real GDP in 2009Q3?", "--workspace", str(mini_workspace)]
        )
    assert result.exit_code == 0, result.output
    assert len(stub.requests) == len(script)
    assert {r.body.get("model") for r in stub.requests} == {"stub-model-from-dotenv"}


def test_the_python_api_and_the_graph_read_dotenv_too(mini_workspace, env, gdp_tool, tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    import refgate
    from refgate.graph import build_graph

    script = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, HARVEST]
    with OpenAIStub(script=script + script) as stub:
        env.chdir(_dotenv_folder(tmp_path, stub))
        answer = refgate.ask("What was real GDP in 2009Q3?", workspace=mini_workspace)
        assert answer.passed, answer
        served = build_graph(checkpointer=InMemorySaver(), workspace=str(mini_workspace))
        out = served.invoke(
            {"question": "What was real GDP in 2009Q3?"}, {"configurable": {"thread_id": "s1"}}
        )
        assert out["gate"]["passed"] is True
    assert {r.body.get("model") for r in stub.requests} == {"stub-model-from-dotenv"}
    assert len(stub.requests) > len(script)  # the graph run asked the stub too


def test_a_bad_value_in_dotenv_exits_2_naming_it(mini_workspace, env, tmp_path):
    with OpenAIStub(script=[]) as stub:
        env.chdir(_dotenv_folder(tmp_path, stub, "REFGATE_WORK_MAX_ROUNDS=many\n"))
        result = CliRunner().invoke(app, ["ask", "q?", "--workspace", str(mini_workspace)])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert ".env" in flat and "REFGATE_WORK_MAX_ROUNDS" in flat
    assert stub.requests == []


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("REFGATE_ALLOWED_WORKSPACES", ":", "no usable entry"),
        ("REFGATE_ALLOWED_WORKSPACES", "/nonexistent-folder", "no usable entry"),
        ("REFGATE_WEB_SEARCH", "searx:not a url", "http(s) URL of a SearxNG server"),
        ("REFGATE_WEB_SEARCH", "searx:ftp://host", "http(s) URL of a SearxNG server"),
    ],
)
def test_a_fail_closed_allowlist_or_a_bad_searx_url_exits_2_at_start(
    mini_workspace, env, name, value, words
):
    """A fail-closed allowlist exited 1 with a 'resume with --thread' hint, and a malformed
    ``searx:`` URL was accepted at start (issue 31, item 7): both are configuration errors."""
    with OpenAIStub(script=[]) as stub:
        use(stub, env)
        env.setenv(name, value)
        result = CliRunner().invoke(app, ["ask", "q?", "--workspace", str(mini_workspace)])
    flat = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert words in flat and "resume" not in flat
    assert stub.requests == []

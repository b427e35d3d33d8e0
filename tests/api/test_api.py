"""The Python API (`refgate.ask`, `refgate.Answer`) through the real OpenAI client and a loopback
stub: answer, gate, refs, usage, events, audit record, resume rules, the thread lock."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import refgate
from refgate.api.threadlock import ThreadBusy, thread_lock
from refgate.config import ConfigError
from refgate.testing_openai import OpenAIStub, tool, tool_reply
from tests.support.evidence import ids_in
from tests.support.stub_answers import GDP_QUESTION, HARVEST, PLAN, bad, good


def use(stub, env, model="stub-model"):
    env.setenv("OPENAI_BASE_URL", stub.base_url)
    env.setenv("OPENAI_API_KEY", "stub-key")
    env.setenv("REFGATE_MODEL", model)


def test_ask_returns_an_answer_with_gate_refs_usage_and_events(mini_workspace, env, gdp_tool):
    events = []
    script = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, HARVEST]
    with OpenAIStub(script=script) as stub:
        # a provider:model string on the OpenAI path reaches OPENAI_BASE_URL like a bare name
        use(stub, env, model="openai:stub-model")
        result = refgate.ask(
            GDP_QUESTION, workspace=mini_workspace, thread="api-1", on_event=events.append
        )
        assert stub.remaining == 0
        assert {r.model for r in stub.chat_requests()} == {"stub-model"}
    assert isinstance(result, refgate.Answer)
    assert result.passed is True and result.unverified == []
    assert result.thread == "api-1" and result.question == GDP_QUESTION
    cited = ids_in(result.answer, "val")[0]
    assert result.refs[cited].payload["values"]["realgdp"] == 12990.341
    assert result.gate["passed"] is True
    # usage per pass adds up to the total, and equals what the stub reported
    assert set(result.usage.per_pass) == {"brief", "work", "critique", "compose", "harvest"}
    total = result.usage.total
    assert total["total_tokens"] == sum(p["total_tokens"] for p in result.usage.per_pass.values())
    assert total["total_tokens"] > 0
    assert result.usage.cost_usd is None  # no price for "openai:stub-model"
    started = [e["pass"] for e in events if e.get("event") == "pass_started"]
    assert started == ["brief", "work", "critique", "compose", "gate", "harvest"]
    as_json = json.loads(json.dumps(result.to_dict()))
    assert as_json["refs"][cited]["payload"]["values"]["realgdp"] == 12990.341
    assert as_json["usage"]["total"] == total
    record = json.loads((mini_workspace / ".refgate" / "audit.jsonl").read_text().splitlines()[-1])
    assert record["thread_id"] == "api-1" and record["usage"]["total"] == total


def test_unverified_claims_are_listed(mini_workspace, env, gdp_tool):
    script = [
        PLAN,
        tool_reply(tool("RunPython", code="emit")),
        "done",
        "[]",
        bad,
        tool_reply(tool("RunPython", code="emit")),
        "done",
        bad,
        HARVEST,
    ]
    with OpenAIStub(script=script) as stub:
        use(stub, env)
        result = refgate.ask(GDP_QUESTION, workspace=mini_workspace)
    assert result.passed is False
    assert result.unverified and "15,000" in result.unverified[0]["claim"]
    assert result.unverified[0]["code"]


def test_a_finished_thread_asked_its_own_question_again_returns_it(mini_workspace, env, gdp_tool):
    """(Another question on a finished thread is a follow-up: tests/graph/test_conversation.py.)"""
    script = [PLAN, tool_reply(tool("RunPython", code="emit")), "done", "[]", good, HARVEST]
    with OpenAIStub(script=script) as stub:
        use(stub, env)
        first = refgate.ask(GDP_QUESTION, workspace=mini_workspace, thread="same")
        # the same question (whitespace aside) or none returns the stored answer, no model call
        again = refgate.ask(f"  {GDP_QUESTION} ", workspace=mini_workspace, thread="same")
        stored = refgate.ask(None, workspace=mini_workspace, thread="same")
        assert stub.remaining == 0
    assert again.answer == first.answer == stored.answer


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_a_blank_question_is_a_configuration_error(mini_workspace, env, question):
    with pytest.raises(ConfigError, match="no question"):
        refgate.ask(question, workspace=mini_workspace)


def test_a_second_process_on_the_same_thread_is_refused(mini_workspace, env, tmp_path):
    state = mini_workspace / ".refgate"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from refgate.api.threadlock import thread_lock
            with thread_lock(Path({str(state)!r}), "busy"):
                print("held", flush=True)
                time.sleep(60)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ThreadBusy, match=f"pid {holder.pid}"):
            refgate.ask(GDP_QUESTION, workspace=mini_workspace, thread="busy")
        # another thread of the same workspace is not blocked
        with thread_lock(state, "other"):
            pass
    finally:
        holder.kill()
        holder.wait()
    with thread_lock(state, "busy"):  # released when its holder died
        pass


def test_an_unreachable_endpoint_names_the_endpoint_and_the_model(mini_workspace, env):
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("OPENAI_API_KEY", "k")
    env.setenv("REFGATE_MODEL", "far-away-model")
    env.setenv("REFGATE_TIMEOUT", "5")
    with pytest.raises(refgate.RunFailed) as info:
        refgate.ask(GDP_QUESTION, workspace=mini_workspace, thread="conn")
    message = str(info.value)
    assert "http://127.0.0.1:9/v1" in message and "far-away-model" in message
    assert info.value.thread == "conn"


def test_importing_refgate_loads_no_graph_layer():
    code = (
        "import sys, refgate\n"
        "bad = [m for m in sys.modules if m.split('.')[:2] in (['refgate','graph'],"
        "['refgate','nodes'],['refgate','tools'],['refgate','retrieval'],['refgate','cli'])]\n"
        "assert not bad, bad\n"
        "assert callable(refgate.ask) and 'refgate.api.public' in sys.modules\n"
        "assert refgate.Answer is sys.modules['refgate.api.public'].Answer\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_api_example_runs(mini_workspace, env):
    """examples/api_quickstart.py as a user runs it, against a scripted endpoint."""
    example = Path(__file__).resolve().parents[2] / "examples" / "api_quickstart.py"
    script = [PLAN, "no tools needed", "[]", "The workspace holds US macro data.", HARVEST]
    with OpenAIStub(script=script, default="nothing more") as stub:  # default: a GATE retry
        run_env = {**os.environ, **stub.env(), "REFGATE_MAX_RETRIES": "1"}
        out = subprocess.run(
            [
                sys.executable,
                str(example),
                "What data is there?",
                "--workspace",
                str(mini_workspace),
                "--model",
                "openai:stub-model",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=run_env,
        )
    assert out.returncode in (0, 3), out.stderr
    assert "GATE passed:" in out.stdout and "tokens:" in out.stdout and "thread:" in out.stdout
    assert "... brief" in out.stderr and "... compose" in out.stderr

"""Say what happened: when the embedded model server dies (here by SIGILL, as a llama-cpp-python
build with instructions the CPU refuses does) or a configured server drops a request, the error
names how it ended, shows its log's last lines and says what to do, and never points at an
endpoint the user did not set."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from refgate.api import local_llm
from refgate.api.local_llm import LocalModelError, LocalModelServer
from refgate.api.public import _failure
from refgate.cli import app
from refgate.config import Settings

#: A stand-in for ``llama_cpp.server``: logs like it, answers ``/v1/models``, and kills itself
#: with SIGILL on the chat completion numbered ``die_at`` (1: the startup probe).
FAKE_SERVER = textwrap.dedent(
    """
    import json, os, signal, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer

    port, die_at = int(sys.argv[1]), int(sys.argv[2])
    print("llama_model_loader: loaded meta data with 33 key-value pairs", flush=True)
    print("load_tensors: CPU_Mapped model buffer size = 138.41 MiB", flush=True)
    chats = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            print("INFO: " + fmt % args, flush=True)

        def send(self, doc):
            body = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.send({"object": "list", "data": [{"id": "smollm2-135m-instruct"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            chats[0] += 1
            if chats[0] >= die_at:
                print("llama_decode: decoding a batch of 37 tokens", flush=True)
                os.kill(os.getpid(), signal.SIGILL)
            self.send({
                "id": "c1", "object": "chat.completion", "created": 0,
                "model": "smollm2-135m-instruct",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "hi"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
            })

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)


@pytest.fixture
def fake_server(tmp_path, monkeypatch):
    """Make ``LocalModelServer`` start the fake; returns a setter for its ``die_at``."""
    script = tmp_path / "fake_llama_server.py"
    script.write_text(FAKE_SERVER, encoding="utf-8")
    gguf = tmp_path / "smollm2.gguf"
    gguf.write_bytes(b"GGUF")
    die_at = {"n": 1}

    def command(model_path: Path, model_name: str, port: int, n_ctx: int) -> list[str]:
        return [sys.executable, str(script), str(port), str(die_at["n"])]

    monkeypatch.setattr(local_llm, "server_command", command)
    monkeypatch.setattr(local_llm, "gguf_path", lambda: gguf)
    monkeypatch.setattr(local_llm, "available", lambda: True)
    return die_at


def assert_says_what_happened(text: str) -> None:
    text = " ".join(text.split())
    assert "died by signal SIGILL (illegal instruction)" in text
    assert "llama_decode: decoding a batch of 37 tokens" in text  # the log's tail
    assert "load_tensors: CPU_Mapped" in text
    assert "scripts/setup.sh" in text and "-DGGML_NATIVE=OFF" in text  # rebuild portable
    assert "another model" in text and "REFGATE_MODEL" in text
    assert "OPENAI_BASE_URL" not in text  # the user set none


def test_a_server_dying_on_its_first_chat_is_reported_before_the_run(fake_server, tmp_path):
    log = tmp_path / "state" / "local-llm.log"
    with pytest.raises(LocalModelError) as err, LocalModelServer(log_path=log, startup_timeout=60):
        pass
    assert_says_what_happened(str(err.value))
    assert str(log) in " ".join(str(err.value).split())
    assert "llama_decode" in log.read_text()  # the log is kept


def test_a_server_dying_mid_run_fails_the_run_with_signal_log_and_advice(
    fake_server, mini_workspace, env
):
    fake_server["n"] = 2  # the probe passes; BRIEF's first call kills it
    env.setenv("REFGATE_LOCAL_LLM", "1")
    result = CliRunner().invoke(
        app, ["ask", "What was GDP in 2009Q3?", "-w", str(mini_workspace), "--thread", "s1"]
    )
    assert result.exit_code == 1, result.output
    error = result.output.split("run failed:", 1)[1]  # after the smoke model's notice
    assert_says_what_happened(error)
    log = mini_workspace / ".refgate" / "local-llm.log"
    assert str(log) in "".join(error.split())  # (rich may wrap the path)
    assert "--thread s1" in result.output  # how to resume


def test_the_cli_reports_a_server_that_cannot_start(fake_server, mini_workspace, env):
    env.setenv("REFGATE_LOCAL_LLM", "1")
    result = CliRunner().invoke(app, ["ask", "What was GDP?", "-w", str(mini_workspace)])
    assert result.exit_code == 1 and "the embedded model failed:" in result.output
    assert_says_what_happened(result.output.split("the embedded model failed:", 1)[1])


def dropped() -> Exception:
    """What the OpenAI client raises when a server closes the connection without a reply."""
    try:
        try:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        except httpx.RemoteProtocolError as inner:
            raise ConnectionError("Connection error.") from inner
    except ConnectionError as exc:
        return exc


def test_a_configured_local_server_that_drops_a_request_is_named_with_its_setting(env):
    url = "http://127.0.0.1:8080/v1"
    env.setenv("OPENAI_BASE_URL", url)
    text = _failure(dropped(), Settings(model="qwen2.5-7b", base_url=url), "work")
    assert "closed the connection without a reply" in text and url in text
    assert "OPENAI_BASE_URL" in text and "'qwen2.5-7b'" in text
    # The same server named by [settings] base_url: the message names that setting instead.
    env.delenv("OPENAI_BASE_URL")
    text = _failure(dropped(), Settings(model="qwen2.5-7b", base_url=url), "work")
    assert "base_url setting" in text and "OPENAI_BASE_URL" not in text


def test_a_provider_endpoint_never_points_at_openai_base_url(env):
    exc = ConnectionError("Connection error.")
    text = _failure(exc, Settings(model="gpt-4o-mini", api_key="k"), "work")
    assert "could not be reached" in text and "OPENAI_BASE_URL" not in text
    text = _failure(exc, Settings(model="anthropic:claude-sonnet-4-5"), "brief")
    assert "OPENAI_BASE_URL" not in text and "--model" in text


def test_describe_exit_names_signals_and_codes():
    assert local_llm.describe_exit(-4) == "died by signal SIGILL (illegal instruction)"
    assert local_llm.describe_exit(3) == "exited with code 3"


def setup_check():
    """``scripts/check_local_model.py`` (what ``scripts/setup.sh`` runs last), loaded as a module."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "check_local_model.py"
    spec = importlib.util.spec_from_file_location("check_local_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_setup_check_fails_loudly_with_the_fix_and_passes_a_working_server(fake_server, capsys):
    check = setup_check()
    assert check.main() == 1
    assert_says_what_happened(capsys.readouterr().err)
    fake_server["n"] = 3  # the probe and the check's own chat completion are answered
    assert check.main() == 0
    assert "embedded model OK: replied 'hi'" in capsys.readouterr().out

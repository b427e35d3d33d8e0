"""SIGTERM stops a CLI run within seconds, even while a model call is in flight, and keeps what
it finished: the thread resumes without redoing its completed passes. Real processes, a real
SIGTERM, the scripted OpenAI server holding a reply."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

from refgate.api.local_llm import _RUNNING, LocalModelServer, stop_running_servers
from refgate.cli.stopping import STOP_GRACE_S
from refgate.testing_openai import OpenAIStub
from tests.support.stub_answers import PLAN

ANSWER = "The workspace holds no data on that, so I cannot answer this question."
QUESTION = "What was the GDP of Atlantis in 1900?"


def wait_for(predicate, timeout=90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def ask_command(stub, workspace) -> tuple[dict[str, str], list[str]]:
    """The environment and command of ``refgate ask`` on ``workspace`` against ``stub``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFGATE_"))}
    env.update(stub.env(), REFGATE_MODEL="stub-model", REFGATE_LOCAL_LLM="0")
    return env, [sys.executable, "-m", "refgate.cli", "ask", "--workspace", str(workspace)]


def test_sigterm_during_a_model_call_stops_the_run_and_keeps_its_passes(tmp_path, mini_workspace):
    release = threading.Event()

    def compose(req):
        release.wait(120)  # held: the process is stopped while it waits for this reply
        return ANSWER

    rules = [
        ("You are BRIEF", PLAN),
        ("You are WORK", "nothing covers it"),
        ("You are CRITIQUE", "[]"),
        ("You are COMPOSE", compose),
        ("You are HARVEST", "none"),
    ]
    with OpenAIStub(rules=rules) as stub:
        env, cmd = ask_command(stub, mini_workspace)
        proc = subprocess.Popen(
            [*cmd, QUESTION], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        try:
            assert wait_for(lambda: any("You are COMPOSE" in r.text for r in stub.chat_requests()))
            briefs = sum("You are BRIEF" in r.text for r in stub.chat_requests())
            stopped_at = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=STOP_GRACE_S + 20)
            took = time.monotonic() - stopped_at
        finally:
            if proc.poll() is None:
                proc.kill()
        text = out.decode()
        assert proc.returncode == 128 + signal.SIGTERM, text
        assert took < STOP_GRACE_S + 10, took  # not the 120 s the reply is held for
        found = re.search(r"resume with: refgate ask --workspace \S+ --thread (\S+)", text)
        assert found, text

        release.set()
        done = subprocess.run(
            [*cmd, "--thread", found.group(1)], env=env, capture_output=True, text=True, timeout=120
        )
        assert f"resuming thread {found.group(1)} at compose" in done.stderr, done.stderr
        assert "cannot answer" in done.stdout and "GATE" in done.stdout
        # BRIEF, WORK and CRITIQUE were kept: the resumed run asked only from COMPOSE on
        assert sum("You are BRIEF" in r.text for r in stub.chat_requests()) == briefs


def test_stopping_ends_the_embedded_model_servers_at_once(tmp_path):
    server = LocalModelServer.__new__(LocalModelServer)
    server.base_url = "http://127.0.0.1:1/v1"
    # a process that ignores SIGTERM, as a server evaluating a prompt keeps its request
    server._proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)",
        ],
        start_new_session=True,
    )
    _RUNNING[server.base_url] = server
    try:
        stop_running_servers()
        assert server._proc.wait(timeout=5) == -signal.SIGKILL
    finally:
        _RUNNING.pop(server.base_url, None)
        if server._proc.poll() is None:
            server._proc.kill()


def test_ctrl_c_during_a_model_call_stops_the_run_within_seconds(tmp_path, mini_workspace):
    release = threading.Event()

    def brief(req):
        release.wait(120)
        return PLAN

    with OpenAIStub(rules=[("You are BRIEF", brief)]) as stub:
        env, cmd = ask_command(stub, mini_workspace)
        proc = subprocess.Popen(
            [*cmd, QUESTION], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        try:
            assert wait_for(lambda: bool(stub.chat_requests()))
            stopped_at = time.monotonic()
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=STOP_GRACE_S + 20)
            took = time.monotonic() - stopped_at
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
    text = out.decode()
    assert proc.returncode == 128 + signal.SIGINT, text
    assert took < STOP_GRACE_S + 10, took
    assert "stopped by SIGINT" in text and "resume with: refgate ask --workspace" in text

"""examples/langserve_app.py under uvicorn on loopback: invoke and stream, thread ids kept."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from refgate.config import Settings
from refgate.testing_openai import OpenAIStub
from tests.support.serving import empty_workspace, started_passes, stub_responder

pytest.importorskip("langserve")
uvicorn = pytest.importorskip("uvicorn")

APP_FILE = Path(__file__).resolve().parents[2] / "examples" / "langserve_app.py"


def load_example():
    spec = importlib.util.spec_from_file_location("refgate_langserve_example", APP_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(responder=stub_responder) as s:
        yield s


@pytest.fixture(scope="module")
def served(tmp_path_factory, stub, monkeypatch_module):
    monkeypatch_module.setenv("REFGATE_STORE_EMBED", "hashing")
    root = empty_workspace(tmp_path_factory.mktemp("ls") / "ws")
    settings = Settings(base_url=stub.base_url, api_key="stub-key", model="stub-model",
                        max_retries=0, timeout=30)  # fmt: skip
    app = load_example().create_app(settings=settings, workspace=root)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield app, f"http://127.0.0.1:{port}", root
    finally:
        server.should_exit = True
        thread.join(timeout=15)
    assert not stub.misses


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_invoke_keeps_the_clients_thread(served):
    app, url, _ = served
    body = {
        "input": {"question": "Tell me about topic okapi please"},
        "config": {"configurable": {"thread_id": "ls-okapi"}},
    }
    r = httpx.post(f"{url}/workbench/invoke", json=body, timeout=60)
    assert r.status_code == 200, r.text
    output = r.json()["output"]
    assert "okapi" in output["answer"]
    assert set(output) >= {"answer", "refs", "gate", "trace_summary"}
    assert output["trace_summary"]["passes"][:4] == ["brief", "work", "critique", "compose"]
    # The run was checkpointed under the client's thread id.
    state = app.state.graph.get_state({"configurable": {"thread_id": "ls-okapi"}})
    assert "okapi" in state.values["answer"]
    assert started_passes(state.values["trace"])[-1] == "harvest"


def test_a_served_run_is_audited_and_refgate_audit_and_review_see_it(served):
    from typer.testing import CliRunner

    from refgate.cli import app as cli

    _, url, root = served
    body = {
        "input": {"question": "Tell me about topic quagga please"},
        "config": {"configurable": {"thread_id": "ls-quagga"}},
    }
    r = httpx.post(f"{url}/workbench/invoke", json=body, timeout=60)
    assert r.status_code == 200, r.text
    lines = (root / ".refgate" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    (rec,) = [json.loads(x) for x in lines if json.loads(x).get("thread_id") == "ls-quagga"]
    assert rec["type"] == "run" and rec["served"] is True
    assert "quagga" in rec["question"] and rec["answer"] == r.json()["output"]["answer"]
    assert rec["gate_passed"] == r.json()["output"]["gate"]["passed"]
    assert rec["timings"]["passes_ms"]["harvest"] >= 0 and rec["models"]["work"] == "stub-model"
    listed = CliRunner().invoke(cli, ["audit", "-w", str(root), "--json"])
    assert listed.exit_code == 0 and "ls-quagga" in listed.stdout
    review = CliRunner().invoke(
        cli, ["review", "ls-quagga", "--verdict", "pass", "--note", "on topic", "-w", str(root)]
    )
    assert review.exit_code == 0, review.output


def test_thread_header_and_stream(served):
    app, url, _ = served
    body = {"input": {"question": "Tell me about topic tamarin please"}}
    events: list[tuple[str, str]] = []
    with httpx.stream(
        "POST", f"{url}/workbench/stream", json=body,
        headers={"X-Refgate-Thread": "ls-tamarin"}, timeout=60,
    ) as r:  # fmt: skip
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("event:"):
                events.append((line.split(":", 1)[1].strip(), ""))
            elif line.startswith("data:") and events:
                events[-1] = (events[-1][0], line.split(":", 1)[1].strip())
    kinds = [k for k, _ in events]
    assert kinds[-1] == "end", events[-3:]
    chunks = [json.loads(d) for k, d in events if k == "data"]
    assert len(chunks) >= 5  # one chunk per pass at least
    assert "tamarin" in json.dumps(chunks)
    state = app.state.graph.get_state({"configurable": {"thread_id": "ls-tamarin"}})
    assert "tamarin" in state.values["answer"]


def test_other_workspaces_are_refused(served, tmp_path):
    _, url, root = served
    other = empty_workspace(tmp_path / "other")
    body = {"input": {"question": "Tell me about topic gnu", "workspace": str(other)}}
    r = httpx.post(f"{url}/workbench/invoke", json=body, timeout=30)
    assert r.status_code == 400
    ok = {"input": {"question": "Tell me about topic gnu please", "workspace": str(root)}}
    assert httpx.post(f"{url}/workbench/invoke", json=ok, timeout=60).status_code == 200
    assert httpx.get(f"{url}/healthz").json()["ok"] is True

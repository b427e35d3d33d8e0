"""`langgraph dev` serving langgraph.json offline, driven through langgraph-sdk.

One server per module (it takes a few seconds to start): it runs from a scratch folder holding a
byte-identical copy of langgraph.json and links to the code it names, so its `.langgraph_api/`
state never lands in the repository. The served graphs' model is the scripted OpenAI-compatible
stub (refgate.testing_openai) on loopback, reached through OPENAI_BASE_URL/OPENAI_API_KEY/
REFGATE_MODEL in the server's environment. The stub answers each request from its own prompt, so
concurrent runs are independent.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from refgate.testing_openai import OpenAIStub
from tests.support.serving import pass_of, served_responder, started_passes, topic_of

pytest.importorskip("langgraph_sdk")
pytest.importorskip("langgraph_api")

REPO = Path(__file__).resolve().parents[2]
if not Path(sys.executable).with_name("langgraph").exists():
    pytest.skip(
        "the langgraph CLI is not installed (pip install -e '.[serve]')", allow_module_level=True
    )
CONFIG = json.loads((REPO / "langgraph.json").read_text(encoding="utf-8"))
LANGGRAPH = Path(sys.executable).with_name("langgraph")
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}
#: The store embedder of the served graphs (MiniLM is tested directly in test_persistence).
SERVER_EMBED = os.environ.get("REFGATE_TEST_SERVER_EMBED", "hashing")
START_TIMEOUT = 120
RUN_TIMEOUT = 120
TOPICS = [
    "aardvark", "bison", "caribou", "dingo", "egret", "ferret", "gazelle", "hyena", "ibex",
    "jackal", "kestrel", "lemur", "marmot", "narwhal", "ocelot", "pelican", "quokka", "raccoon",
    "stoat", "tapir",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class InFlight:
    """Counts overlapping model requests (proof that runs were served at the same time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __call__(self, request):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(0.05)
            return served_responder(request)
        finally:
            with self.lock:
                self.now -= 1


def _linked_copy(target: Path) -> None:
    """A scratch project folder: langgraph.json copied, the code it names linked."""
    shutil.copyfile(REPO / "langgraph.json", target / "langgraph.json")
    for name in ("graph", "refgate", "nodes", "tools", "retrieval", "skills"):
        if (REPO / name).exists():
            (target / name).symlink_to(REPO / name, target_is_directory=True)


class DevServer:
    def __init__(self, workdir: Path, stub: OpenAIStub) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "server.log"
        env = {**os.environ, **OFFLINE, **stub.env(), "REFGATE_STORE_EMBED": SERVER_EMBED}
        env.pop("REFGATE_DATABASE_URL", None)
        self._log = self.log_path.open("wb")
        cmd = [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(self.port),
               "--no-browser", "--no-reload", "--n-jobs-per-worker", "25"]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, cwd=workdir, env=env, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"langgraph dev exited {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "/ok", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"langgraph dev not ready in {START_TIMEOUT}s:\n{self.tail()}")

    def tail(self, n: int = 60) -> str:
        self._log.flush()
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-n:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._log.close()


@pytest.fixture(scope="module")
def stub():
    inflight = InFlight()
    with OpenAIStub(responder=inflight) as s:
        s.inflight = inflight
        yield s


@pytest.fixture(scope="module")
def server(tmp_path_factory, stub):
    workdir = tmp_path_factory.mktemp("langgraph-dev")
    _linked_copy(workdir)
    srv = DevServer(workdir, stub)
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()
    assert not stub.misses, f"the stub had no answer for {len(stub.misses)} request(s)"
    # State is plain data: no checkpoint read blocks a type or lets one through as unregistered.
    bad = serde_warnings(srv)
    assert not bad, "\n".join(bad[:5])


@pytest.fixture(scope="module")
def client(server):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)


def stream_run(client, graph_id: str, payload: dict, modes: list[str], **kw) -> tuple[str, list]:
    thread = client.threads.create(metadata={"test": "serving"})
    parts = list(
        client.runs.stream(thread["thread_id"], graph_id, input=payload, stream_mode=modes, **kw)
    )
    return thread["thread_id"], parts


def custom_events(parts) -> list[dict]:
    return [p.data for p in parts if p.event.split("|")[0] == "custom"]


def errors(parts) -> list:
    return [p.data for p in parts if p.event == "error"]


# ---------------------------------------------------------------------------------------------


def test_langgraph_json_declares_the_graphs_store_and_env():
    graphs = CONFIG["graphs"]
    assert graphs["workbench"]["path"] == "./graph/workbench.py:graph"
    assert graphs["deep_research"]["path"] == "./graph/research.py:graph"
    for spec in graphs.values():
        assert spec["description"]
        path = REPO / spec["path"].split(":")[0]
        assert path.is_file(), f"{path} named in langgraph.json does not exist"
    index = CONFIG["store"]["index"]
    assert index["dims"] == 384 and index["embed"] == "./refgate/memory/store.py:embeddings"
    assert CONFIG["env"]["HF_HUB_OFFLINE"] == "1"
    # Checkpoints deserialize only allowlisted types (refs through the state schema).
    assert CONFIG["env"]["LANGGRAPH_STRICT_MSGPACK"] == "true"
    assert "checkpointer" not in CONFIG  # the server brings its own


def test_server_lists_the_graphs_with_descriptions(client):
    found = {a["graph_id"]: a for a in client.assistants.search(limit=20)}
    assert set(CONFIG["graphs"]) <= set(found)
    assert found["workbench"]["description"] == CONFIG["graphs"]["workbench"]["description"]


def test_workbench_run_streams_progress_and_keeps_history(client, stub):
    before = len(stub.chat_requests())
    question = {"question": "Tell me about topic wombat please"}
    thread_id, parts = stream_run(
        client, "workbench", question, ["updates", "custom", "messages-tuple", "values"]
    )
    assert not errors(parts), errors(parts)
    events = custom_events(parts)
    kinds = [e.get("event") for e in events]
    started = [e["pass"] for e in events if e.get("event") == "pass_started"]
    assert started[:4] == ["brief", "work", "critique", "compose"]
    assert {"pass_finished", "tool_call", "gate_verdict"} <= set(kinds)
    assert [e for e in events if e.get("event") == "tool_call"][0]["tool"] == "InspectDataset"
    # Updates arrive per pass, messages stream the model's tokens (SSE from the stub).
    updated = [next(iter(p.data)) for p in parts if p.event == "updates" and p.data]
    assert updated[:4] == ["brief", "work", "critique", "compose"]
    assert any(p.event.startswith("messages") for p in parts)
    assert any(r.stream for r in stub.chat_requests()[before:])

    state = client.threads.get_state(thread_id)
    values = state["values"]
    assert "wombat" in values["answer"]
    assert values["gate"]["attempt"] >= 1
    assert started_passes(values["trace"])[-1] == "harvest"
    assert values["trace_summary"]["passes"] == started_passes(values["trace"])
    history = client.threads.get_history(thread_id, limit=50)
    assert len(history) >= 7
    nexts = [tuple(h["next"]) for h in reversed(history)]
    assert ("brief",) in nexts and ("harvest",) in nexts


def test_both_graphs_declare_an_editable_context_schema(client):
    for assistant in client.assistants.search(limit=20):
        schema = client.assistants.get_schemas(assistant["assistant_id"])["context_schema"]
        props = schema["properties"]
        for field in (
            "model",
            "model_work",
            "model_compose",
            "workspace",
            "work_max_rounds",
            "max_rounds",
            "timeout",
        ):
            assert props[field].get("description"), (assistant["graph_id"], field)
        rounds = next(a for a in props["work_max_rounds"]["anyOf"] if a.get("type") == "integer")
        assert (rounds["minimum"], rounds["maximum"]) == (1, 100)


def test_the_run_context_sets_models_per_pass_and_the_workspace(client, stub, tmp_path):
    from tests.support.serving import empty_workspace

    ws = empty_workspace(tmp_path / "ctx-ws")
    before = len(stub.chat_requests())
    thread_id, parts = stream_run(
        client,
        "workbench",
        {"question": "Tell me about topic quagga"},
        ["values"],
        context={
            "model": "ctx-default",
            "model_compose": "ctx-compose",
            "workspace": str(ws),
            "work_max_rounds": 2,
            "timeout": 30,
        },
    )
    assert not errors(parts), errors(parts)
    requests = stub.chat_requests()[before:]
    by_pass = {}
    for r in requests:
        by_pass.setdefault(pass_of(r.system or r.text), set()).add(r.model)
    assert by_pass["compose"] == {"ctx-compose"}
    assert by_pass["brief"] == by_pass["work"] == {"ctx-default"}
    values = client.threads.get_state(thread_id)["values"]
    assert "quagga" in values["answer"]
    assert (ws / ".refgate" / "audit.jsonl").is_file()  # the run used the context's workspace
    bad = list(
        client.runs.stream(
            client.threads.create()["thread_id"],
            "workbench",
            input={"question": "Tell me about topic zebu"},
            context={"work_max_rounds": 0},
            stream_mode=["values"],
        )
    )
    assert errors(bad), "a context value out of range must fail the run"


def test_the_research_context_picks_the_model_and_workspace(client, stub):
    before = len(stub.chat_requests())
    _, parts = stream_run(
        client,
        "deep_research",
        {"question": "What did the committee say about topic okapi?"},
        ["values"],
        context={
            "model_research": "ctx-research",
            "workspace": str(REPO / "examples" / "us-macro"),
        },
    )
    assert not errors(parts), errors(parts)
    models = {r.model for r in stub.chat_requests()[before:]}
    assert models == {"ctx-research"}


def test_a_served_run_leaves_an_audit_record_that_refgate_audit_lists(client, tmp_path):
    from typer.testing import CliRunner

    from refgate.cli import app as cli
    from tests.support.serving import empty_workspace

    ws = empty_workspace(tmp_path / "ws")
    payload = {"question": "Tell me about topic quagga please", "workspace": str(ws)}
    thread_id, parts = stream_run(client, "workbench", payload, ["updates"])
    assert not errors(parts), errors(parts)
    lines = (ws / ".refgate" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    (rec,) = [json.loads(x) for x in lines]
    assert rec["thread_id"] == thread_id and rec["served"] is True
    assert "quagga" in rec["answer"] and rec["refs"] and rec["events"]
    listed = CliRunner().invoke(cli, ["audit", "-w", str(ws), "--json"])
    assert listed.exit_code == 0 and thread_id in listed.stdout
    review = CliRunner().invoke(cli, ["review", thread_id, "--verdict", "fail", "-w", str(ws)])
    assert review.exit_code == 0, review.output


def test_store_memory_is_recalled_through_the_served_store(client):
    namespace = ["refgate", "_none", "decisions"]
    decision = "For yak questions say which herd the figures describe"
    client.store.put_item(namespace, "serving-yak", {"decision": decision, "why": "served test"})
    try:
        hits = client.store.search_items(namespace, query="yak herd", limit=3)["items"]
        assert hits and hits[0]["key"] == "serving-yak"
        assert hits[0].get("score") is not None  # ranked by the embedding index
        thread_id, parts = stream_run(
            client, "workbench", {"question": "What about topic yak herds?"}, ["custom"]
        )
        assert not errors(parts), errors(parts)
        refs = client.threads.get_state(thread_id)["values"]["refs"]
        recalled = [r for r in refs.values() if r["kind"] == "decisionRef"]
        assert any(r["payload"]["decision"] == decision for r in recalled)
    finally:
        client.store.delete_item(namespace, "serving-yak")


@pytest.mark.skipif(
    "deep_research" not in CONFIG["graphs"],
    reason="langgraph.json does not serve deep_research yet (graph/research.py not landed)",
)
def test_deep_research_run_streams_its_steps(client, stub):
    before = len(stub.chat_requests())
    thread_id, parts = stream_run(
        client,
        "deep_research",
        {"question": "What did the committee say about topic okapi rates?"},
        ["updates", "custom", "values"],
        stream_subgraphs=True,
        config={"configurable": {"workspace": str(REPO / "examples" / "us-macro")}},
    )
    assert not errors(parts), errors(parts)
    steps = [e for e in custom_events(parts) if e.get("event") == "research_step"]
    names = [e["step"] for e in steps]
    assert names[0] == "scope" and names[-1] == "report"
    assert {"search", "fetch", "rank"} <= set(names), names
    # Angle subgraphs stream their own events (namespaced custom events).
    assert any(p.event.startswith("custom|") for p in parts)
    searches = [e for e in steps if e["step"] == "search"]
    assert len(searches) == 3 and all(e["results"] > 0 for e in searches)
    values = client.threads.get_state(thread_id)["values"]
    assert values["report"] and values["markdown"]
    assert len(values["searches"]) == 3
    assert any(s["fetched"] for s in values["sources"])
    tools = {r.tools[0] for r in stub.chat_requests()[before:] if r.tools}
    assert {"Scope", "Search", "Extract"} <= tools
    history = client.threads.get_history(thread_id, limit=50)
    assert len(history) >= 4


def test_twenty_simultaneous_runs_do_not_leak(client, stub, tmp_path):
    from tests.support.serving import empty_workspace

    stub.inflight.peak = 0
    before = len(stub.chat_requests())

    def one(topic: str) -> tuple[str, str, list]:
        # One workspace per run: memory is shared within a workspace by design (HARVEST's
        # decisions are recalled by later similar questions), and this test is about state.
        ws = empty_workspace(tmp_path / f"ws-{topic}")
        thread_id, parts = stream_run(
            client,
            "workbench",
            {"question": f"Tell me about topic {topic} please", "workspace": str(ws)},
            ["custom"],
        )
        return topic, thread_id, parts

    with cf.ThreadPoolExecutor(len(TOPICS)) as pool:
        results = list(pool.map(one, TOPICS))

    assert stub.inflight.peak >= 5, f"runs did not overlap (peak {stub.inflight.peak})"
    thread_ids = {tid for _, tid, _ in results}
    assert len(thread_ids) == len(TOPICS)
    run_ids = set()
    for topic, thread_id, parts in results:
        assert not errors(parts), (topic, errors(parts))
        others = [t for t in TOPICS if t != topic]
        assert [e["pass"] for e in custom_events(parts) if e.get("event") == "pass_started"][
            :4
        ] == ["brief", "work", "critique", "compose"]
        values = client.threads.get_state(thread_id)["values"]
        run_ids.add(values["run_id"])
        assert topic in values["answer"]
        text = json.dumps(
            {k: values.get(k) for k in ("answer", "refs", "trace", "work_notes", "plan")}
        )
        assert topic in text
        leaked = [t for t in others if t in text]
        assert not leaked, f"thread {topic} mentions {leaked}"
        # Every ref issued in this thread belongs to this run.
        for ref in values["refs"].values():
            assert not any(t in json.dumps(ref) for t in others)
        calls = [e for e in values["trace"] if e.get("type") == "tool_call"]
        assert calls and all(e["args"]["dataset"] == f"data-{topic}" for e in calls)
    assert len(run_ids) == len(TOPICS)
    # No model request mixed two runs' questions.
    for request in stub.chat_requests()[before:]:
        mentioned = {t for t in TOPICS if t in request.text}
        assert len(mentioned) == 1, (mentioned, request.text[:200])
        assert topic_of(request.text) in mentioned


def serde_warnings(server) -> list[str]:
    """LangGraph's lines for a type read from a checkpoint without permission: "Blocked
    deserialization" (strict msgpack, what the server runs) and "Deserializing unregistered type"
    (the permissive default). Each is printed once per server process, so a test checks the whole
    log, not only its own lines."""
    log = server.log_path.read_text(errors="replace")
    needles = ("Blocked deserialization", "Deserializing unregistered type")
    return [ln for ln in log.splitlines() if any(n in ln for n in needles)]


def test_a_served_approval_resumes_from_plain_state_and_posts_the_report(client, server, tmp_path):
    """B3 under `langgraph dev`: the run stops at DELIVER's interrupt, Studio's resume
    (`Command(resume={"approved": true})`) re-enters from the server's checkpoint, and the
    report goes out; the resumed state is the one checkpointed, read with no type blocked."""
    from langgraph_sdk.schema import Command

    from refgate.refs import as_ref_map
    from tests.support.serving import Hook

    hook = Hook()
    try:
        ws = tmp_path / "out-ws"
        ws.mkdir()
        (ws / "refgate.toml").write_text(
            f'name = "served-out"\n[outbound]\nwebhook_url = "{hook.url}"\n', encoding="utf-8"
        )
        payload = {"question": "Tell me about topic gnu please", "workspace": str(ws)}
        thread_id, parts = stream_run(client, "workbench", payload, ["values", "updates"])
        assert not errors(parts), errors(parts)
        state = client.threads.get_state(thread_id)
        assert state["next"] == ["deliver"]
        (request,) = [i["value"] for t in state["tasks"] for i in t["interrupts"]]
        assert request["approve_outbound"] == "PostReport" and request["to"] == hook.url
        refs = state["values"]["refs"]
        assert refs and hook.received == []
        resumed = list(
            client.runs.stream(
                thread_id, "workbench", command=Command(resume={"approved": True}),
                stream_mode=["values", "updates"],
            )
        )  # fmt: skip
        assert not errors(resumed), errors(resumed)
        (body,) = hook.received
        assert "gnu" in body["answer"] and body["thread_id"] == thread_id
        after = client.threads.get_state(thread_id)
        assert after["next"] == []
        # The resumed run's own state (its last values chunk) carries the ledger unchanged.
        last = [p.data for p in resumed if p.event == "values"][-1]
        assert last["refs"] == refs == after["values"]["refs"]
        assert set(as_ref_map(refs)) == set(refs)  # every entry validates as a Ref
        assert client.threads.get_history(thread_id, limit=50)
        assert serde_warnings(server) == []
    finally:
        hook.close()


def test_a_served_thread_takes_a_follow_up_that_cites_the_first_answer(client, tmp_path):
    """Two runs on one thread of `langgraph dev` (as Studio's thread view makes them): the
    second question is a follow-up whose answer cites a ref of the first, and the thread's
    state holds the conversation as plain data."""
    from refgate.refs import cited_ids
    from tests.support.serving import FIRST_QUESTION, FOLLOW_UP, copy_sample

    ws = copy_sample(tmp_path / "us-macro")
    thread_id = client.threads.create(metadata={"test": "conversation"})["thread_id"]
    first = client.runs.wait(
        thread_id, "workbench", input={"question": FIRST_QUESTION, "workspace": str(ws)}
    )
    assert first["gate"]["passed"] is True, first["gate"]
    first_ids = cited_ids(first["answer"], first["refs"])
    second = client.runs.wait(
        thread_id, "workbench", input={"question": FOLLOW_UP, "workspace": str(ws)}
    )
    assert second["gate"]["passed"] is True, second["gate"]
    assert set(first_ids) <= set(cited_ids(second["answer"], second["refs"])), second["answer"]
    values = client.threads.get_state(thread_id)["values"]
    turns = values["turns"]
    assert [t["question"] for t in turns] == [FIRST_QUESTION, FOLLOW_UP]
    assert turns[0]["answer"] == first["answer"] and turns[1]["answer"] == second["answer"]
    assert all(isinstance(t, dict) and t["passed"] for t in turns)
    assert started_passes(values["trace"]).count("brief") == 2
    # usage is in the served state (this turn's): Studio and SDK clients read it there
    usage = values["usage"]
    assert set(usage["per_pass"]) >= {"brief", "work", "compose"}
    assert usage["total"]["total_tokens"] == sum(
        p["total_tokens"] for p in usage["per_pass"].values()
    )
    assert usage["total"]["total_tokens"] > 0 and second["usage"] == usage


def test_sdk_clients_receive_the_answer_as_it_is_written(client, tmp_path):
    """`stream_mode="messages"` carries COMPOSE's tokens (and only the answer: the other
    passes' calls are tagged nostream); the custom stream carries the same as answer_delta."""
    from tests.support.serving import FIRST_QUESTION, copy_sample

    ws = copy_sample(tmp_path / "us-macro-stream")
    payload = {"question": FIRST_QUESTION, "workspace": str(ws)}
    thread_id, parts = stream_run(client, "workbench", payload, ["messages-tuple", "custom"])
    assert not errors(parts), errors(parts)
    answer = client.threads.get_state(thread_id)["values"]["answer"]
    messages = [p.data for p in parts if p.event == "messages"]
    assert messages, [p.event for p in parts][:20]
    nodes = {meta.get("langgraph_node") for _msg, meta in messages}
    assert nodes == {"compose"}, nodes
    assert "".join(str(msg.get("content") or "") for msg, _ in messages).strip() == answer
    deltas = [e for e in custom_events(parts) if e.get("event") == "answer_delta"]
    assert "".join(e["text"] for e in deltas).strip() == answer

"""Every reader of a workspace whose ``[index] backend = "pgvector"`` reads the pgvector index
(a real PostgreSQL with pgvector, ``REFGATE_TEST_PGVECTOR_URL``): the Python API's run, a run of
the workbench served by ``langgraph dev``, and the MCP server's ``search_documents``. The models
are the scripted OpenAI-compatible stub; the index is written with the default document embedder
(MiniLM, offline), so each reader opens it as a deployment would. No FAISS folder exists: a
reader that fell back to the FAISS path would fail to find an index (or build one) instead.

The research graph (``deep_research``) searches the web snapshot, not the document index, so
it has no reader to test here."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid
from pathlib import Path

import pytest

import refgate
from refgate.memory.embeddings import document_embeddings
from refgate.retrieval.documents import load_documents
from refgate.retrieval.pgvector.writer import write_index
from refgate.testing_openai import OpenAIStub, Reply, StubRequest, tool, tool_reply
from tests.support.pgvector import PGVECTOR_URL, requires_pgvector
from tests.support.serving import pass_of

pytestmark = [
    pytest.mark.postgres,
    requires_pgvector,
]
#: Three short notes; the question's words are in ``quetzal.txt`` only.
NOTES = {
    "quetzal.txt": "The quetzal survey counted 412 nesting pairs in the cloud forest reserve.",
    "heron.txt": "Grey herons returned early to the estuary after a mild winter.",
    "tariff.txt": "The committee discussed plover tariffs and harbour fees for the next year.",
}
QUESTION = "How many quetzal nesting pairs did the survey count?"
SEARCH = {"query": "quetzal nesting pairs survey", "k": 2}
_DOC = re.compile(r"\bdoc_[0-9a-f]{10}\b")


@pytest.fixture(scope="module")
def pg_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace configured for the pgvector index, its notes written there (not to FAISS)."""
    root = tmp_path_factory.mktemp("pgreaders") / "ws"
    (root / "documents").mkdir(parents=True)
    for name, text in NOTES.items():
        (root / "documents" / name).write_text(text + "\n", encoding="utf-8")
    name = "r" + uuid.uuid4().hex[:12]
    (root / "refgate.toml").write_text(
        'name = "pgreaders"\n[documents]\npath = "documents"\n'
        f'[index]\nbackend = "pgvector"\ndsn = "env:REFGATE_INDEX_DSN"\nname = "{name}"\n',
        encoding="utf-8",
    )
    docs = load_documents(root / "documents", root=root)
    write_index(PGVECTOR_URL, docs, document_embeddings(), name=name)
    return root


def no_faiss_index(ws: Path) -> bool:
    return not (ws / ".refgate" / "index" / "manifest.json").exists()


def compose(text: str) -> str:
    """The answer, citing the docRef listed with the quetzal note's text."""
    (ref,) = {
        m.group(0) for m in _DOC.finditer(text) if "412 nesting" in text[m.end() : m.end() + 600]
    }
    return f"The survey counted 412 quetzal nesting pairs [{ref}]."


def responder(request: StubRequest) -> Reply | str:
    """Each pass's scripted reply: WORK searches the documents once, COMPOSE cites the last
    docRef its prompt lists."""
    name = pass_of(request.system or request.text)
    if name == "brief":
        return '{"lens": "single value", "criteria": []}'
    if name == "work":
        if request.tool_results:
            return "the docRef holds the count"
        return tool_reply(tool("EngineCall", name="search_documents", arguments=SEARCH))
    if name == "critique":
        return "[]"
    if name == "compose":
        return compose(request.text)
    if name == "harvest":
        return "nothing worth remembering"
    return Reply(status=500, error=f"unknown pass for prompt {request.text[:120]!r}")


def cited_note(refs: dict, answer: str) -> dict:
    """The docRef the answer cites."""
    (cited,) = [r for r in refs.values() if r["kind"] == "docRef" and r["id"] in answer]
    return cited


def test_the_python_api_reads_the_pgvector_index(pg_workspace, monkeypatch):
    with OpenAIStub(responder=responder) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
        monkeypatch.setenv("REFGATE_MODEL", "stub-model")
        monkeypatch.setenv("REFGATE_INDEX_DSN", PGVECTOR_URL)
        result = refgate.ask(QUESTION, workspace=pg_workspace, thread="pg-api")
        assert not stub.misses
    refs = {k: {"kind": r.kind, "id": r.id, "payload": r.payload} for k, r in result.refs.items()}
    cited = cited_note(refs, result.answer)
    assert cited["payload"]["source"] == "documents/quetzal.txt"
    # the claim is supported by the pgvector hit (a selected skill may still ask for more)
    assert result.gate["counts"]["supported_claims"] == 1, result.gate
    assert no_faiss_index(pg_workspace)


def test_the_mcp_server_searches_the_pgvector_index(pg_workspace):
    pytest.importorskip("mcp.client")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFGATE_", "OPENAI_"))}
    env["REFGATE_INDEX_DSN"] = PGVECTOR_URL
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "refgate.cli", "mcp"], env=env
    )

    async def session():
        async with Client(params, read_timeout_seconds=240) as client:
            return await client.call_tool(
                "search_documents", {**SEARCH, "workspace": str(pg_workspace)}
            )

    found = asyncio.run(session())
    assert not found.is_error, found.content
    hits = found.structured_content["hits"]
    assert hits and hits[0]["source"] == "documents/quetzal.txt"
    assert "412 nesting pairs" in hits[0]["text"]
    assert no_faiss_index(pg_workspace)


def test_the_served_workbench_reads_the_pgvector_index(pg_workspace, tmp_path, monkeypatch):
    pytest.importorskip("langgraph_sdk")
    dev = pytest.importorskip("tests.graph.test_dev_server")
    from langgraph_sdk import get_sync_client

    monkeypatch.setenv("REFGATE_INDEX_DSN", PGVECTOR_URL)
    with OpenAIStub(responder=responder) as stub:
        workdir = tmp_path / "served"
        workdir.mkdir()
        dev._linked_copy(workdir)
        server = dev.DevServer(workdir, stub)
        try:
            server.wait_ready()
            client = get_sync_client(url=server.url, api_key=None, timeout=dev.RUN_TIMEOUT)
            thread_id, parts = dev.stream_run(
                client,
                "workbench",
                {"question": QUESTION, "workspace": str(pg_workspace)},
                ["values"],
            )
            assert not dev.errors(parts), (dev.errors(parts), server.tail())
            values = client.threads.get_state(thread_id)["values"]
        finally:
            server.stop()
    cited = cited_note(values["refs"], values["answer"])
    assert cited["payload"]["source"] == "documents/quetzal.txt"
    assert values["gate"]["counts"]["supported_claims"] == 1, values["gate"]
    assert no_faiss_index(pg_workspace)

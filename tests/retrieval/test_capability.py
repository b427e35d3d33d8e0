"""The search_documents capability, citations (docRefs), and the `refgate index` command."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from refgate.catalog.capabilities import EngineEnv, Evidence, catalog
from refgate.graph.capabilities import register_default_capabilities
from refgate.refs import RefLedger
from refgate.retrieval import DocumentIndex, HashingEmbeddings, index_dir, workspace_documents
from refgate.retrieval.citations import cite_hits, dedupe_hits, hits_to_refspecs
from refgate.workspace import load_workspace

STATEMENTS = {
    "20081216": "The Federal Open Market Committee decided today to establish a target range for "
    "the federal funds rate of 0 to 1/4 percent.\n\nLabor market conditions have deteriorated.",
    "20090128": "The Committee will keep the target range for the federal funds rate at 0 to 1/4 "
    "percent.\n\nThe Committee is prepared to purchase longer-term Treasury securities.",
    "20051101": "Elevated energy prices and hurricane-related disruptions in economic activity "
    "have temporarily depressed output and employment.",
}


@pytest.fixture()
def workspace(tmp_path):
    root = tmp_path / "ws"
    (root / "documents").mkdir(parents=True)
    for name, text in STATEMENTS.items():
        (root / "documents" / f"{name}.txt").write_text(text, encoding="utf-8")
    (root / "refgate.toml").write_text(
        'name = "mini"\n[documents]\npath = "documents"\ndate_from_filename = "%Y%m%d"\n'
        'entity = "FOMC"\n',
        encoding="utf-8",
    )
    return load_workspace(root)


def build(ws):
    register_default_capabilities()
    return DocumentIndex.build(
        workspace_documents(ws), index_dir(ws), embeddings=HashingEmbeddings(64)
    )


def test_workspace_documents_have_dates_entity_and_sources(workspace):
    docs = {d.metadata["doc_id"]: d.metadata for d in workspace_documents(workspace)}
    assert set(docs) == set(STATEMENTS)
    assert docs["20081216"]["date"] == "2008-12-16"
    assert docs["20081216"]["entity"] == "FOMC"
    assert docs["20081216"]["source"] == "documents/20081216.txt"
    assert index_dir(workspace) == workspace.root / ".refgate" / "index"


def test_capability_is_registered_and_returns_external_docrefs(workspace):
    cap = catalog()["search_documents"]
    assert "query" in cap.signature and "env" not in cap.signature
    build(workspace)
    ev = cap.func(
        "establish a target range 0 to 1/4 percent", k=3, env=EngineEnv(workspace=workspace)
    )
    assert isinstance(ev, Evidence)
    hits = ev.data["hits"]
    assert hits[0]["doc_id"] == "20081216" and hits[0]["date"] == "2008-12-16"
    assert "hits[].text" in ev.untrusted_fields
    assert len(ev.refs) == len(hits)
    ref = ev.refs[0]
    assert ref.kind == "docRef" and ref.source_type == "external"
    p = ref.payload
    assert p["doc_id"] == "20081216" and p["chunk_id"] == hits[0]["chunk_id"]
    assert STATEMENTS["20081216"][p["start"] : p["end"]] == p["excerpt"]
    assert p["date"] == "2008-12-16" and p["entity"] == "FOMC"
    assert hits[0]["ref_title"] == ref.title and "1/4" not in ref.title  # titles carry no text
    json.dumps(ev.data)


def test_capability_filters(workspace):
    build(workspace)
    func = catalog()["search_documents"].func
    env = EngineEnv(workspace=workspace)
    ev = func("target range", date_from="2009-01-01", env=env)
    assert [h["doc_id"] for h in ev.data["hits"]] == ["20090128"]
    ev = func("target range", doc_id="20051101", env=env)
    assert {h["doc_id"] for h in ev.data["hits"]} <= {"20051101"}
    with pytest.raises(ValueError, match="k must be"):
        func("x", k=0, env=env)


def test_missing_index_fails_with_a_clear_message(workspace):
    with pytest.raises(RuntimeError, match="refgate index --workspace"):
        catalog()["search_documents"].func("anything", env=EngineEnv(workspace=workspace))


def test_repeated_hits_are_cited_once(workspace):
    index = build(workspace)
    hits = index.search("target range federal funds rate", k=3)
    twice = hits + hits[:2]
    assert len(dedupe_hits(twice)) == len(hits)
    assert len(hits_to_refspecs(twice)) == len(hits)
    ledger = RefLedger()
    first = cite_hits(twice, ledger)
    again = cite_hits(index.search("target range federal funds rate", k=3), ledger)
    assert len(first) == len(hits) == len(ledger)
    assert [r.id for r in again] == [r.id for r in first]  # a later search reuses the refs
    assert all(r.is_external and r.kind == "docRef" for r in first)


def test_index_command_builds_then_updates(workspace, monkeypatch):
    import refgate.retrieval as retrieval
    from refgate.cli import app

    monkeypatch.setattr(
        retrieval, "default_embeddings", lambda settings=None: HashingEmbeddings(64)
    )
    runner = CliRunner()
    res = runner.invoke(app, ["index", "--workspace", str(workspace.root), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["documents"] == 3 and out["embedded"] == out["chunks"] and out["reused"] == 0
    (workspace.root / "documents" / "20051101.txt").unlink()
    (workspace.root / "documents" / "20090128.txt").write_text(
        STATEMENTS["20090128"] + " More.", encoding="utf-8"
    )
    res = runner.invoke(app, ["index", "--workspace", str(workspace.root), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["documents"] == 2 and out["removed_documents"] == 1 and out["changed_documents"] == 1
    assert out["embedded"] == 1 and out["reused"] == out["chunks"] - 1
    assert DocumentIndex.load(index_dir(workspace)).doc_ids == ["20081216", "20090128"]


def test_index_command_without_documents_exits_2(tmp_path):
    from refgate.cli import app

    (tmp_path / "refgate.toml").write_text('name = "empty"\n', encoding="utf-8")
    res = CliRunner().invoke(app, ["index", "--workspace", str(tmp_path)])
    assert res.exit_code == 2

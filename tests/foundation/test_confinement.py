"""Confinement (issue 13, observation 3): every path a workspace names resolves inside the
workspace or its ``[paths] allowed_roots``, re-checked at open and mount time; the served
allowlist (``REFGATE_ALLOWED_WORKSPACES``) applies to every graph and fails closed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from refgate.paths import PathEscape, served_allowlist
from refgate.workspace import WorkspaceError, load_served_workspace, load_workspace

CSV = "year,v\n2020,1\n"


def make_ws(root: Path, toml: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refgate.toml").write_text(toml, encoding="utf-8")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "docs").mkdir(parents=True)
    (folder / "x.csv").write_text(CSV)
    (folder / "docs" / "a.txt").write_text("outside text")
    return folder


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('[datasets.a]\npath = "../outside/x.csv"\n', "datasets.a.path"),
        ('[datasets.a]\npath = "{outside}/x.csv"\n', "datasets.a.path"),
        ('[datasets.a]\npath = "link.csv"\n', "datasets.a.path"),
        ('[documents]\npath = "../outside/docs"\n', "documents.path"),
        ('[documents]\npath = "docs-link"\n', "documents.path"),
        ('[skills]\npath = "{outside}/docs"\n', "skills.path"),
        ('[web_snapshot]\npath = "../outside"\n', "web_snapshot.path"),
    ],
)
def test_a_path_that_escapes_the_workspace_is_a_workspace_error(tmp_path, outside, toml, field):
    ws = make_ws(tmp_path / "ws", toml.replace("{outside}", str(outside)))
    (ws / "link.csv").symlink_to(outside / "x.csv")
    (ws / "docs-link").symlink_to(outside / "docs")
    with pytest.raises(WorkspaceError) as err:
        load_workspace(ws)
    message = str(err.value)
    assert "refgate.toml" in message and field in message
    assert "outside the allowed roots" in message and "allowed_roots" in message


def test_allowed_roots_admit_a_folder_outside_relative_or_absolute(tmp_path, outside):
    for listed in ("../outside", str(outside)):
        ws = make_ws(
            tmp_path / "ws",
            f'[paths]\nallowed_roots = ["{listed}"]\n'
            '[datasets.a]\npath = "../outside/x.csv"\n[documents]\npath = "link-docs"\n',
        )
        link = ws / "link-docs"
        if not link.is_symlink():
            link.symlink_to(outside / "docs")
        loaded = load_workspace(ws)
        assert loaded.allowed_roots == (outside.resolve(),)
        assert loaded.datasets["a"].path == (outside / "x.csv").resolve()
        assert loaded.documents_path == (outside / "docs").resolve()
        assert loaded.roots == (ws.resolve(), outside.resolve())


@pytest.mark.parametrize(
    ("paths", "fragment"),
    [
        ('allowed_roots = "../outside"', "expected a list of folder paths"),
        ('allowed_roots = ["../nowhere"]', "allowed_roots[0]: folder not found"),
        ('roots = ["../outside"]', "unknown key(s) roots"),
    ],
)
def test_bad_allowed_roots_are_named(tmp_path, outside, paths, fragment):
    ws = make_ws(tmp_path / "ws", f"[paths]\n{paths}\n")
    with pytest.raises(WorkspaceError, match=re.escape(fragment)):
        load_workspace(ws)


def test_a_dataset_swapped_for_a_symlink_after_loading_is_refused_at_open_and_mount(
    tmp_path, outside
):
    from refgate.config import Settings
    from refgate.tools.frames import load_frame
    from refgate.tools.run_python import run_python
    from refgate.tools.sandbox.errors import SandboxError
    from refgate.tools.sandbox.mounts import DatasetMount, confined_source

    ws = make_ws(tmp_path / "ws", '[datasets.a]\npath = "d.csv"\n')
    (ws / "d.csv").write_text(CSV)
    loaded = load_workspace(ws)
    spec = loaded.datasets["a"]
    assert load_frame(spec)["v"].tolist() == [1]
    (ws / "d.csv").unlink()
    (ws / "d.csv").symlink_to(outside / "x.csv")
    with pytest.raises(WorkspaceError, match="changed since the workspace was loaded"):
        load_frame(spec)
    with pytest.raises(SandboxError, match="changed since the workspace was loaded"):
        confined_source(DatasetMount(name="a", path=spec.path))
    result = run_python(
        "emit_result(values={'n': len(datasets['a'])})",
        workspace=loaded,
        settings=Settings(sandbox="rlimits"),
    )
    assert not result.ok and "changed since the workspace was loaded" in (result.error or "")


def test_a_document_symlinked_out_of_the_corpus_is_skipped_not_read(tmp_path, outside):
    from refgate.retrieval.documents import workspace_load

    ws = make_ws(tmp_path / "ws", '[documents]\npath = "docs"\n')
    (ws / "docs").mkdir()
    (ws / "docs" / "ok.txt").write_text("inside")
    (ws / "docs" / "leak.txt").symlink_to(outside / "docs" / "a.txt")
    report = workspace_load(load_workspace(ws))
    assert [d.page_content for d in report.documents] == ["inside"]
    assert [s.source for s in report.skipped] == ["docs/leak.txt"]


def test_documents_in_an_allowed_root_are_read(tmp_path, outside):
    from refgate.retrieval.documents import workspace_load

    ws = make_ws(
        tmp_path / "ws",
        f'[paths]\nallowed_roots = ["{outside}"]\n[documents]\npath = "{outside}/docs"\n',
    )
    report = workspace_load(load_workspace(ws))
    assert [d.page_content for d in report.documents] == ["outside text"] and not report.skipped


def test_a_snapshot_page_swapped_for_a_symlink_is_not_read(tmp_path, outside):
    import json

    from refgate.tools.web_providers import SnapshotCorpus

    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "p.txt").write_text("page text about tunnels")
    (snap / "index.json").write_text(
        json.dumps({"pages": [{"url": "https://e.org/p", "file": "p.txt", "title": "p"}]})
    )
    corpus = SnapshotCorpus(snap)
    (snap / "p.txt").unlink()
    (snap / "p.txt").symlink_to(outside / "docs" / "a.txt")
    page = corpus.fetch("https://e.org/p")
    assert "outside text" not in (page.text or "")


# ---- the served allowlist -----------------------------------------------------------------


@pytest.mark.parametrize("value", [":", "", "relative/dir", "/no/such/folder"])
def test_an_allowlist_with_no_usable_entry_fails_closed(value):
    with pytest.raises(PathEscape, match="no usable entry"):
        served_allowlist({"REFGATE_ALLOWED_WORKSPACES": value})


def test_allowlist_parsing_keeps_usable_entries(tmp_path):
    (tmp_path / "a").mkdir()
    env = {"REFGATE_ALLOWED_WORKSPACES": f"{os.pathsep}{tmp_path / 'a'}{os.pathsep}rel"}
    assert served_allowlist(env) == [(tmp_path / "a").resolve()]
    assert served_allowlist({}) is None


def test_an_allowed_workspace_cannot_reach_outside_the_allowlist(tmp_path, outside):
    allowed = tmp_path / "allowed"
    ws = make_ws(
        allowed / "ws",
        f'[paths]\nallowed_roots = ["{outside}"]\n[datasets.a]\npath = "{outside}/x.csv"\n',
    )
    env = {"REFGATE_ALLOWED_WORKSPACES": str(allowed)}
    with pytest.raises(PathEscape, match=r"paths.allowed_roots\[0\].*outside REFGATE_ALLOWED"):
        load_served_workspace(ws, env)
    # without the allowlist, the workspace's own declaration stands
    assert load_served_workspace(ws, {}).datasets["a"].path == (outside / "x.csv").resolve()
    with pytest.raises(PathEscape, match="outside REFGATE_ALLOWED_WORKSPACES"):
        load_served_workspace(outside, env)


def test_the_research_graph_applies_the_allowlist(tmp_path, monkeypatch):
    from refgate.graph.research import build_research_graph
    from refgate.testing import ScriptedChatModel

    (tmp_path / "allowed").mkdir()
    monkeypatch.setenv("REFGATE_ALLOWED_WORKSPACES", str(tmp_path / "allowed"))
    graph = build_research_graph(
        model=ScriptedChatModel(responses=[]), web_search=object(), web_fetch=object()
    )
    with pytest.raises(PermissionError, match="outside REFGATE_ALLOWED_WORKSPACES"):
        graph.invoke({"question": "q"}, {"configurable": {"workspace": "/etc"}})
    monkeypatch.setenv("REFGATE_ALLOWED_WORKSPACES", ":")
    with pytest.raises(PermissionError, match="no usable entry"):
        graph.invoke({"question": "q"}, {"configurable": {"workspace": str(tmp_path)}})


def test_the_workbench_fails_closed_on_an_unusable_allowlist(settings, monkeypatch, tmp_path):
    from refgate.graph import build_graph
    from refgate.testing import ScriptedChatModel

    monkeypatch.setenv("REFGATE_ALLOWED_WORKSPACES", ":")
    graph = build_graph(model=ScriptedChatModel(responses=[]), settings=settings)
    with pytest.raises(PermissionError, match="no usable entry"):
        graph.invoke({"question": "q", "workspace": str(tmp_path)})


def test_cli_exits_2_for_a_workspace_path_that_escapes(tmp_path, outside):
    from typer.testing import CliRunner

    from refgate.cli import app

    ws = make_ws(tmp_path / "ws", '[datasets.a]\npath = "../outside/x.csv"\n')
    result = CliRunner().invoke(app, ["index", "--workspace", str(ws)])
    assert result.exit_code == 2, result.output
    assert "datasets.a.path" in result.output

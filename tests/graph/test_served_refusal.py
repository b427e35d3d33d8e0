"""A served graph's refusal reaches the client with its type and message.

LangGraph Server serialises a run's exception with ``langgraph_api.serde.default``: for most types
the client gets only "An internal error occurred". A workspace outside
``REFGATE_ALLOWED_WORKSPACES`` must say so, under its own type name.
"""

from __future__ import annotations

import pytest

from refgate.paths import PathEscape, ServedRefusal
from refgate.workspace import load_served_workspace

serde = pytest.importorskip("langgraph_api.serde")

TOML = 'name = "w"\n[datasets.d]\npath = "d.csv"\n'


def _workspace(folder):
    folder.mkdir(parents=True)
    (folder / "refgate.toml").write_text(TOML, encoding="utf-8")
    (folder / "d.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return folder


def test_a_workspace_outside_the_allowlist_reaches_the_client_with_its_message(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = _workspace(tmp_path / "elsewhere")
    env = {"REFGATE_ALLOWED_WORKSPACES": str(allowed)}
    with pytest.raises(ServedRefusal) as caught:
        load_served_workspace(outside, env)
    assert isinstance(caught.value, PathEscape)  # refgate's own handlers still see a path escape
    sent = serde.default(caught.value)
    assert sent["error"] == "ServedRefusal"
    assert "outside REFGATE_ALLOWED_WORKSPACES" in sent["message"]
    assert str(outside.resolve()) in sent["message"]


def test_a_fail_closed_allowlist_reaches_the_client_with_its_message(tmp_path):
    ws = _workspace(tmp_path / "w")
    with pytest.raises(ServedRefusal) as caught:
        load_served_workspace(ws, {"REFGATE_ALLOWED_WORKSPACES": ":"})
    sent = serde.default(caught.value)
    assert sent["error"] == "ServedRefusal" and "no usable entry" in sent["message"]

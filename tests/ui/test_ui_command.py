"""``refgate ui``: loopback by default, the browser opened unless told not to, and a warning that
names the token when bound elsewhere (the server itself is replaced by a recorder)."""

from __future__ import annotations

import re

import pytest
import uvicorn
from typer.testing import CliRunner

from refgate.cli import app


@pytest.fixture
def started(monkeypatch):
    calls: dict[str, list] = {"run": [], "open": []}
    monkeypatch.setattr(
        uvicorn, "run", lambda application, **kw: calls["run"].append((application, kw))
    )
    monkeypatch.setattr("webbrowser.open", lambda url: calls["open"].append(url))
    return calls


def test_loopback_by_default_and_the_browser_opens_with_the_token(started, tmp_path):
    (tmp_path / "refgate.toml").write_text('name = "w"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["ui", "-w", str(tmp_path)])
    assert result.exit_code == 0, result.output
    application, options = started["run"][0]
    assert options["host"] == "127.0.0.1"
    token = application.state.ui.security.token
    assert started["open"] == [f"http://127.0.0.1:8765/?token={token}"]
    assert "warning" not in result.output


def test_another_host_warns_and_names_the_token(started, tmp_path):
    (tmp_path / "refgate.toml").write_text('name = "w"\n', encoding="utf-8")
    result = CliRunner().invoke(
        app, ["ui", "-w", str(tmp_path), "--host", "0.0.0.0", "--no-browser", "--port", "9000"]
    )
    assert result.exit_code == 0, result.output
    token = started["run"][0][0].state.ui.security.token
    flat = " ".join(result.output.split())
    assert re.search(r"warning: listening on 0\.0\.0\.0, not loopback", flat)
    assert f"the token {token}" in flat
    assert started["open"] == []

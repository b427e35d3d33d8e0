"""Fixtures of the DART tests (helpers in ``dart_helpers``)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from tests.support.dart import (
    KEY,
    REAL_DATA,
    RECORDING,
    FakeOpenDart,
    build_real_recording,
    write_real_workspace,
)


@pytest.fixture
def fake_api():
    with FakeOpenDart(RECORDING) as api:
        yield api


@pytest.fixture
def dart_env(fake_api, monkeypatch):
    monkeypatch.setenv("OPENDART_API_KEY", KEY)
    monkeypatch.setenv("OPENDART_BASE_URL", fake_api.base_url)
    return fake_api


@pytest.fixture(scope="session")
def real_recording(tmp_path_factory):
    """The real recording, built once per session from ../shared/data/dart-real."""
    if not (REAL_DATA / "corpcode" / "corpCode.zip").is_file():
        pytest.skip("the shared DART data is not at ../shared/data/dart-real")
    return build_real_recording(tmp_path_factory.mktemp("dart-real") / "recording")


@pytest.fixture(scope="session")
def real_api(real_recording):
    with FakeOpenDart(real_recording) as api:
        yield api


@pytest.fixture(scope="session")
def real_workspace(real_api, tmp_path_factory):
    """A workspace synced once per session from the real recording (엔씨소프트 by name)."""
    ws = write_real_workspace(tmp_path_factory.mktemp("dart-real-ws") / "kr-real")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENDART_API_KEY", KEY)
        mp.setenv("OPENDART_BASE_URL", real_api.base_url)
        result = CliRunner().invoke(app, ["dart", "sync", "-w", str(ws), "--json"])
    assert result.exit_code == 0, result.output
    return ws, json.loads(result.stdout)

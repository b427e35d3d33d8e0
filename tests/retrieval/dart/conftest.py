"""Fixtures of the DART tests (helpers in ``dart_helpers``)."""

from __future__ import annotations

import pytest

from tests.support.dart import KEY, RECORDING, FakeOpenDart


@pytest.fixture
def fake_api():
    with FakeOpenDart(RECORDING) as api:
        yield api


@pytest.fixture
def dart_env(fake_api, monkeypatch):
    monkeypatch.setenv("OPENDART_API_KEY", KEY)
    monkeypatch.setenv("OPENDART_BASE_URL", fake_api.base_url)
    return fake_api

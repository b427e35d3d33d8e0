"""Fixtures shared by every test folder."""

import pytest


@pytest.fixture
def env(monkeypatch):
    """No model, endpoint, database or workspace from the machine's environment; one retry."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "REFGATE_MODEL",
        "REFGATE_DATABASE_URL",
        "REFGATE_WORKSPACE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REFGATE_MAX_RETRIES", "1")
    return monkeypatch

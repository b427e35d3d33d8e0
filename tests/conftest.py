"""Fixtures shared by every test folder."""

import pytest
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener


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


class SerdeEvents(list):
    """LangGraph's serde events seen during a test (``register_serde_event_listener``)."""

    #: The events behind "Deserializing unregistered type" and "Blocked deserialization".
    UNREGISTERED = frozenset(
        {"msgpack_unregistered_allowed", "msgpack_blocked", "msgpack_method_blocked"}
    )

    def unregistered(self) -> list[dict]:
        return [e for e in self if e.get("kind") in self.UNREGISTERED]


@pytest.fixture
def serde_events():
    """Every serde event while the test runs; ``.unregistered()`` those of a custom type."""
    seen = SerdeEvents()
    remove = register_serde_event_listener(seen.append)
    yield seen
    remove()

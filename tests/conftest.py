"""Fixtures shared by every test folder."""

import shutil
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener

from refgate.config import Settings
from refgate.tools.registry import override_tool
from tests.support.evidence import evidence_spec
from tests.support.serving import copy_sample

REPO = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``runs_first`` go first (a stable sort keeps every other order): under
    ``-n 2 --dist loadfile`` (scripts/test.sh) the embedded-model run overlaps the other files
    instead of running alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("runs_first") is None)


@pytest.fixture(autouse=True)
def _own_trust_file(tmp_path_factory, monkeypatch) -> None:
    """Workspace trust (refgate.trust) recorded in a file of the test's own, never the
    person's ~/.config: a test trusts the workspaces whose commands it starts."""
    folder = tmp_path_factory.mktemp("trust")
    monkeypatch.setenv("REFGATE_TRUST_FILE", str(folder / "trusted-workspaces.json"))


@pytest.fixture
def settings() -> Settings:
    """Settings that never reach a network model (tests inject scripted models), with the
    bubblewrap sandbox whatever the machine's REFGATE_SANDBOX says."""
    return Settings(
        model="scripted", api_key="test-key", work_max_rounds=4, max_rounds=3, sandbox="bwrap"
    )


@pytest.fixture
def gdp_tool():
    """RunPython replaced by a scripted evidence tool issuing realgdp = 12990.341 (billion USD)."""
    spec = evidence_spec({"realgdp": 12990.341})
    with override_tool(spec):
        yield spec


@pytest.fixture
def saver():
    return InMemorySaver()


@pytest.fixture
def mini_workspace(tmp_path) -> Path:
    """A workspace with one dataset (the sample's macro CSV) and no documents."""
    sample = REPO / "examples" / "us-macro"
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    shutil.copy(sample / "data" / "statsmodels_macrodata.csv", ws / "data")
    (ws / "refgate.toml").write_text(
        'name = "mini"\n[datasets.macro]\npath = "data/statsmodels_macrodata.csv"\n'
        'description = "US quarterly macro data"\n',
        encoding="utf-8",
    )
    return ws


@pytest.fixture
def sample(tmp_path) -> Path:
    """A copy of the us-macro sample workspace of this test's own."""
    return copy_sample(tmp_path / "us-macro")


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

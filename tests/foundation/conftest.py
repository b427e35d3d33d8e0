import shutil
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from refgate.config import Settings
from refgate.tools.registry import override_tool
from tests.support.evidence import evidence_spec


@pytest.fixture
def settings() -> Settings:
    """Settings that never reach a network model (tests inject scripted models)."""
    return Settings(model="scripted", api_key="test-key", work_max_rounds=4, max_rounds=3)


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
    sample = Path(__file__).resolve().parents[2] / "examples" / "us-macro"
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    shutil.copy(sample / "data" / "statsmodels_macrodata.csv", ws / "data")
    (ws / "refgate.toml").write_text(
        'name = "mini"\n[datasets.macro]\npath = "data/statsmodels_macrodata.csv"\n'
        'description = "US quarterly macro data"\n',
        encoding="utf-8",
    )
    return ws

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(env):
    """The shared offline environment, without the embedded smoke model."""
    env.setenv("REFGATE_LOCAL_LLM", "0")
    return env


@pytest.fixture
def mini_workspace(tmp_path) -> Path:
    """One dataset (the sample's macro CSV), no documents."""
    sample = ROOT / "examples" / "us-macro"
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    shutil.copy(sample / "data" / "statsmodels_macrodata.csv", ws / "data")
    (ws / "refgate.toml").write_text(
        'name = "mini"\n[datasets.macro]\npath = "data/statsmodels_macrodata.csv"\n'
        'description = "US quarterly macro data"\n'
        '[datasets.macro.columns.unemp]\nunit = "%"\ndescription = "Unemployment rate"\n'
        '[datasets.macro.columns.realgdp]\nunit = "USD"\nscale = "billion"\n'
        'description = "Real GDP"\n',
        encoding="utf-8",
    )
    return ws

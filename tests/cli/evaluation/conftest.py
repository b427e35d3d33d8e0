from pathlib import Path

import pytest


@pytest.fixture
def env(env):
    """The shared offline environment, without the embedded smoke model."""
    env.setenv("REFGATE_LOCAL_LLM", "0")
    return env


@pytest.fixture
def mini_workspace(mini_workspace: Path) -> Path:
    """The shared one-dataset workspace, its unemployment and real GDP columns described (the
    eval questions name them)."""
    toml = mini_workspace / "refgate.toml"
    with toml.open("a", encoding="utf-8") as fh:
        fh.write(
            '[datasets.macro.columns.unemp]\nunit = "%"\ndescription = "Unemployment rate"\n'
            '[datasets.macro.columns.realgdp]\nunit = "USD"\nscale = "billion"\n'
            'description = "Real GDP"\n'
        )
    return mini_workspace

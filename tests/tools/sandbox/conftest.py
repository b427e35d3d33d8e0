"""Fixtures for the WORK tools: the sample workspace, a ledger, a tool context."""

import pytest

from refgate.catalog.toolspec import ToolContext
from refgate.refs import RefLedger
from tests.support.sandbox import SAMPLE


@pytest.fixture(scope="session")
def sample_ws():
    from refgate.workspace import load_workspace

    return load_workspace(SAMPLE)


@pytest.fixture
def ledger():
    return RefLedger()


@pytest.fixture
def ctx(sample_ws, ledger, settings, tmp_path):
    return ToolContext("work", ledger, settings, sample_ws, artifacts_dir=tmp_path / "artifacts")

import pytest

from refgate.catalog.toolspec import ToolContext
from refgate.config import Settings
from refgate.provenance import RunProvenance
from refgate.refs import RefLedger


@pytest.fixture
def settings() -> Settings:
    return Settings(model="scripted", api_key="test-key", work_max_rounds=4, max_rounds=3)


@pytest.fixture
def ctx(settings) -> ToolContext:
    return ToolContext(
        pass_name="work", ledger=RefLedger(), settings=settings, taint=RunProvenance()
    )

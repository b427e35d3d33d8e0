import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from refgate.catalog.toolspec import ToolContext  # noqa: E402
from refgate.config import Settings  # noqa: E402
from refgate.provenance import RunProvenance  # noqa: E402
from refgate.refs import RefLedger  # noqa: E402


@pytest.fixture
def settings() -> Settings:
    return Settings(model="scripted", api_key="test-key", work_max_rounds=4, max_rounds=3)


@pytest.fixture
def ctx(settings) -> ToolContext:
    return ToolContext(
        pass_name="work", ledger=RefLedger(), settings=settings, taint=RunProvenance()
    )

import pytest

from refgate.catalog.toolspec import ToolContext
from refgate.provenance import RunProvenance
from refgate.refs import RefLedger


@pytest.fixture
def ctx(settings) -> ToolContext:
    return ToolContext(
        pass_name="work", ledger=RefLedger(), settings=settings, provenance=RunProvenance()
    )

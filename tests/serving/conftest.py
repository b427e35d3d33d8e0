from pathlib import Path

import pytest

from tests.support.serving import copy_sample


@pytest.fixture
def sample(tmp_path) -> Path:
    """A copy of the us-macro sample workspace of this test's own."""
    return copy_sample(tmp_path / "us-macro")

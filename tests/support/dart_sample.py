"""Sync examples/kr-filings from its synthetic recording through the local fake of OpenDART,
as a user would with a real key: ``python -m tests.support.dart_sample`` (from the repository root). The sample's
``documents/dart``, ``data/dart`` and ``dart/`` are this command's output
(``tests/retrieval/dart/test_sample.py`` checks that they still are)."""

from __future__ import annotations

import os
from pathlib import Path

from refgate.retrieval.dart.api import DartClient
from refgate.retrieval.dart.config import load_dart_config
from refgate.retrieval.dart.sync import sync
from tests.support.dart import KEY, RECORDING, FakeOpenDart

SAMPLE = RECORDING.parent


def make(workspace: Path = SAMPLE) -> None:
    config = load_dart_config(workspace)
    with FakeOpenDart(RECORDING) as api, DartClient(KEY, base_url=api.base_url) as client:
        result = sync(config, client, say=print)
    print(f"{len(result.fetched)} filings, {result.statement_rows} statement rows")


if __name__ == "__main__":
    make(Path(os.environ.get("KR_SAMPLE", SAMPLE)))

"""``refgate dart sync`` on REAL filings: builds the real recording from
``../shared/data/dart-real`` (``scripts/make_dart_recording.py``) into a temporary folder, serves it
with the local fake of OpenDART and syncs 엔씨소프트 (by name), SK하이닉스, 현대자동차 and 삼성전자
over 2022-08-01..2024-03-31; prints what was stored and the time (wall and CPU) of the first
sync, of a second one (nothing new) and of an offline rebuild.

    .venv/bin/python benchmarks/dart_real_sync.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from shared.fake_opendart import KEY, FakeOpenDart

from refgate.retrieval.dart.api import DartClient
from refgate.retrieval.dart.config import load_dart_config
from refgate.retrieval.dart.sync import rebuild, sync

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "dart-real"
TOML = """name = "kr-real"
[dart]
companies = ["엔씨소프트", "000660", "00164742", "005930"]
reports = ["사업보고서", "반기보고서", "분기보고서"]
start = "2022-08-01"
end = "2024-03-31"
"""


def _recording_builder():
    spec = importlib.util.spec_from_file_location("make", REPO / "scripts/make_dart_recording.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(label: str, fn):
    t, c = time.perf_counter(), time.process_time()
    result = fn()
    print(f"{label}: {time.perf_counter() - t:.1f} s wall, {time.process_time() - c:.1f} s CPU")
    return result


def main() -> None:
    print(f"load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="dart-real-") as tmp:
        root = Path(tmp)
        counts = timed(
            "build the recording",
            lambda: _recording_builder().build(
                root / "rec", data=DATA, start="20220801", end="20240331"
            ),
        )
        print(f"  recording: {counts}")
        ws = root / "ws"
        ws.mkdir()
        (ws / "refgate.toml").write_text(TOML, encoding="utf-8")
        config = load_dart_config(ws)
        with FakeOpenDart(root / "rec") as api:
            for label in ("first sync", "second sync"):
                with DartClient(KEY, base_url=api.base_url) as client:
                    result = timed(label, lambda c=client: sync(config, c))
                print(
                    f"  {len(result.fetched)} fetched, {result.skipped} already synced, "
                    f"{result.statement_rows:,} statement rows, {result.requests} requests, "
                    f"{len(result.problems)} problems"
                )
        timed("offline rebuild", lambda: rebuild(config))
        docs = list((ws / "documents").rglob("*.dart"))
        sections = sum(len(json.loads(p.read_text("utf-8"))["sections"]) for p in docs)
        size = sum(p.stat().st_size for p in docs) / 1e6
        print(f"  {len(docs)} documents, {sections} sections, {size:.1f} MB of .dart JSON")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()

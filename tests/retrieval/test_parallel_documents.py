"""Files are parsed several at once (a bounded pool of ingestion workers), in file order."""

from __future__ import annotations

import threading
import time

from refgate.retrieval.documents import read_documents
from refgate.retrieval.loaders.bounded import BoundedChild
from refgate.retrieval.parse_cache import ParseCache


def test_files_are_parsed_by_a_bounded_pool_and_come_in_file_order(tmp_path, monkeypatch):
    docs = tmp_path / "documents"
    docs.mkdir()
    for n in range(6):
        (docs / f"note{n}.txt").write_text(f"Revenue rose {n} percent in quarter {n}.")
    seen = {"running": 0, "peak": 0, "children": set()}
    lock = threading.Lock()
    real_call = BoundedChild.call

    def counted(self, func, *args, **kwargs):
        with lock:
            seen["running"] += 1
            seen["peak"] = max(seen["peak"], seen["running"])
            seen["children"].add(id(self))
        try:
            time.sleep(0.3)  # long enough for parses that run together to overlap
            return real_call(self, func, *args, **kwargs)
        finally:
            with lock:
                seen["running"] -= 1

    monkeypatch.setattr(BoundedChild, "call", counted)
    monkeypatch.setenv("REFGATE_PARSE_WORKERS", "2")
    cache = ParseCache(tmp_path / "parsed.sqlite")
    try:
        report = read_documents(docs, root=tmp_path, cache=cache)
        assert cache.sources() == {f"documents/note{n}.txt" for n in range(6)}
    finally:
        cache.close()
    assert seen["peak"] == 2  # two files at once, never more than the pool
    assert len(seen["children"]) == 2  # one ingestion worker each
    assert [d.metadata["doc_id"] for d in report.documents] == [f"note{n}" for n in range(6)]
    assert [d.page_content for d in report.documents] == [
        f"Revenue rose {n} percent in quarter {n}." for n in range(6)
    ]

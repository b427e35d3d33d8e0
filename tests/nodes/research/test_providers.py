"""Web providers: the offline snapshot (sample workspace included) and the optional real
providers against recorded responses served on loopback."""

from __future__ import annotations

import importlib.util
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from refgate.tools.web_providers import (
    HttpFetch,
    SearxSearch,
    SnapshotCorpus,
    WebProviderError,
    default_providers,
)
from refgate.workspace import load_workspace

DATA = Path(__file__).parent / "data"
SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "us-macro"


def fomc_minutes_index(folder: Path) -> dict:
    """The sample's index writer (examples/us-macro/make_web_index.py, a script, not a module)."""
    spec = importlib.util.spec_from_file_location("make_web_index", SAMPLE / "make_web_index.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fomc_minutes_index(folder)


@pytest.fixture(scope="module")
def sample_web():
    return SnapshotCorpus(SAMPLE / "web")


def test_sample_snapshot_index_is_current_and_complete(sample_web):
    committed = json.loads((SAMPLE / "web" / "index.json").read_text(encoding="utf-8"))
    assert committed == fomc_minutes_index(SAMPLE / "web")
    assert len(sample_web) == 31 == len(list((SAMPLE / "web" / "minutes").glob("*.txt")))
    first = committed["pages"][0]
    assert first["url"] == "https://www.federalreserve.gov/monetarypolicy/fomcminutes20061212.htm"
    assert first["date"] == "2007-01-03" and "December 12, 2006" in first["title"]


def test_snapshot_search_and_fetch(sample_web):
    hits = sample_web.search(
        "target range for the federal funds rate of 0 to 1/4 percent", max_results=3
    )
    assert len(hits) == 3 and hits[0].score >= hits[1].score >= hits[2].score
    assert all(h.url.startswith("https://www.federalreserve.gov/") and h.snippet for h in hits)
    page = sample_web.fetch("http://federalreserve.gov/monetarypolicy/fomcminutes20081216.htm/")
    assert page.ok and "December 16, 2008" in page.title and len(page.text) > 10_000
    assert not page.text.startswith("\ufeff")
    missing = sample_web.fetch("https://www.federalreserve.gov/elsewhere.htm")
    assert not missing.ok and "not in the offline web snapshot" in missing.error
    assert sample_web.search("") == []


def test_snapshot_rejects_bad_indexes(tmp_path):
    with pytest.raises(WebProviderError, match="missing"):
        SnapshotCorpus(tmp_path)
    (tmp_path / "index.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(WebProviderError, match="not valid JSON"):
        SnapshotCorpus(tmp_path)
    (tmp_path / "index.json").write_text(
        json.dumps({"pages": [{"url": "https://a", "file": "../../etc/passwd"}]}), encoding="utf-8"
    )
    with pytest.raises(WebProviderError, match="outside"):
        SnapshotCorpus(tmp_path)
    for bad, why in (
        ("[" * 5000 + "]" * 5000, "not valid JSON"),  # nested past the decoder's limit
        ('[{"url": "https://a", "file": "a.html"}]', "expected an object"),
        ('{"pages": {"url": "https://a"}}', "expected an object"),
    ):
        (tmp_path / "index.json").write_text(bad, encoding="utf-8")
        with pytest.raises(WebProviderError, match=why):
            SnapshotCorpus(tmp_path)
    (tmp_path / "index.json").write_bytes(b'{"pages": ["\xff"]}')
    with pytest.raises(WebProviderError, match="not valid JSON"):
        SnapshotCorpus(tmp_path)


def test_default_providers_use_the_workspace_snapshot_and_env_opt_ins(monkeypatch):
    ws = load_workspace(SAMPLE)
    search, fetch = default_providers(ws, env={})
    assert search.name == fetch.name == "snapshot"
    search, fetch = default_providers(None, env={})
    assert search.search("anything") == [] and not fetch.fetch("https://x").ok
    search, fetch = default_providers(
        ws, env={"REFGATE_WEB_SEARCH": "searx:http://127.0.0.1:9", "REFGATE_WEB_FETCH": "http"}
    )
    assert search.name == "searx" and fetch.name == "http"
    with pytest.raises(WebProviderError):
        default_providers(ws, env={"REFGATE_WEB_SEARCH": "google"})


class _Recorded(BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, str, bytes]] = {}
    seen: list[str] = []

    def do_GET(self):  # noqa: N802
        self.seen.append(self.path)
        status, ctype, body = self.routes.get(self.path.split("?")[0], (404, "text/plain", b"nf"))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback():
    _Recorded.routes = {
        "/search": (200, "application/json", (DATA / "searx_response.json").read_bytes()),
        "/news/aurora": (200, "text/html; charset=utf-8", (DATA / "page.html").read_bytes()),
        "/plain.txt": (200, "text/plain", b"Plain text page about the Aurora tunnel."),
        "/image.png": (200, "image/png", b"\x89PNG...."),
        "/gone": (410, "text/plain", b"gone"),
    }
    _Recorded.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_searx_provider_through_langchain_against_recorded_response(loopback):
    hits = SearxSearch(loopback + "/search").search("fomc zero lower bound", max_results=5)
    assert [h.url for h in hits] == [
        "https://www.federalreserve.gov/monetarypolicy/fomcminutes20081216.htm",
        "https://example.com/blog/zlb",
    ]
    assert "0 to 1/4 percent" in hits[0].snippet and hits[1].title.startswith("What the zero")
    assert any("q=fomc" in p and "format=json" in p for p in _Recorded.seen)


def test_http_fetch_extracts_article_text_with_trafilatura(loopback):
    page = HttpFetch(timeout=5).fetch(loopback + "/news/aurora")
    assert page.ok, page.error
    assert "replace worn rails" in page.text and "twelve million euro" in page.text
    assert "SCRIPT_BODY_MUST_NOT_APPEAR" not in page.text and "color:red" not in page.text
    assert page.title == "Aurora tunnel closes for maintenance"
    assert HttpFetch().fetch(loopback + "/plain.txt").text.startswith("Plain text page")


def test_http_fetch_failures_are_failed_pages(loopback):
    fetch = HttpFetch(timeout=5)
    assert fetch.fetch(loopback + "/gone").error == "HTTP 410"
    assert "unsupported content type" in fetch.fetch(loopback + "/image.png").error
    assert "only http(s)" in fetch.fetch("file:///etc/passwd").error
    closed = fetch.fetch("http://127.0.0.1:9/")
    assert not closed.ok and "fetch failed" in closed.error

"""PDF confinement (issue 46, item 5): the browser that prints a report runs with JavaScript
off and no file or network access, beside the page's CSP. The payload below, printed WITHOUT a
CSP, embeds a local file and ``/etc/hostname``, makes requests and runs a script when those are
on; the PDF must show none of it, and the local server must see no request."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from refgate.report import pdf

pypdfium2 = pytest.importorskip("pypdfium2")
pytestmark = pytest.mark.skipif(pdf.find_browser() is None, reason="no Chromium installed")


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.end_headers()
        self.wfile.write(b"NETWORK-CONTENT")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    _Recorder.hits = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1], _Recorder.hits
    srv.shutdown()


def _payload(secret: Path, port: int) -> str:
    return f"""<!doctype html><html><body><p>static text</p>
<iframe src="{secret.as_uri()}" width="400" height="60"></iframe>
<iframe src="file:///etc/hostname" width="400" height="60"></iframe>
<object data="{secret.as_uri()}" width="400" height="60"></object>
<iframe src="http://127.0.0.1:{port}/frame" width="400" height="60"></iframe>
<img src="http://127.0.0.1:{port}/img.png">
<link rel="stylesheet" href="http://127.0.0.1:{port}/style.css">
<script>
document.body.insertAdjacentHTML('beforeend', '<p>SCRIPT-RAN-MARKER</p>');
fetch('http://127.0.0.1:{port}/fetch');
</script></body></html>"""


def _text(data: bytes, tmp_path: Path) -> str:
    path = tmp_path / "out.pdf"
    path.write_bytes(data)
    doc = pypdfium2.PdfDocument(str(path))
    return " ".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))


@pytest.mark.parametrize("bwrap", [True, False], ids=["bubblewrap", "without-bubblewrap"])
def test_a_hostile_page_prints_without_script_files_or_requests(
    tmp_path, server, monkeypatch, bwrap
):
    port, hits = server
    secret = tmp_path / "secret.txt"
    secret.write_text("FILE-SECRET-CONTENT")
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").is_file() else ""
    if not bwrap:
        real_which = pdf.shutil.which
        monkeypatch.setattr(pdf.shutil, "which", lambda n: None if n == "bwrap" else real_which(n))
    elif pdf.shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    text = _text(pdf.html_to_pdf(_payload(secret, port)), tmp_path)
    assert "static text" in text  # the page itself is printed
    assert "SCRIPT-RAN-MARKER" not in text
    assert "FILE-SECRET-CONTENT" not in text
    assert "NETWORK-CONTENT" not in text
    if len(hostname) >= 4:
        assert hostname not in text.replace("static text", "")
    assert hits == []


def test_the_sandbox_can_be_required(monkeypatch):
    real_which = pdf.shutil.which
    monkeypatch.setattr(pdf.shutil, "which", lambda n: None if n == "bwrap" else real_which(n))
    monkeypatch.setenv("REFGATE_PDF_REQUIRE_SANDBOX", "1")
    with pytest.raises(pdf.PdfError, match="bubblewrap"):
        pdf.html_to_pdf("<p>x</p>")

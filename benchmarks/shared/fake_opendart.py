"""A local fake of OpenDART for tests: an HTTP server on loopback that answers ``list.json``,
``document.xml``, ``fnlttSinglAcntAll.json`` and ``corpCode.xml`` in OpenDART's documented
formats (JSON with ``status``/``message``, ZIPs, the XML status answer of the ZIP endpoints)
from a recording folder:

- ``companies.json``: ``[{corp_code, corp_name, stock_code, modify_date}]``, or ``corpCode.zip``:
  OpenDART's company list as received, served as is;
- ``filings.json``: list.json rows plus ``detail_type`` (A001, ...), ``reprt_code``, ``bsns_year``;
- ``documents/<rcept_no>.xml``: each filing's main document;
- ``statements/<rcept_no>-<CFS|OFS>.json``: each fnlttSinglAcntAll answer.

``FakeOpenDart.faults`` makes it fail on purpose: ``{"document.xml": ("500", 2)}`` answers HTTP
500 from the 2nd document request on, ``("020", n)`` answers the daily-limit status, ``("drop",
n)`` closes the connection without an answer.

``FakeOpenDart.hostile`` answers on purpose what a hostile or broken server would: a function of
``(endpoint, params)`` returning a ``Reply`` (status, headers, body chunks each sent after a
delay, a Content-Length that lies) or None for the recording's answer.
"""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

KEY = "test-key-0123456789"


def _status_json(status: str, message: str) -> bytes:
    return json.dumps({"status": status, "message": message}, ensure_ascii=False).encode()


def _status_xml(status: str, message: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<result><status>{status}</status>'
        f"<message>{message}</message></result>"
    ).encode()


@dataclass
class Reply:
    """A hand-made answer: ``chunks`` are written one by one, each after ``delay_s``;
    ``length`` is the Content-Length sent (None: the true length, -1: none)."""

    chunks: Iterable[bytes] = ()
    status: int = 200
    content_type: str = "application/octet-stream"
    delay_s: float = 0.0
    length: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


Hostile = Callable[[str, dict[str, str]], Reply | None]


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():  # fixed timestamps: the same answer, the same bytes
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


class FakeOpenDart:
    """The fake API over ``recording``; ``with FakeOpenDart(folder) as api: api.base_url``."""

    def __init__(self, recording: Path, key: str = KEY) -> None:
        self.recording = Path(recording)
        self.key = key
        corp_zip = self.recording / "corpCode.zip"
        self.corp_zip = corp_zip.read_bytes() if corp_zip.is_file() else None
        self.companies = (
            []
            if self.corp_zip is not None
            else json.loads((self.recording / "companies.json").read_text("utf-8"))
        )
        self.hostile: Hostile | None = None
        self.filings = json.loads((self.recording / "filings.json").read_text("utf-8"))
        self.faults: dict[str, tuple[str, int]] = {}
        self.calls: list[tuple[str, dict[str, str]]] = []
        self._counts: dict[str, int] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                endpoint = url.path.rsplit("/", 1)[-1]
                params = {k: v[-1] for k, v in parse_qs(url.query).items()}
                fake.calls.append((endpoint, params))
                n = fake._counts[endpoint] = fake._counts.get(endpoint, 0) + 1
                reply = fake.hostile(endpoint, params) if fake.hostile else None
                if reply is not None:
                    self._reply(reply)
                    return
                fault = fake.faults.get(endpoint)
                if fault and n >= fault[1]:
                    if fault[0] == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if fault[0] == "500":
                        self._send(500, b"Internal Server Error", "text/plain")
                        return
                    if fault[0] == "020":
                        self._status(endpoint, "020", "요청 제한을 초과하였습니다.")
                        return
                if params.get("crtfc_key") != fake.key:
                    self._status(endpoint, "010", "등록되지 않은 키입니다.")
                    return
                handler = {
                    "corpCode.xml": fake.corp_code,
                    "list.json": fake.list_json,
                    "document.xml": fake.document,
                    "fnlttSinglAcntAll.json": fake.statements,
                }.get(endpoint)
                if handler is None:
                    self._send(404, b"not found", "text/plain")
                    return
                status, body, kind = handler(params)
                if status != "000":
                    self._status(endpoint, status, body.decode())
                    return
                self._send(200, body, kind)

            def _status(self, endpoint: str, status: str, message: str) -> None:
                if endpoint.endswith(".xml"):
                    self._send(200, _status_xml(status, message), "application/xml")
                else:
                    self._send(200, _status_json(status, message), "application/json")

            def _reply(self, reply: Reply) -> None:
                chunks = list(reply.chunks) if reply.length is None else reply.chunks
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                length = (
                    sum(len(c) for c in chunks)  # type: ignore[arg-type]
                    if reply.length is None
                    else reply.length
                )
                if length >= 0:
                    self.send_header("Content-Length", str(length))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    for chunk in chunks:
                        if reply.delay_s:
                            time.sleep(reply.delay_s)
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except OSError:  # the client gave up: as a real server, stop writing
                    pass
                self.close_connection = True

            def _send(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api"

    def __enter__(self) -> FakeOpenDart:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, endpoint: str) -> int:
        return sum(1 for e, _ in self.calls if e == endpoint)

    # ------------------------------------------------------------------ endpoints

    def corp_code(self, params: dict[str, str]) -> tuple[str, bytes, str]:
        if self.corp_zip is not None:
            return "000", self.corp_zip, "application/zip"
        items = "".join(
            f"<list><corp_code>{c['corp_code']}</corp_code><corp_name>{c['corp_name']}</corp_name>"
            f"<stock_code>{c.get('stock_code') or ' '}</stock_code>"
            f"<modify_date>{c.get('modify_date', '20240101')}</modify_date></list>"
            for c in self.companies
        )
        xml = f'<?xml version="1.0" encoding="UTF-8"?>\n<result>{items}</result>'.encode()
        return "000", _zip({"CORPCODE.xml": xml}), "application/zip"

    def list_json(self, params: dict[str, str]) -> tuple[str, bytes, str]:
        rows = [
            f
            for f in self.filings
            if f["corp_code"] == params.get("corp_code")
            and f["detail_type"] == params.get("pblntf_detail_ty")
            and params.get("bgn_de", "0") <= f["rcept_dt"] <= params.get("end_de", "99999999")
        ]
        if not rows:
            return "013", "조회된 데이타가 없습니다.".encode(), ""
        rows.sort(key=lambda f: f["rcept_dt"], reverse=True)
        size = int(params.get("page_count", 10))
        page = int(params.get("page_no", 1))
        total_page = -(-len(rows) // size)
        shown = rows[(page - 1) * size : page * size]
        keys: tuple[str, ...] = (
            "corp_cls",
            "corp_name",
            "corp_code",
            "stock_code",
            "report_nm",
            "rcept_no",
        )
        keys += ("flr_nm", "rcept_dt", "rm")
        body = {
            "status": "000",
            "message": "정상",
            "page_no": page,
            "page_count": size,
            "total_count": len(rows),
            "total_page": total_page,
            "list": [{k: f.get(k, "") for k in keys} for f in shown],
        }
        return "000", json.dumps(body, ensure_ascii=False).encode(), "application/json"

    def document(self, params: dict[str, str]) -> tuple[str, bytes, str]:
        rcept_no = params.get("rcept_no", "")
        path = self.recording / "documents" / f"{rcept_no}.xml"
        if not rcept_no.isdigit() or not path.is_file():
            return "014", "파일이 존재하지 않습니다.".encode(), ""
        return "000", _zip({f"{rcept_no}.xml": path.read_bytes()}), "application/zip"

    def statements(self, params: dict[str, str]) -> tuple[str, bytes, str]:
        for f in self.filings:
            if (
                f["corp_code"] == params.get("corp_code")
                and str(f.get("bsns_year")) == params.get("bsns_year")
                and f.get("reprt_code") == params.get("reprt_code")
            ):
                path = (
                    self.recording / "statements" / f"{f['rcept_no']}-{params.get('fs_div')}.json"
                )
                if path.is_file():  # the first listed filing of that period with statements
                    return "000", path.read_bytes(), "application/json"
        return "013", "조회된 데이타가 없습니다.".encode(), ""

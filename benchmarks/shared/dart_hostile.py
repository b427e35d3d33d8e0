"""Hostile OpenDART answers for the local fake (``fake_opendart.Reply``), written by the tests of
``refgate dart sync`` and by ``benchmarks/dart_hostile.py``: receipt numbers that are paths, ZIP
bombs, filings nested 1,500 deep, answers sent a byte at a time, answers far over any cap, bad
JSON and bad statuses. Each maker returns a ``Reply``."""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Iterator

from .fake_opendart import Reply

MB = 1024 * 1024


def json_reply(value: object) -> Reply:
    return Reply([json.dumps(value, ensure_ascii=False).encode()], content_type="application/json")


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def zip_reply(files: dict[str, bytes]) -> Reply:
    return Reply([zip_bytes(files)], content_type="application/zip")


def filing_xml(title: str, text: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><DOCUMENT><DOCUMENT-NAME>사업보고서</DOCUMENT-NAME>'
        f"<BODY><SECTION-1><TITLE>{title}</TITLE><P>{text}</P></SECTION-1></BODY></DOCUMENT>"
    ).encode()


def bomb_zip(rcept_no: str, unpacked_mb: int) -> bytes:
    """A document ZIP of a few hundred KB whose main member unpacks to ``unpacked_mb`` MB."""
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf,
        zf.open(f"{rcept_no}.xml", "w", force_zip64=True) as member,
    ):
        member.write(b'<?xml version="1.0" encoding="utf-8"?><DOCUMENT><BODY><P>')
        block = b" " * MB
        for _ in range(unpacked_mb):
            member.write(block)
        member.write(b"</P></BODY></DOCUMENT>")
    return buf.getvalue()


def lying_zip(rcept_no: str, unpacked_mb: int) -> bytes:
    """A bomb whose local and central headers claim the member unpacks to 100 bytes."""
    payload = b'<?xml version="1.0"?><DOCUMENT><BODY><P>' + b" " * (unpacked_mb * MB)
    data = bytearray(zip_bytes({f"{rcept_no}.xml": payload + b"</P></BODY></DOCUMENT>"}))
    small = (100).to_bytes(4, "little")
    data[22:26] = small  # the local header's uncompressed size
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = small  # the central directory's
    return bytes(data)


def deep_xml(depth: int) -> bytes:
    """A filing whose text sits ``depth`` elements deep."""
    return (
        '<?xml version="1.0" encoding="utf-8"?><DOCUMENT><BODY><SECTION-1><TITLE>I. 깊음</TITLE>'
        + "<P>" * depth
        + "x"
        + "</P>" * depth
        + "</SECTION-1></BODY></DOCUMENT>"
    ).encode()


def trickle(body: bytes, every_s: float) -> Reply:
    """``body`` one byte every ``every_s`` seconds (the Content-Length is true)."""
    return Reply([body[i : i + 1] for i in range(len(body))], delay_s=every_s, length=len(body))


class Huge:
    """``size`` bytes of a JSON answer in 64 KB chunks; ``sent`` counts what was produced."""

    def __init__(self, size: int) -> None:
        self.size, self.sent = size, 0

    def __iter__(self) -> Iterator[bytes]:
        head = b'{"status": "000", "message": "ok", "total_page": 1, "list": ['
        row = b'{"rcept_no": "20240101000001", "corp_code": "00000000"},'
        chunk = row * (65536 // len(row))
        self.sent = len(head)
        yield head
        while self.sent + len(chunk) < self.size:
            self.sent += len(chunk)
            yield chunk
        self.sent += 2
        yield b"{}]}"

    def reply(self, declare: bool = True) -> Reply:
        return Reply(self, content_type="application/json", length=self.size if declare else -1)


def deep_json(depth: int) -> Reply:
    return Reply([b'{"status": "000", "list": ' + b"[" * depth + b"]" * depth + b"}"])


def bad_json() -> Reply:
    return Reply([b'{"status": "000", "list": [{"rcept_no": '], content_type="application/json")


def status(code: int) -> Reply:
    return Reply([b"<html>oops</html>"], status=code, content_type="text/html")


def gzip_bomb(unpacked_mb: int) -> Reply:
    """A gzip-encoded answer of a few hundred KB inflating to ``unpacked_mb`` MB (built without
    ever holding the inflated bytes)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * MB
    body = b"".join(deflate.compress(block) for _ in range(unpacked_mb)) + deflate.flush()
    return Reply([body], content_type="application/json", headers={"Content-Encoding": "gzip"})

"""Encoded payloads: base64 and hex runs (and the whole text in ROT13 when the text names
ROT13) are decoded and rescanned as scopes of their own; a decoded scope's signals keep their
kind and are reported under the family ``encoded_payload``, spanning the encoded run."""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from collections.abc import Callable, Iterator

_B64_RE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RE = re.compile(r"(?:[0-9a-fA-F]{2}){12,}")
_ROT13_RE = re.compile(r"rot[\s-]?13", re.I)
_BINARY_RE = re.compile(r"(?<![01])(?:[01]{8}[\s,]+){3,}[01]{8}(?![01])")
_MAX_RUN = 20_000
_LONG_RE = re.compile(r"(?<!\S)\S{16,}")


def _printable(decoded: str) -> bool:
    """Decoded text that reads as words: mostly letters and spaces, a few spaces at least."""
    if len(decoded) < 8 or " " not in decoded:
        return False
    good = sum(
        ch.isalnum() or ch.isspace() or ch in ".,:;!?'\"()-_@/$%&{}[]<>|#=*" for ch in decoded
    )
    return good / len(decoded) >= 0.9


def _b64(run: str) -> str | None:
    if len(run) > _MAX_RUN:
        return None
    body = run.rstrip("=")
    if body.isalpha() and (body.islower() or body.isupper()):
        return None  # a long word, not base64
    padded = body + "=" * (-len(body) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            text = decode(padded).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if _printable(text):
            return text
    return None


def _hex(run: str) -> str | None:
    if len(run) > _MAX_RUN:
        return None
    try:
        text = bytes.fromhex(run).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return text if _printable(text) else None


def encoded_runs(text: str) -> Iterator[tuple[str, tuple[int, int], str]]:
    """(scope, span of the encoded run in ``text``, decoded text) for each decodable run."""
    for tok_match in _LONG_RE.finditer(text):
        tok = tok_match.group()
        base = tok_match.start()
        for m in _HEX_RE.finditer(tok):
            decoded = _hex(m.group())
            if decoded:
                yield "hex", (base + m.start(), base + m.end()), decoded
        if _HEX_RE.fullmatch(tok):
            continue
        for m in _B64_RE.finditer(tok):
            decoded = _b64(m.group())
            if decoded:
                yield "base64", (base + m.start(), base + m.end()), decoded
    if "0100" in text or "0110" in text:
        for m in _BINARY_RE.finditer(text):
            chars = [int(b, 2) for b in re.findall(r"[01]{8}", m.group())]
            decoded = bytes(chars).decode("utf-8", errors="replace")
            if _printable(decoded + " ") and sum(c.isalpha() for c in decoded) >= 4:
                yield "binary", m.span(), decoded
    if _ROT13_RE.search(text):
        yield "rot13", (0, len(text)), codecs.decode(text, "rot_13")


def readable(decoded: str) -> bool:
    """Decoded text of three words or more: hidden prose, suspicious in itself."""
    return len(re.findall(r"[^\W\d_]{2,}", decoded)) >= 3 or (
        len(decoded) <= 40 and sum(c.isalpha() for c in decoded) >= 8
    )


def decoded_scopes(text: str) -> list[tuple[str, str, Callable[[int, int], tuple[int, int]]]]:
    """(scope, decoded text, span mapper back to ``text``) for the scans of decoded payloads."""
    out = []
    for scope, span, decoded in encoded_runs(text):
        if scope == "rot13":
            out.append((scope, decoded, lambda a, b: (a, b)))
        else:
            out.append((scope, decoded, lambda a, b, s=span: s))
    return out

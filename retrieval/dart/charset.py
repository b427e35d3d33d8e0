"""A filing's charset, read from its bytes rather than its XML declaration.

DART's ZIP members are UTF-8 in new filings and EUC-KR (or its superset CP949) in older ones, and
the declaration does not always say which: a member re-saved by a cache keeps
``encoding="utf-8"`` over EUC-KR bytes. So the bytes decide, strictly, in the order UTF-8,
EUC-KR, CP949 (a text that is valid UTF-8 is almost never Korean in EUC-KR, and EUC-KR's
2,350 syllables are tried before CP949's extension so that a stray byte pair does not pass as a
rare syllable). Text that none of them decodes, or that decodes to control characters, is refused
with a reason (``Undecodable``) rather than indexed as mojibake. The result is re-encoded as
UTF-8 with a matching declaration, so the XML parser reads what was decoded.
"""

from __future__ import annotations

import re

from refgate.errors import InputError

#: The charsets tried, in order.
CHARSETS = ("utf-8", "euc-kr", "cp949")
_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""", re.IGNORECASE)
#: C0 controls other than tab, line feed and carriage return: never in a filing's text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class Undecodable(InputError, ValueError):
    """Bytes that are not text in any charset DART uses."""


def declared_charset(data: bytes) -> str | None:
    """The ``encoding`` of the XML declaration, if any (lower case)."""
    head = _DECLARATION.match(data[:200])
    found = _ENCODING.search(head.group(0)) if head else None
    return found.group(1).decode("ascii").lower() if found else None


def detect(data: bytes) -> tuple[str, str]:
    """``(charset, text)``: the first of ``CHARSETS`` that decodes ``data`` strictly.

    ``Undecodable`` names the declared charset and where each candidate failed."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:200]:
        raise Undecodable("the bytes are UTF-16 or binary, not a DART filing's charset")
    failures = []
    for charset in CHARSETS:
        try:
            text = data.decode(charset)
        except UnicodeDecodeError as exc:
            failures.append(f"{charset} at byte {exc.start}")
            continue
        bad = _CONTROL.search(text)
        if bad:
            raise Undecodable(
                f"decoded as {charset}, the text holds control character "
                f"U+{ord(bad.group(0)):04X} at {bad.start()}: not text"
            )
        return charset, text
    declared = declared_charset(data) or "none"
    raise Undecodable(
        f"not UTF-8, EUC-KR or CP949 (declared: {declared}; failed: {', '.join(failures)})"
    )


def to_utf8(data: bytes) -> tuple[str, bytes]:
    """``(charset found, the document as UTF-8 with a UTF-8 declaration)``; line ends as LF."""
    charset, text = detect(data)
    body = text.replace("\r\n", "\n").replace("\r", "\n").encode("utf-8")
    head = _DECLARATION.match(body)
    if head:
        body = body[head.end() :]
    return charset, b'<?xml version="1.0" encoding="utf-8"?>' + body

"""ZIP members read under a cap: an OpenDART ZIP is read member by member through a counting
stream, so a member that unpacks past its cap (a ZIP bomb, whatever its header claims) is refused
after reading at most the cap, never unpacked whole."""

from __future__ import annotations

import io
import zipfile
from typing import IO

from refgate.errors import InputError

_CHUNK = 1 << 16


class TooLarge(InputError, ValueError):
    """An answer or a ZIP member over its cap (the message names both)."""


def mb(n: int) -> str:
    return f"{n / (1024 * 1024):.3g} MB"


class CappedReader(io.RawIOBase):
    """A read-only stream over ``raw`` that raises ``TooLarge`` once more than ``cap`` bytes
    have come out of it."""

    def __init__(self, raw: IO[bytes], cap: int, what: str) -> None:
        self.raw, self.cap, self.what, self.count = raw, cap, what, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.raw.read(min(len(buffer), self.cap + 1 - self.count) or 1)
        self.count += len(data)
        if self.count > self.cap:
            raise TooLarge(f"{self.what} unpacks to more than {mb(self.cap)}")
        buffer[: len(data)] = data
        return len(data)


def open_zip(data: bytes, what: str) -> zipfile.ZipFile:
    """The ZIP of ``data``; ``zipfile.BadZipFile`` names ``what`` when it is not one."""
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise zipfile.BadZipFile(f"{what}: not a readable ZIP file ({exc})") from exc


def open_member(zf: zipfile.ZipFile, name: str, cap: int) -> CappedReader:
    """A stream of member ``name`` that refuses to unpack past ``cap`` bytes."""
    info = zf.getinfo(name)
    if info.file_size > cap:
        raise TooLarge(f"{name} declares {mb(info.file_size)}, over the cap of {mb(cap)}")
    return CappedReader(zf.open(info), cap, name)


def read_member(zf: zipfile.ZipFile, name: str, cap: int) -> bytes:
    """Member ``name`` unpacked, at most ``cap`` bytes (``TooLarge`` past it)."""
    out = bytearray()
    with open_member(zf, name, cap) as stream:
        while chunk := stream.read(_CHUNK):
            out += chunk
    return bytes(out)

"""The framing shared by the host and the sandbox worker: length-prefixed JSON frames over a
stream socket (file descriptors ride along with SCM_RIGHTS), and the seal that signs the frames
the prelude writes on a call's private channel. Standard library only."""

from __future__ import annotations

import hashlib
import hmac
import json
import select
import socket
import struct
import time

MAX_FRAME = 64 << 20
_HEADER = struct.Struct(">I")


class ProtocolError(RuntimeError):
    """A malformed or oversized frame on a sandbox channel."""


def encode_frame(obj) -> bytes:
    data = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode()
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"message of {len(data)} bytes exceeds the {MAX_FRAME} byte limit")
    return _HEADER.pack(len(data)) + data


def send_frame(sock: socket.socket, obj, fds=()) -> None:
    """Send one frame; ``fds`` ride (SCM_RIGHTS) on the first bytes."""
    data = encode_frame(obj)
    if fds:
        sent = socket.send_fds(sock, [data[:4]], list(fds))
        if sent != 4:  # pragma: no cover - a 4-byte send on a stream socket is atomic
            raise ProtocolError("short send of a frame header")
        data = data[4:]
    sock.sendall(data)


class Seal:
    """Signs the frames refgate's own prelude writes on a call's channel (HMAC-SHA256 over a
    sequence number and the canonical JSON), so the host can reject frames the code wrote
    itself. The key arrives in the ``run`` frame and lives only in the prelude's channel."""

    def __init__(self, key: str) -> None:
        self._key = bytes.fromhex(key)
        self.seq = 0

    def _mac(self, seq: int, body: dict) -> str:
        data = json.dumps(
            body, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False
        ).encode()
        return hmac.new(self._key, b"%d:" % seq + data, hashlib.sha256).hexdigest()

    def sign(self, body: dict) -> dict:
        """``body`` plus its ``seq`` and ``mac`` (the next frame in this call's sequence)."""
        self.seq += 1
        return {**body, "seq": self.seq, "mac": self._mac(self.seq, body)}

    def verify(self, frame) -> dict | None:
        """The frame's body when it is the next signed frame of the sequence, else None."""

        if not isinstance(frame, dict):
            return None
        body = {k: v for k, v in frame.items() if k not in ("seq", "mac")}
        seq, mac = frame.get("seq"), frame.get("mac")
        if type(seq) is not int or seq != self.seq + 1 or not isinstance(mac, str):
            return None
        try:
            expected = self._mac(seq, body)
        except (TypeError, ValueError, RecursionError):
            return None
        if not hmac.compare_digest(expected, mac):
            return None
        self.seq = seq
        return body


class FrameReader:
    """Reassembles frames from a stream socket, collecting any passed fds in arrival order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.fds: list[int] = []
        self.eof = False

    def feed(self) -> bool:
        """One receive; False at end of stream."""
        flags = getattr(socket, "MSG_CMSG_CLOEXEC", 0)
        data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 16, flags)
        self.fds.extend(fds)
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def pop(self):
        """The next complete frame, or None."""
        if len(self.buf) < 4:
            return None
        (size,) = _HEADER.unpack_from(self.buf)
        if size > MAX_FRAME:
            raise ProtocolError(f"frame of {size} bytes exceeds the {MAX_FRAME} byte limit")
        if len(self.buf) < 4 + size:
            return None
        raw = bytes(self.buf[4 : 4 + size])
        del self.buf[: 4 + size]
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"frame is not JSON: {exc}") from None

    def read(self, timeout: float | None = None):
        """Block until a frame arrives (None at end of stream or after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            frame = self.pop()
            if frame is not None:
                return frame
            if self.eof:
                return None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                ready, _, _ = select.select([self.sock], [], [], left)
                if not ready:
                    return None
            self.feed()

    def take_fds(self, n: int) -> list[int]:
        taken, self.fds = self.fds[:n], self.fds[n:]
        return taken

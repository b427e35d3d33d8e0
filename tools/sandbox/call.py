"""One sandbox call on the host side: hand the worker's template a private channel and output pipes,
serve the call's signed requests, cap its output, and decode what it left into a ``RawRun``."""

from __future__ import annotations

import os
import secrets
import select
import signal
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, TypedDict

from refgate.payloads import JsonDict
from refgate.tools.sandbox.errors import SandboxError
from refgate.tools.sandbox.worker.protocol import (
    FrameReader,
    ProtocolError,
    Seal,
    encode_frame,
    send_frame,
)

#: Answers one request of the sandboxed code (its frame in, the reply out).
Handler: TypeAlias = Callable[[JsonDict], JsonDict]


class ExitFrame(TypedDict, total=False):
    """The template's report, on the control socket, that a call's process ended."""

    op: str
    returncode: int | None
    timed_out: bool
    maxrss_kb: int
    cpu_s: float


@dataclass
class RawRun:
    """What one call produced, before refs are issued."""

    ok: bool
    error: str | None
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    duration: float
    timed_out: bool = False
    returncode: int | None = None
    tampered: bool = False
    maxrss_kb: int = 0
    cpu_s: float = 0.0


def run_call(
    control: socket.socket,
    reader: FrameReader,
    *,
    call_id: int,
    code: str,
    timeout: float,
    limits: Mapping[str, object],
    capabilities: list[dict[str, str]],
    output_bytes: int,
    handler: Handler,
    on_broken: Callable[[], None],
) -> RawRun:
    """Run ``code`` as call ``call_id`` of the template behind ``control`` (its control socket,
    read by ``reader``), with the rlimits frame ``limits``; ``handler`` answers each request and
    ``on_broken`` closes the worker when it is gone or stops responding."""
    call = _Call(control, reader, output_bytes, handler, on_broken)
    request = {
        "op": "run",
        "id": call_id,
        "seal": call.key,
        "code": code,
        "timeout": timeout,
        "limits": limits,
        "capabilities": capabilities,
    }
    call.start(request)
    try:
        call.serve(timeout)
    finally:
        call.close()
    return call.outcome(timeout)


class _Call:
    """One call's host side: its private channel and output pipes, and what they carried."""

    def __init__(
        self,
        control: socket.socket,
        reader: FrameReader,
        output_bytes: int,
        handler: Handler,
        on_broken: Callable[[], None],
    ) -> None:
        self.control, self.reader = control, reader
        self.handler, self.on_broken = handler, on_broken
        self.cap = output_bytes
        self.host_chan, self.child_chan = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.out_r, self.out_w = os.pipe()
        self.err_r, self.err_w = os.pipe()
        self.key = secrets.token_hex(32)
        self.seal = Seal(self.key)
        self.outputs = {self.out_r: bytearray(), self.err_r: bytearray()}
        self.totals = {self.out_r: 0, self.err_r: 0}
        self.chan_reader = FrameReader(self.host_chan)
        self.result: dict[str, Any] | None = None  # the signed result frame, as verified
        self.exit_frame: ExitFrame | None = None
        self.protocol_error: str | None = None
        self.t0 = time.monotonic()

    def start(self, request: Mapping[str, object]) -> None:
        """Send the run request with the call's channel and pipes; keep the host's ends."""
        self.t0 = time.monotonic()
        try:
            send_frame(
                self.control, request, fds=(self.child_chan.fileno(), self.out_w, self.err_w)
            )
        except OSError as exc:
            for fd in (self.out_r, self.out_w, self.err_r, self.err_w):
                os.close(fd)
            self.host_chan.close()
            self.child_chan.close()
            self.on_broken()
            raise SandboxError(f"the sandbox worker is gone: {exc}") from exc
        self.child_chan.close()
        os.close(self.out_w)
        os.close(self.err_w)

    def serve(self, timeout: float) -> None:
        """Serve requests and collect output until the worker reports the call's exit."""
        chan_fd = self.host_chan.fileno()
        open_fds = {self.out_r, self.err_r, chan_fd}
        backstop = self.t0 + timeout + 10.0
        exit_seen_at = 0.0
        while True:
            if self.exit_frame is not None and (
                not (open_fds - {chan_fd}) or time.monotonic() - exit_seen_at > 1.0
            ):
                return
            if time.monotonic() > backstop:
                self.on_broken()
                raise SandboxError("the sandbox worker stopped responding and was restarted")
            watched: list[socket.socket | int] = [
                self.control,
                *open_fds,
            ]  # a socket and pipe descriptors
            ready, _, _ = select.select(watched, [], [], 0.25)
            for fd in ready:
                if fd is self.control:
                    if self._control_frame():
                        exit_seen_at = time.monotonic()
                elif fd == chan_fd:
                    if not self._channel_frames():
                        open_fds.discard(fd)
                elif isinstance(fd, int) and not self._output(fd):
                    open_fds.discard(fd)

    def _control_frame(self) -> bool:
        """Read the worker's control socket; True when it reported the call's exit."""
        if not self.reader.feed():
            self.on_broken()
            raise SandboxError("the sandbox worker died during the call")
        frame = self.reader.pop()
        if frame is not None and frame.get("op") == "exit":
            self.exit_frame = frame
            return True
        return False

    def _channel_frames(self) -> bool:
        """Answer the signed requests waiting on the channel; False once it is closed."""
        try:
            more = self.chan_reader.feed()
        except OSError:
            more = False
        if not more:
            return False
        try:
            while (frame := self.chan_reader.pop()) is not None:
                msg = self.seal.verify(frame)
                if msg is None or self.result is not None:
                    raise ProtocolError(_FORGED)
                op = msg.get("op")
                if op == "result":
                    self.result = msg
                elif op in REQUESTS:
                    if not self._reply(self._answer(msg)):
                        return False
                else:
                    raise ProtocolError(f"unknown request {op!r}")
        except ProtocolError as exc:
            self.protocol_error = str(exc)
            send_frame(self.control, {"op": "kill"})
            return False
        return True

    def _answer(self, msg: JsonDict) -> bytes:
        try:
            reply = self.handler(msg)
        except Exception as exc:  # never crash the host loop
            reply = {"ok": False, "error": f"request failed: {type(exc).__name__}: {exc}"}
        try:
            return encode_frame(reply)
        except (ValueError, TypeError) as exc:
            return encode_frame({"ok": False, "error": f"reply not sendable: {exc}"})

    def _reply(self, data: bytes) -> bool:
        try:
            self.host_chan.sendall(data)
        except OSError:  # the call is gone (killed or exited)
            return False
        return True

    def _output(self, fd: int) -> bool:
        """Keep up to ``cap`` bytes of a stream, counting the rest; False at its end."""
        chunk = os.read(fd, 65536)
        if not chunk:
            return False
        self.totals[fd] += len(chunk)
        room = self.cap - len(self.outputs[fd])
        if room > 0:
            self.outputs[fd] += chunk[:room]
        return True

    def close(self) -> None:
        for fd in (self.out_r, self.err_r):
            os.close(fd)
        self.host_chan.close()

    def _text(self, fd: int) -> str:
        body = bytes(self.outputs[fd]).decode("utf-8", "replace")
        if self.totals[fd] > len(self.outputs[fd]):
            body += (
                f"\n[... output truncated: {self.totals[fd]} bytes in total, first {self.cap} kept]"
            )
        return body

    def outcome(self, timeout: float) -> RawRun:
        """What the call left, decoded: ok only with the prelude's own result and exit 0."""
        exit_frame: ExitFrame = self.exit_frame or {}
        result = self.result
        stdout, stderr = self._text(self.out_r), self._text(self.err_r)
        rc = exit_frame.get("returncode")
        timed_out = bool(exit_frame.get("timed_out"))
        ok = bool(result and result.get("ok")) and rc == 0 and not self.protocol_error
        error: str | None = None
        if timed_out:
            error = f"timed out after {timeout:g} s (wall clock); the process group was killed"
        elif self.protocol_error:
            error = f"the code broke the sandbox protocol: {self.protocol_error}"
        elif result is not None and not result.get("ok"):
            error = result.get("error") or "the code failed"
        elif not ok:
            error = describe_exit(rc, stderr)
        return RawRun(
            ok=ok,
            error=error,
            stdout=stdout,
            stderr=stderr,
            stdout_bytes=self.totals[self.out_r],
            stderr_bytes=self.totals[self.err_r],
            duration=time.monotonic() - self.t0,
            timed_out=timed_out,
            returncode=rc,
            tampered=bool(result and result.get("tampered")),
            maxrss_kb=int(exit_frame.get("maxrss_kb") or 0),
            cpu_s=float(exit_frame.get("cpu_s") or 0.0),
        )


#: The requests a call may make of the host: emit a result, call a capability, record a query,
#: query a warehouse, record a dataset read.
REQUESTS = frozenset({"emit", "engine", "sql", "warehouse", "read"})

_FORGED = (
    "a frame on the result channel was not written by refgate's emit_result (unsigned, out of "
    "sequence or after the end of the run): the code wrote to the channel itself"
)


def describe_exit(rc: int | None, stderr: str) -> str:
    if rc is None:
        return "the code ended without a result"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        why = {
            "SIGXCPU": "CPU time limit reached",
            "SIGKILL": "killed (CPU or memory limit, or the process exited abnormally)",
            "SIGSEGV": "segmentation fault",
            "SIGXFSZ": "file size limit reached",
        }.get(name, "killed by a signal")
        return f"the code's process ended with {name}: {why}"
    tail = stderr.strip().splitlines()[-5:]
    detail = ("; stderr: " + " | ".join(tail)) if tail else ""
    return f"the code's process exited with status {rc} without reporting a result{detail}"

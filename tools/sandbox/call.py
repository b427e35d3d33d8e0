"""One sandbox call on the host side: hand the worker's template a private channel and output pipes,
serve the call's signed requests, cap its output, and decode what it left into a ``RawRun``."""

from __future__ import annotations

import os
import secrets
import select
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refgate.tools.sandbox.errors import SandboxError
from refgate.tools.sandbox.worker.protocol import (
    FrameReader,
    ProtocolError,
    Seal,
    encode_frame,
    send_frame,
)


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
    limits: dict[str, Any],
    capabilities: list[dict[str, str]],
    output_bytes: int,
    handler: Callable[[dict[str, Any]], dict[str, Any]],
    on_broken: Callable[[], None],
) -> RawRun:
    """Run ``code`` as call ``call_id`` of the template behind ``control`` (its control socket,
    read by ``reader``), with the rlimits frame ``limits``; ``handler`` answers each request and
    ``on_broken`` closes the worker when it is gone or stops responding."""
    host_chan, child_chan = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    key = secrets.token_hex(32)
    seal = Seal(key)
    request = {
        "op": "run",
        "id": call_id,
        "seal": key,
        "code": code,
        "timeout": timeout,
        "limits": limits,
        "capabilities": capabilities,
    }
    t0 = time.monotonic()
    try:
        send_frame(control, request, fds=(child_chan.fileno(), out_w, err_w))
    except OSError as exc:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        host_chan.close()
        child_chan.close()
        on_broken()
        raise SandboxError(f"the sandbox worker is gone: {exc}") from exc
    child_chan.close()
    os.close(out_w)
    os.close(err_w)

    cap = output_bytes
    outputs = {out_r: bytearray(), err_r: bytearray()}
    totals = {out_r: 0, err_r: 0}
    chan_reader = FrameReader(host_chan)
    result: dict[str, Any] | None = None
    exit_frame: dict[str, Any] | None = None
    protocol_error: str | None = None
    open_fds = {out_r, err_r, host_chan.fileno()}
    backstop = t0 + timeout + 10.0
    exit_seen_at: float | None = None
    try:
        while True:
            if exit_frame is not None and (
                not (open_fds - {host_chan.fileno()})
                or time.monotonic() - (exit_seen_at or 0) > 1.0
            ):
                break
            if time.monotonic() > backstop:
                on_broken()
                raise SandboxError("the sandbox worker stopped responding and was restarted")
            watch = [control, *open_fds]
            ready, _, _ = select.select(watch, [], [], 0.25)
            for fd in ready:
                if fd is control:
                    if not reader.feed():
                        on_broken()
                        raise SandboxError("the sandbox worker died during the call")
                    frame = reader.pop()
                    if frame is not None and frame.get("op") == "exit":
                        exit_frame = frame
                        exit_seen_at = time.monotonic()
                elif fd == host_chan.fileno():
                    try:
                        more = chan_reader.feed()
                    except OSError:
                        more = False
                    if not more:
                        open_fds.discard(fd)
                        continue
                    try:
                        while (frame := chan_reader.pop()) is not None:
                            msg = seal.verify(frame)
                            if msg is None or result is not None:
                                raise ProtocolError(_FORGED)
                            op = msg.get("op")
                            if op == "result":
                                result = msg
                            elif op in REQUESTS:
                                try:
                                    reply = handler(msg)
                                except Exception as exc:  # never crash the host loop
                                    reply = {
                                        "ok": False,
                                        "error": f"request failed: {type(exc).__name__}: {exc}",
                                    }
                                try:
                                    data = encode_frame(reply)
                                except (ValueError, TypeError) as exc:
                                    data = encode_frame(
                                        {"ok": False, "error": f"reply not sendable: {exc}"}
                                    )
                                try:
                                    host_chan.sendall(data)
                                except OSError:  # the call is gone (killed or exited)
                                    open_fds.discard(fd)
                                    break
                            else:
                                raise ProtocolError(f"unknown request {op!r}")
                    except ProtocolError as exc:
                        protocol_error = str(exc)
                        open_fds.discard(fd)
                        send_frame(control, {"op": "kill"})
                else:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        open_fds.discard(fd)
                        continue
                    totals[fd] += len(chunk)
                    room = cap - len(outputs[fd])
                    if room > 0:
                        outputs[fd] += chunk[:room]
    finally:
        for fd in (out_r, err_r):
            os.close(fd)
        host_chan.close()

    def text(fd: int) -> str:
        body = bytes(outputs[fd]).decode("utf-8", "replace")
        if totals[fd] > len(outputs[fd]):
            body += f"\n[... output truncated: {totals[fd]} bytes in total, first {cap} kept]"
        return body

    stdout, stderr = text(out_r), text(err_r)
    rc = exit_frame.get("returncode")
    timed_out = bool(exit_frame.get("timed_out"))
    ok = bool(result and result.get("ok")) and rc == 0 and not protocol_error
    error: str | None = None
    if timed_out:
        error = f"timed out after {timeout:g} s (wall clock); the process group was killed"
    elif protocol_error:
        error = f"the code broke the sandbox protocol: {protocol_error}"
    elif result is not None and not result.get("ok"):
        error = result.get("error") or "the code failed"
    elif not ok:
        error = describe_exit(rc, stderr)
    return RawRun(
        ok=ok,
        error=error,
        stdout=stdout,
        stderr=stderr,
        stdout_bytes=totals[out_r],
        stderr_bytes=totals[err_r],
        duration=time.monotonic() - t0,
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

"""Host side of the sandbox: warm workers (bubblewrap or rlimits-only) and their pool.

A ``Worker`` is one warm template process for one set of datasets, started under the command line
of ``confine`` with the datasets of ``mounts``. ``Worker.run`` runs one call (``call.run_call``:
a private channel plus stdout/stderr pipes, the call's channel requests (``emit``, ``engine``,
``result``) served through a handler, output capped) and returns a ``RawRun``. ``get_worker``
keeps a small pool of warm workers keyed by mode and datasets (file path, size and mtime, so an
edited file starts a fresh worker). When the host runs as root, calls run as an unprivileged uid
of their own (one per worker, ``limits.PRIVATE_UIDS``), so no other process counts against their
process limit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from typing import Any

from refgate.payloads import JsonDict
from refgate.tools.sandbox.call import Handler, RawRun, run_call
from refgate.tools.sandbox.confine import MODES, THREAD_ENV, command
from refgate.tools.sandbox.errors import SandboxError, SandboxUnavailable
from refgate.tools.sandbox.limits import Limits, limits_frame, private_uid
from refgate.tools.sandbox.mounts import DatasetMount, dataset_entry
from refgate.tools.sandbox.worker.protocol import FrameReader, send_frame


class Worker:
    """One warm sandbox template process."""

    def __init__(
        self,
        mode: str = "bwrap",
        datasets: Iterable[DatasetMount] = (),
        limits: Limits | None = None,
    ) -> None:
        if mode not in MODES:
            raise SandboxError(f"unknown sandbox mode {mode!r}; expected 'bwrap' or 'rlimits'")
        self.mode = mode
        self.datasets = tuple(datasets)
        self.limits = limits or Limits()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.reader: FrameReader | None = None
        self.ready: JsonDict = {}
        self.start_seconds = 0.0
        self._lock = threading.Lock()
        self._log = bytearray()
        self._drain: threading.Thread | None = None
        self._scratch_base: str | None = None
        self.uid: int | None = private_uid() if os.geteuid() == 0 else None
        self.calls = 0

    # ----------------------------------------------------------------- lifecycle

    def start(self, timeout: float = 30.0) -> None:
        """Launch the template (confined by ``mode``) and wait for its ready frame."""
        t0 = time.perf_counter()
        host_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            cmd = command(self.mode, child_sock.fileno(), self.datasets, self.limits)
        except SandboxError:
            host_sock.close()
            child_sock.close()
            raise
        env = dict(THREAD_ENV)
        env["REFGATE_SANDBOX_FD"] = str(child_sock.fileno())
        cwd = self._scratch_dir() if self.mode == "rlimits" else None
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(child_sock.fileno(),),
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            host_sock.close()
            child_sock.close()
            raise SandboxUnavailable(f"cannot start the sandbox ({cmd[0]}): {exc}") from exc
        child_sock.close()
        self._drain = threading.Thread(target=self._drain_log, daemon=True)
        self._drain.start()
        self.sock = host_sock
        self.reader = FrameReader(host_sock)
        self.ready = self._handshake(host_sock, self.reader, timeout)
        self.start_seconds = time.perf_counter() - t0

    def _scratch_dir(self) -> str:
        """rlimits mode: the private folder the calls' scratch directories go under."""
        self._scratch_base = tempfile.mkdtemp(prefix="refgate-sandbox-")
        if self.uid is not None:
            os.chown(self._scratch_base, 0, 0)
            os.chmod(self._scratch_base, 0o711)
        return self._scratch_base

    def _init_frame(self) -> JsonDict:
        """What the template needs to serve calls: the uid, the mounts, the scratch base."""
        return {
            "op": "init",
            "uid": self.uid,
            "gid": self.uid,
            "pidns": self.mode == "bwrap",
            # rlimits mode: calls drop to an unprivileged uid on the host's own filesystem, which
            # may not read a Python installed under /root, so sql()'s engine is imported by the
            # template (bubblewrap binds the installation readable; there it loads when idle).
            "eager_imports": ["duckdb"] if self.mode == "rlimits" else [],
            "scratch_base": "/tmp" if self.mode == "bwrap" else self._scratch_base,
            "datasets": {m.name: dataset_entry(m, self.mode) for m in self.datasets},
        }

    def _handshake(self, sock: socket.socket, reader: FrameReader, timeout: float) -> JsonDict:
        """Send the init frame and return the template's ready frame; a failure closes it."""
        try:
            send_frame(sock, self._init_frame())
            ready = reader.read(timeout)
        except OSError:
            ready = None
        if not ready or ready.get("op") != "ready":
            detail = ready.get("error") if ready else None
            self.close()
            raise SandboxUnavailable(self._start_failure(detail))
        return ready

    def _start_failure(self, detail: object) -> str:
        """Why the template did not start, with its log and, for bubblewrap, the fallback."""
        log = self.log_tail()
        hint = ""
        if self.mode == "bwrap":
            hint = (
                " If bubblewrap cannot create namespaces here, set REFGATE_SANDBOX=rlimits "
                "for the weaker rlimits-only sandbox."
            )
        return (
            f"the {self.mode} sandbox failed to start"
            + (f": {detail}" if detail else "")
            + (f"\n{log}\n" if log else ". ")
            + hint.strip()
        )

    def _drain_log(self) -> None:
        proc = self.proc
        if proc is None or proc.stdout is None:
            return
        out: Any = proc.stdout  # a binary pipe: read1 returns what is there
        for chunk in iter(lambda: out.read1(4096), b""):
            self._log += chunk
            if len(self._log) > 16384:
                del self._log[:-8192]

    def log_tail(self) -> str:
        return bytes(self._log[-4000:]).decode("utf-8", "replace").strip()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.sock is not None

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                send_frame(self.sock, {"op": "stop"})
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=5)
            self.proc = None
        if self._drain is not None:
            self._drain.join(timeout=2)
            self._drain = None
        if self._scratch_base:
            shutil.rmtree(self._scratch_base, ignore_errors=True)
            self._scratch_base = None

    def stats(self) -> JsonDict:
        """The template's memory (``rss_kb``, ``hwm_kb``) and the calls' peak (``children_maxrss_kb``)."""
        with self._lock:
            if not self.alive or self.sock is None or self.reader is None:
                raise SandboxError("the sandbox worker is not running")
            send_frame(self.sock, {"op": "ping"})
            reply = self.reader.read(10)
        if not reply:
            raise SandboxError("the sandbox worker did not answer")
        return reply

    # ----------------------------------------------------------------- one call

    def run(
        self,
        code: str,
        *,
        timeout: float,
        handler: Handler,
        capabilities: list[dict[str, str]] | None = None,
    ) -> RawRun:
        """Run ``code`` in a fresh child; ``handler`` answers each ``emit``/``engine`` request."""
        with self._lock:
            if not self.alive:
                raise SandboxError("the sandbox worker is not running")
            self.calls += 1
            return self._run_locked(code, timeout, handler, capabilities or [])

    def _run_locked(self, code, timeout, handler, capabilities) -> RawRun:
        assert self.sock is not None and self.reader is not None
        return run_call(
            self.sock,
            self.reader,
            call_id=self.calls,
            code=code,
            timeout=timeout,
            limits=limits_frame(self.limits, self.uid, timeout),
            capabilities=capabilities,
            output_bytes=self.limits.output_bytes,
            handler=handler,
            on_broken=self.close,
        )


# --------------------------------------------------------------------------- the pool

_POOL: dict[tuple, Worker] = {}
_POOL_LOCK = threading.Lock()
POOL_SIZE = 4


def get_worker(
    mode: str, datasets: Iterable[DatasetMount] = (), limits: Limits | None = None
) -> Worker:
    """A warm worker for ``mode`` and these datasets (started on first use, reused after)."""
    datasets = tuple(sorted(datasets, key=lambda m: m.name))
    limits = limits or Limits()
    key = (mode, limits, tuple(m.fingerprint() for m in datasets))
    with _POOL_LOCK:
        worker = _POOL.get(key)
        if worker is not None and worker.alive:
            return worker
        if worker is not None:
            worker.close()
            _POOL.pop(key, None)
        stale = [k for k in _POOL if k[0] == mode and k[2] != key[2] and _same_names(k, key)]
        for k in stale:
            _POOL.pop(k).close()
        while len(_POOL) >= POOL_SIZE:
            _POOL.pop(next(iter(_POOL))).close()
        worker = Worker(mode, datasets, limits)
        worker.start()
        _POOL[key] = worker
        return worker


def _same_names(a: tuple, b: tuple) -> bool:
    return [f[:2] for f in a[2]] == [f[:2] for f in b[2]]


def shutdown_pool() -> None:
    """Stop every warm worker (at exit, or to measure a cold start)."""
    with _POOL_LOCK:
        while _POOL:
            _POOL.popitem()[1].close()


atexit.register(shutdown_pool)

"""Parsing under bounds: a function run in a child process with a memory and a time limit.

Generic: ``BoundedChild.call(func, *args, progress=...)`` runs any module-level function (a
format reader, a dispatcher) in a long-lived ingestion worker (``python -m
refgate.retrieval.loaders.worker``, its own module: the caller's ``__main__`` is never
re-imported) whose address space is capped (``RLIMIT_AS``), waits at most ``timeout_s`` for it, and relays ``progress(done, total)`` calls
from the child. A reader that goes over the memory bound fails there (``MemoryError``, or the
child dies) and one that takes too long is killed; either way the caller gets ``Unreadable``
with the reason and the next call starts a fresh child. The parent never holds a file's parse.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import IO, Any

from refgate.closing import Closing
from refgate.config import Settings
from refgate.retrieval.loaders.base import Unreadable
from refgate.retrieval.loaders.worker import FRAME_HEADER, MAX_FRAME, send_frame

Progress = Callable[[int, int], None]


#: The settings whose ``ingest_*`` fields give ``IngestLimits`` its defaults.
_SETTINGS = Settings.model_fields


@dataclass(frozen=True)
class IngestLimits:
    """Bounds on reading one document: each field is the setting ``ingest_<field>``, and its
    default that setting's default. They fit a 2-core, 24 GB machine shared with other work: a
    few GB for the parse, minutes for a long scanned PDF's OCR."""

    #: Address space of the child that parses a document (MB).
    memory_mb: int = _SETTINGS["ingest_memory_mb"].default
    #: Seconds one document may take to parse (OCR included).
    timeout_s: float = _SETTINGS["ingest_timeout_s"].default
    #: An Office (ZIP) file's total uncompressed size (MB), and one member's.
    max_unzipped_mb: int = _SETTINGS["ingest_max_unzipped_mb"].default
    max_member_mb: int = _SETTINGS["ingest_max_member_mb"].default
    #: Largest compression ratio of a ZIP member over 1 MB uncompressed.
    max_ratio: int = _SETTINGS["ingest_max_ratio"].default
    #: Cells a workbook may declare (its sheets' dimensions), and that are read from it.
    max_cells: int = _SETTINGS["ingest_max_cells"].default

    @classmethod
    def from_settings(cls, settings: Settings) -> IngestLimits:
        """The limits from ``settings`` (its ``ingest_*`` fields)."""
        return cls(**{f.name: getattr(settings, f"ingest_{f.name}") for f in fields(cls)})


#: The ingestion worker's module, started as ``python -m`` (never a spawn of ``__main__``).
WORKER_MODULE = "refgate.retrieval.loaders.worker"
#: Characters of the worker's log (stderr) shown when it dies.
_LOG_TAIL = 600


class WorkerDied(Exception):
    """The worker closed its pipe or exited without answering."""


class BoundedChild(Closing):
    """One ingestion worker that runs calls under ``IngestLimits``' memory and time bounds.

    ``peak_mb`` is the worker's peak resident memory after the last call (a fresh worker per
    file gives per-file figures)."""

    def __init__(self, limits: IngestLimits | None = None) -> None:
        self.limits = limits or IngestLimits()
        self.peak_mb = 0.0
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def _start(self) -> None:
        memory = int(self.limits.memory_mb) * 1024 * 1024
        log = tempfile.TemporaryFile()  # noqa: SIM115 - kept open with the worker, closed by _kill
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE, str(memory)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                close_fds=True,
            )
        except BaseException:  # a worker that never started is not kept: nothing to kill
            log.close()
            raise
        self._proc, self._log = proc, log
        try:
            assert proc.stdin is not None
            send_frame(proc.stdin, [p for p in sys.path if isinstance(p, str)])
        except OSError:
            pass  # it died at once: the first call reports why

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait(5)
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    def close(self) -> None:
        """Stop the worker."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                assert proc.stdin is not None
                send_frame(proc.stdin, None)
                proc.wait(5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self._kill()

    def _log_tail(self) -> str:
        """The last line of the worker's log that says something (its error, usually)."""
        if self._log is None:
            return ""
        try:
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(0, size - 8192))
            text = self._log.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][-_LOG_TAIL:] if lines else ""

    def _died(self) -> str:
        """Why the worker ended, from its exit status and its log."""
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(5)
            except subprocess.TimeoutExpired:
                code = None
        tail = self._log_tail()
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        memory = f"the {self.limits.memory_mb:,} MB memory bound (REFGATE_INGEST_MEMORY_MB)"
        if "MemoryError" in tail or code == -signal.SIGKILL:
            return f"the reader went over {memory} (the ingestion worker {how}); not indexed"
        said = f": {tail}" if tail else ""
        return f"the ingestion worker {how}{said}; not indexed"

    def _recv(self, deadline: float) -> Any:
        """One frame from the worker, or ``TimeoutError`` at ``deadline`` / ``WorkerDied``."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()

        def read_exact(n: int) -> bytes:
            chunks: list[bytes] = []
            while n > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                ready, _, _ = select.select([fd], [], [], left)
                if not ready:
                    raise TimeoutError
                chunk = os.read(fd, min(n, 1 << 20))
                if not chunk:
                    raise WorkerDied
                chunks.append(chunk)
                n -= len(chunk)
            return b"".join(chunks)

        (size,) = FRAME_HEADER.unpack(read_exact(FRAME_HEADER.size))
        if size > MAX_FRAME:
            raise WorkerDied
        return pickle.loads(read_exact(size))

    def call(
        self, func: Callable[..., object], *args: Any, progress: Progress | None = None
    ) -> Any:
        """``func(*args)`` (with ``progress=`` when given) in the worker; ``Unreadable`` when it
        raises it, goes over a bound or fails (with the worker's own reason when it dies)."""
        if self._proc is None or self._proc.poll() is not None:
            self._kill()
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        deadline = time.monotonic() + self.limits.timeout_s
        try:
            send_frame(self._proc.stdin, (func, args, progress is not None))
            while True:
                message = self._recv(deadline)
                if message[0] == "progress":
                    if progress is not None:
                        progress(message[1], message[2])
                    continue
                break
        except TimeoutError:
            self._kill()
            raise Unreadable(
                f"took longer than the {self.limits.timeout_s:g} s bound to read "
                "(REFGATE_INGEST_TIMEOUT_S); not indexed"
            ) from None
        except (WorkerDied, EOFError, OSError, pickle.UnpicklingError):
            reason = self._died()
            self._kill()
            raise Unreadable(reason) from None
        kind, value, self.peak_mb = message
        if kind == "ok":
            return value
        if kind == "unreadable":
            raise Unreadable(value)
        if kind == "memory":
            self._kill()  # its heap may be fragmented near the bound: start clean
            raise Unreadable(
                f"needs more than the {self.limits.memory_mb:,} MB memory bound to read "
                "(REFGATE_INGEST_MEMORY_MB); not indexed"
            )
        raise Unreadable(f"could not be read ({value})")

"""Parsing under bounds: a function run in a child process with a memory and a time limit.

Generic: ``BoundedChild.call(func, *args, progress=...)`` runs any module-level function (a
format reader, a dispatcher) in a long-lived child process whose address space is capped
(``RLIMIT_AS``), waits at most ``timeout_s`` for it, and relays ``progress(done, total)`` calls
from the child. A reader that goes over the memory bound fails there (``MemoryError``, or the
child dies) and one that takes too long is killed; either way the caller gets ``Unreadable``
with the reason and the next call starts a fresh child. The parent never holds a file's parse.
"""

from __future__ import annotations

import multiprocessing
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refgate.retrieval.loaders.base import Unreadable

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class IngestLimits:
    """Bounds on reading one document. The defaults fit a 2-core, 24 GB machine shared with
    other work: a few GB for the parse, minutes for a long scanned PDF's OCR."""

    #: Address space of the child that parses a document (MB).
    memory_mb: int = 3072
    #: Seconds one document may take to parse (OCR included).
    timeout_s: float = 600.0
    #: An Office (ZIP) file's total uncompressed size (MB), and one member's.
    max_unzipped_mb: int = 512
    max_member_mb: int = 128
    #: Largest compression ratio of a ZIP member over 1 MB uncompressed.
    max_ratio: int = 100
    #: Cells a workbook may declare (its sheets' dimensions), and that are read from it.
    max_cells: int = 1_000_000

    @classmethod
    def from_settings(cls, settings: Any) -> IngestLimits:
        """The limits from a ``refgate.config.Settings`` (its ``ingest_*`` fields)."""
        return cls(
            memory_mb=settings.ingest_memory_mb,
            timeout_s=settings.ingest_timeout_s,
            max_unzipped_mb=settings.ingest_max_unzipped_mb,
            max_member_mb=settings.ingest_max_member_mb,
            max_ratio=settings.ingest_max_ratio,
            max_cells=settings.ingest_max_cells,
        )


def _serve(conn: Any, memory_bytes: int) -> None:
    """The child: cap the address space, then run each requested call until told to stop."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        func, args, wants_progress = request
        kwargs = {"progress": lambda done, total: conn.send(("progress", done, total))}
        try:
            result = func(*args, **(kwargs if wants_progress else {}))
            reply: tuple[Any, ...] = ("ok", result)
        except Unreadable as exc:
            reply = ("unreadable", exc.reason)
        except MemoryError:
            reply = ("memory", "")
        except Exception as exc:  # any reader failure becomes a reason, never a traceback
            reply = ("error", f"{type(exc).__name__}: {str(exc)[:500]}")
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        try:
            conn.send((*reply, peak_mb))
        except MemoryError:
            conn.send(("memory", "", peak_mb))


class BoundedChild:
    """One child process that runs calls under ``IngestLimits``' memory and time bounds.

    ``peak_mb`` is the child's peak resident memory after the last call (a fresh child per file
    gives per-file figures)."""

    def __init__(self, limits: IngestLimits | None = None) -> None:
        self.limits = limits or IngestLimits()
        self.peak_mb = 0.0
        self._proc: Any = None
        self._conn: Any = None

    def __enter__(self) -> BoundedChild:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")  # no fork of a threaded parent
        parent, child = ctx.Pipe()
        memory = int(self.limits.memory_mb) * 1024 * 1024
        proc = ctx.Process(target=_serve, args=(child, memory), daemon=True)
        try:
            proc.start()
        except BaseException:  # a child that never started is not kept: nothing to kill
            parent.close()
            raise
        finally:
            child.close()
        self._proc, self._conn = proc, parent

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def close(self) -> None:
        """Stop the child."""
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(None)
                self._proc.join(5)
            except (OSError, ValueError):
                pass
        self._kill()

    def call(
        self, func: Callable[..., object], *args: Any, progress: Progress | None = None
    ) -> Any:
        """``func(*args)`` (with ``progress=`` when given) in the child; ``Unreadable`` when it
        raises it, goes over a bound or fails."""
        if self._proc is None or not self._proc.is_alive():
            self._kill()
            self._start()
        deadline = time.monotonic() + self.limits.timeout_s
        try:
            self._conn.send((func, args, progress is not None))
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not self._conn.poll(left):
                    self._kill()
                    raise Unreadable(
                        f"took longer than the {self.limits.timeout_s:g} s bound to read "
                        "(REFGATE_INGEST_TIMEOUT_S); not indexed"
                    )
                message = self._conn.recv()
                if message[0] == "progress":
                    if progress is not None:
                        progress(message[1], message[2])
                    continue
                break
        except (EOFError, OSError, BrokenPipeError):
            code = self._proc.exitcode if self._proc is not None else None
            self._kill()
            raise Unreadable(
                f"the reader went over the {self.limits.memory_mb:,} MB memory bound "
                f"(REFGATE_INGEST_MEMORY_MB) or crashed (exit code {code}); not indexed"
            ) from None
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

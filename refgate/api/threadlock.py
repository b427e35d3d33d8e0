"""One process per thread: an exclusive, non-blocking file lock under ``<workspace>/.refgate/``.

A second ``refgate ask --thread T`` (or ``research``) while the first still runs would mix two
runs' history in one checkpoint thread; it is refused instead. The lock is the kernel's
(``fcntl.flock``), so it is released when the holder exits, even on a crash or a kill.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from refgate.config import ConfigError


class ThreadBusy(ConfigError):
    """Another process is running this thread."""


def lock_path(state_dir: Path, thread_id: str) -> Path:
    digest = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:24]
    return state_dir / "locks" / f"{digest}.lock"


@contextlib.contextmanager
def thread_lock(state_dir: Path, thread_id: str) -> Iterator[Path]:
    """Hold the thread's lock for the block, or raise ``ThreadBusy`` at once."""
    path = lock_path(state_dir, thread_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            raise ThreadBusy(
                f"thread {thread_id!r} is already running (pid {holder}); wait for it to "
                "finish or use another --thread"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield path
    finally:
        os.close(fd)

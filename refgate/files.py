"""Whole-file writes: a file refgate writes is the old one or the new one, never half of one.

Every file refgate writes for the user (reports, ``refgate.toml``, an eval run's record, a DART
sync's files, a document index's parts) is written to a temporary file in the same folder,
flushed to disk and renamed over the target (``os.replace``, atomic on one file system): a reader,
a crash or a kill mid-write sees the old file or the new one. The new file gets the permissions a
plain ``open`` would give it (0666 less the umask), not the 0600 of a temporary file. On any
failure the temporary file is removed and the error (an ``OSError`` from the system) propagates:
callers turn it into their own error with the target's name.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def current_umask() -> int:
    """The process's umask, read without changing it where /proc allows (threads may be writing
    files meanwhile); else set and restored at once."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target`` to write (by any writer that takes a path); when the
    block ends without an error, the file there is flushed to disk, given a plain file's
    permissions and renamed over ``target``. On an error it is removed and ``target`` is as it
    was."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~current_umask())
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends) to ``path`` whole or not at all;
    return the target path (``~`` expanded)."""
    target = Path(path).expanduser()
    with replacing(target) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(data)
    return target

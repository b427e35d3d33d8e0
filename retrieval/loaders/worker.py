"""The ingestion worker: ``python -m refgate.retrieval.loaders.worker`` parses documents for
``BoundedChild`` over a pipe (an ingestion worker).

It is started as its own module, never by ``multiprocessing`` spawn, so it does not re-import
the caller's ``__main__``: ingestion works the same from a script (with or without a main
guard), a notebook, ``python -c`` and ``python -`` (stdin).

The protocol is length-prefixed pickle frames (``send_frame``/``recv_frame``). The parent's first
frame is its ``sys.path`` (so functions of the caller's packages unpickle here as they do under
spawn); each later frame is ``(func, args, wants_progress)`` or ``None`` to stop. The worker
answers ``("progress", done, total)`` any number of times, then ``(kind, value, peak_mb)``.
Frames go out on a duplicate of the original stdout; fd 1 is pointed at stderr, so a reader that
prints cannot corrupt them. stderr is the parent's log of the worker: its last lines are the
reason shown when the worker dies.
"""

from __future__ import annotations

import os
import pickle
import resource
import struct
import sys
from typing import IO, Any

FRAME_HEADER = struct.Struct("!Q")
#: Largest frame either side accepts (a parse's parts come back in one frame).
MAX_FRAME = 2**34


def send_frame(out: IO[bytes], obj: object) -> None:
    """Write ``obj`` as one frame and flush."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(FRAME_HEADER.pack(len(data)))
    out.write(data)
    out.flush()


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    chunks: list[bytes] = []
    while n > 0:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_frame(stream: IO[bytes]) -> Any:
    """Read one frame (``EOFError`` when the pipe closed)."""
    (size,) = FRAME_HEADER.unpack(_read_exact(stream, FRAME_HEADER.size))
    if size > MAX_FRAME:
        raise EOFError(f"a frame of {size} bytes is over the {MAX_FRAME} byte bound")
    return pickle.loads(_read_exact(stream, size))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def serve(inp: IO[bytes], out: IO[bytes], memory_bytes: int) -> None:
    """Cap the address space, then run each requested call until told to stop."""
    # deferred: the worker's own imports stay small until the bound is set
    from refgate.retrieval.loaders.base import Unreadable

    sys.path[:] = [str(p) for p in recv_frame(inp)]
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    while True:
        try:
            request = recv_frame(inp)
        except EOFError:
            return
        if request is None:
            return
        func, args, wants_progress = request
        kwargs = {"progress": lambda done, total: send_frame(out, ("progress", done, total))}
        try:
            result = func(*args, **(kwargs if wants_progress else {}))
            reply: tuple[Any, ...] = ("ok", result)
        except Unreadable as exc:
            reply = ("unreadable", exc.reason)
        except MemoryError:
            reply = ("memory", "")
        except Exception as exc:  # any reader failure becomes a reason, never a traceback
            reply = ("error", f"{type(exc).__name__}: {str(exc)[:500]}")
        try:
            send_frame(out, (*reply, _peak_mb()))
        except MemoryError:
            send_frame(out, ("memory", "", _peak_mb()))


def main() -> None:
    memory_bytes = int(sys.argv[1])
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a reader's prints go to the log, not into the frames
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, out, memory_bytes)


if __name__ == "__main__":
    main()

"""One call's code: the namespace it runs in, the run itself, the integrity check of the
reserved ``emit_result`` and the signed ``result`` frame that alone ends a call validly."""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import socket
import sys
import traceback

from .data import Datasets
from .prelude import Channel, Engine, make_emit
from .protocol import Seal
from .sql import Sql
from .state import State


def format_error(exc: BaseException, code: str) -> str:
    te = traceback.TracebackException.from_exception(exc, capture_locals=False)
    stack = list(te.stack)
    first = next((i for i, f in enumerate(stack) if f.filename == "<cell>"), None)
    if first is not None:
        kept = stack[first:]
        # Library internals after the user's last line: keep the innermost two frames only.
        last_cell = max(i for i, f in enumerate(kept) if f.filename == "<cell>")
        if len(kept) - last_cell - 1 > 2:
            kept = kept[: last_cell + 1] + kept[-2:]
        te.stack = traceback.StackSummary.from_list(kept)
    else:
        te.stack = traceback.StackSummary.from_list([])
    return "".join(te.format())


def run_cell(req: dict, chan: socket.socket) -> None:
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        write_through=True,
    )
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        write_through=True,
    )
    code = req["code"]
    channel = Channel(chan, Seal(req.pop("seal", "")))
    emit = make_emit(channel)
    emit_code, call, send, sign = emit.__code__, Channel.call, Channel.send, Seal.sign
    specs = State.config.get("datasets", {})
    namespace = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "pd": State.pd,
        "np": State.np,
        "datasets": Datasets(specs, req.get("limits"), channel),
        "sql": Sql(specs, channel, req.get("limits", {}), os.getcwd()),
        "engine": Engine(channel, req.get("capabilities", [])),
        "emit_result": emit,
    }
    linecache.cache["<cell>"] = (len(code), None, code.splitlines(True), "<cell>")
    ok, error = True, None
    try:
        exec(compile(code, "<cell>", "exec"), namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            ok, error = False, f"SystemExit: {exc.code}"
    except BaseException as exc:
        ok, error = False, format_error(exc, code)
    tampered = (
        namespace.get("emit_result") is not emit
        or emit.__code__ is not emit_code
        or Channel.call is not call
        or Channel.send is not send
        or Seal.sign is not sign
        or hasattr(builtins, "emit_result")
    )
    if tampered:
        ok = False
        error = (
            "emit_result is reserved: the code replaced or patched it at run time, so the "
            "call's emitted results were discarded. Call emit_result(...) as given."
        )
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError):
        channel.send({"op": "result", "ok": ok, "error": error, "tampered": tampered})
    os._exit(0 if ok else 1)

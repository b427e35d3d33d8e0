"""The sandbox worker: runs INSIDE the sandbox (bubblewrap, or rlimits-only mode).

The package is self-contained (standard library, plus pandas and numpy once started) because the
sandbox sees no other refgate source: the host binds this folder read-only and runs
``template.main`` with the project's Python. The host imports only ``protocol`` from it.

Life of a worker (a warm template):

1. The host starts it with a control socket on fd 3 and sends an ``init`` frame (datasets, the
   uid to drop to, limits). The worker imports pandas/numpy, preloads small datasets, becomes a
   child subreaper and answers ``ready``.
2. Per ``run`` frame (carrying three fds: a private result channel, stdout and stderr pipes) it
   forks a fresh child. The child starts a new session, applies rlimits, drops to an unprivileged
   uid (when it can), enters a fresh scratch dir with a scrubbed environment and runs the code
   with the prelude (``pd``, ``np``, ``datasets``, ``engine``, ``emit_result``). Nothing done by
   one call is visible to the next: each call is a new process forked from the untouched template.
3. The worker enforces the wall clock, kills every leftover process after the call (whole
   process group, then every descendant), removes the scratch dir and reports ``exit``.

Emitted results and engine calls travel over the private channel as length-prefixed JSON frames,
never through stdout; the host validates every frame (see ``refgate.tools.sandbox.emit``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback

from .cell import run_cell
from .data import read_dataset
from .limits import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    prctl,
    set_limits,
    status_kb,
    sweep,
)
from .protocol import FrameReader, send_frame
from .state import State, WorkerConfig


def _init(config: WorkerConfig) -> dict:
    t0 = time.perf_counter()
    # deferred: pandas and numpy load once per template, at init (timed), never on the host
    import numpy as np
    import pandas as pd

    State.config = config
    State.pd, State.np = pd, np
    for name in config.get("eager_imports", ()):  # see Worker.start on the host
        with contextlib.suppress(ImportError):
            __import__(name)
    imported = time.perf_counter() - t0
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)

    gc.collect()
    gc.freeze()
    return {
        "op": "ready",
        "import_s": round(imported, 4),
        "init_s": round(time.perf_counter() - t0, 4),
        "pid": os.getpid(),
        "rss_kb": status_kb("VmRSS"),
    }


def _idle_tasks(config: dict) -> list:
    """Work the template does while no call is waiting: preload small datasets, then exercise
    common pandas paths so their lazy imports are shared by every later call. A call that
    arrives first runs at once (its child loads what it needs itself)."""

    def preload(name: str, spec: dict):
        def task() -> None:
            try:
                State.frames[name] = read_dataset(spec)
            except Exception as exc:  # reported when the code touches the dataset
                State.frames[name] = exc

        return task

    tasks = [
        preload(name, spec)
        for name, spec in config.get("datasets", {}).items()
        if spec.get("preload")
    ]
    return tasks + _warm_up_steps(State.pd, State.np)


def _warm_up_steps(pd, np) -> list:
    """Common paths to exercise once, so their lazy imports live in the template, not in
    each call. Each step is small: a call arriving meanwhile waits for one step at most."""
    frame = pd.DataFrame({"k": ["a", "b", "a"], "x": [1.0, 2.0, 3.0], "d": ["2020-01-01"] * 3})
    steps = (
        lambda: frame.assign(d=pd.to_datetime(frame["d"])),
        lambda: repr(frame) + repr(frame["x"]),
        lambda: frame.groupby("k")["x"].agg(["mean", "sum"]).reset_index().to_string(),
        lambda: frame.describe(),
        lambda: frame["x"].pct_change(),
        lambda: frame.pivot_table(index="k", values="x", aggfunc="mean"),
        lambda: frame.merge(frame, on="k")["x_x"].rolling(2).mean(),
        lambda: (
            frame.assign(d=pd.to_datetime(frame["d"])).set_index("d")["x"].resample("MS").mean()
        ),
        lambda: np.percentile(frame["x"].to_numpy(), 50),
        lambda: __import__("duckdb"),  # for sql(); importing starts no thread (fork-safe)
    )

    def guarded(step):
        def run() -> None:
            with contextlib.suppress(Exception):
                step()

        return run

    return [guarded(step) for step in steps]


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _call_scratch() -> str:
    """A fresh scratch folder for one call, owned by the call's uid, private to it."""
    uid = State.config.get("uid")
    scratch = tempfile.mkdtemp(prefix="call-", dir=State.config.get("scratch_base") or None)
    if uid is not None:
        os.chown(scratch, uid, State.config["gid"])
    os.chmod(scratch, 0o700)
    return scratch


def _fork_call(ctrl: socket.socket, req: dict, fds: list[int], scratch: str) -> int:
    """Fork the call's process (it never returns here); the template keeps none of its fds."""
    chan_fd, out_fd, err_fd = fds
    pid = os.fork()
    if pid == 0:  # the call's process
        code = 70
        try:
            ctrl.close()
            _child_main(req, chan_fd, out_fd, err_fd, scratch)
        except BaseException:
            with contextlib.suppress(BaseException):
                os.write(2, ("sandbox setup failed:\n" + traceback.format_exc()).encode())
        finally:
            os._exit(code)
    for fd in (chan_fd, out_fd, err_fd):
        os.close(fd)
    return pid


#: Why a call stopped before it exited by itself.
TIMED_OUT, CANCELLED, HOST_GONE = "timed_out", "cancelled", "host_gone"


def _wait_call(
    ctrl: socket.socket, reader: FrameReader, pid: int, deadline: float
) -> tuple[int | None, resource.struct_rusage | None, str | None]:
    """Wait for the call's exit, its deadline, a kill from the host, or the host's end: the exit
    status and usage if it exited, else why it was stopped."""
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None, None, TIMED_OUT
            wait_on = [ctrl] + ([pidfd] if pidfd is not None else [])
            ready, _, _ = select.select(
                wait_on, [], [], left if pidfd is not None else min(left, 0.005)
            )
            if ctrl in ready:
                if not reader.feed():
                    return None, None, HOST_GONE
                frame = reader.pop()
                if frame and frame.get("op") == "kill":
                    return None, None, CANCELLED
            if pidfd is None or pidfd in ready:
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done:
                    return status, usage, None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _kill_call(pid: int) -> tuple[int, resource.struct_rusage]:
    """Kill the call's process group (or the process) and reap it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    return status, usage


def _handle_run(ctrl: socket.socket, reader: FrameReader, req: dict, fds: list[int]) -> dict:
    scratch = _call_scratch()
    t0 = time.monotonic()
    pid = _fork_call(ctrl, req, fds, scratch)
    timeout = float(req.get("timeout", 30.0))
    status, usage, stopped = _wait_call(ctrl, reader, pid, t0 + timeout)
    if status is None or usage is None:
        status, usage = _kill_call(pid)
    duration = time.monotonic() - t0
    leftovers = sweep(pid, bool(State.config.get("pidns")))
    _remove_tree(scratch)
    if stopped == HOST_GONE:
        sys.exit(0)
    return {
        "op": "exit",
        "id": req.get("id"),
        "returncode": os.waitstatus_to_exitcode(status),
        "timed_out": stopped == TIMED_OUT,
        "cancelled": stopped == CANCELLED,
        "duration": round(duration, 6),
        "maxrss_kb": usage.ru_maxrss,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 4),
        "leftovers_killed": leftovers,
    }


def _child_main(req: dict, chan_fd: int, out_fd: int, err_fd: int, scratch: str) -> None:
    os.setsid()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    for fd in (null, out_fd, err_fd):
        os.close(fd)
    # Nothing else the template holds reaches the call: only stdio and the result channel.
    for entry in os.listdir("/proc/self/fd"):
        fd = int(entry)
        if fd > 2 and fd != chan_fd:
            with contextlib.suppress(OSError):
                os.close(fd)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    set_limits(req.get("limits", {}))
    uid = State.config.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setgid(State.config["gid"])
        os.setuid(uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    os.chdir(scratch)
    env = {
        "HOME": scratch,
        "TMPDIR": scratch,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": scratch,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    os.environ.clear()
    os.environ.update(env)

    tempfile.tempdir = scratch
    chan = socket.socket(fileno=chan_fd)
    run_cell(req, chan)


def main() -> None:
    ctrl = socket.socket(fileno=int(os.environ.get("REFGATE_SANDBOX_FD", "3")))
    reader = FrameReader(ctrl)
    init = reader.read()
    if not init or init.get("op") != "init":
        sys.exit("sandbox worker: expected an init frame")
    try:
        ready = _init(init)
    except Exception as exc:
        send_frame(ctrl, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        sys.exit(1)
    send_frame(ctrl, ready)
    tasks = _idle_tasks(init)
    while True:
        if tasks and not reader.buf and not select.select([ctrl], [], [], 0)[0]:
            tasks.pop(0)()

            gc.collect()
            gc.freeze()
            continue
        frame = reader.read()
        if frame is None:
            return
        op = frame.get("op")
        if op == "run":
            fds = reader.take_fds(3)
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                send_frame(ctrl, {"op": "exit", "id": frame.get("id"), "error": "missing fds"})
                continue
            send_frame(ctrl, _handle_run(ctrl, reader, frame, fds))
        elif op == "ping":
            kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            send_frame(
                ctrl,
                {
                    "op": "pong",
                    "rss_kb": status_kb("VmRSS"),
                    "hwm_kb": status_kb("VmHWM"),
                    "children_maxrss_kb": kids,
                    "warm": not tasks,
                    "preloaded": sorted(
                        n for n, f in State.frames.items() if not isinstance(f, Exception)
                    ),
                },
            )
        elif op == "stop":
            return

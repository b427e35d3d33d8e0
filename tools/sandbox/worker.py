"""The sandbox worker: runs INSIDE the sandbox (bubblewrap, or rlimits-only mode).

This file is self-contained (standard library, plus pandas and numpy once started) because the
sandbox sees no refgate source: the host binds this one file read-only and runs it with the
project's Python. The host imports it only for the framing helpers below.

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
import json
import os
import select
import signal
import socket
import struct
import sys
import time

MAX_FRAME = 64 << 20
_HEADER = struct.Struct(">I")


# --------------------------------------------------------------------------- framing (shared)


class ProtocolError(RuntimeError):
    """A malformed or oversized frame on a sandbox channel."""


def encode_frame(obj) -> bytes:
    data = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode()
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"message of {len(data)} bytes exceeds the {MAX_FRAME} byte limit")
    return _HEADER.pack(len(data)) + data


def send_frame(sock: socket.socket, obj, fds=()) -> None:
    """Send one frame; ``fds`` ride (SCM_RIGHTS) on the first bytes."""
    data = encode_frame(obj)
    if fds:
        sent = socket.send_fds(sock, [data[:4]], list(fds))
        if sent != 4:  # pragma: no cover - a 4-byte send on a stream socket is atomic
            raise ProtocolError("short send of a frame header")
        data = data[4:]
    sock.sendall(data)


class Seal:
    """Signs the frames refgate's own prelude writes on a call's channel (HMAC-SHA256 over a
    sequence number and the canonical JSON), so the host can reject frames the code wrote
    itself. The key arrives in the ``run`` frame and lives only in the prelude's channel."""

    def __init__(self, key: str) -> None:
        self._key = bytes.fromhex(key)
        self.seq = 0

    def _mac(self, seq: int, body: dict) -> str:
        import hashlib
        import hmac

        data = json.dumps(
            body, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False
        ).encode()
        return hmac.new(self._key, b"%d:" % seq + data, hashlib.sha256).hexdigest()

    def sign(self, body: dict) -> dict:
        """``body`` plus its ``seq`` and ``mac`` (the next frame in this call's sequence)."""
        self.seq += 1
        return {**body, "seq": self.seq, "mac": self._mac(self.seq, body)}

    def verify(self, frame) -> dict | None:
        """The frame's body when it is the next signed frame of the sequence, else None."""
        import hmac

        if not isinstance(frame, dict):
            return None
        body = {k: v for k, v in frame.items() if k not in ("seq", "mac")}
        seq, mac = frame.get("seq"), frame.get("mac")
        if type(seq) is not int or seq != self.seq + 1 or not isinstance(mac, str):
            return None
        try:
            expected = self._mac(seq, body)
        except (TypeError, ValueError, RecursionError):
            return None
        if not hmac.compare_digest(expected, mac):
            return None
        self.seq = seq
        return body


class FrameReader:
    """Reassembles frames from a stream socket, collecting any passed fds in arrival order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.fds: list[int] = []
        self.eof = False

    def feed(self) -> bool:
        """One receive; False at end of stream."""
        flags = getattr(socket, "MSG_CMSG_CLOEXEC", 0)
        data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 16, flags)
        self.fds.extend(fds)
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def pop(self):
        """The next complete frame, or None."""
        if len(self.buf) < 4:
            return None
        (size,) = _HEADER.unpack_from(self.buf)
        if size > MAX_FRAME:
            raise ProtocolError(f"frame of {size} bytes exceeds the {MAX_FRAME} byte limit")
        if len(self.buf) < 4 + size:
            return None
        raw = bytes(self.buf[4 : 4 + size])
        del self.buf[: 4 + size]
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"frame is not JSON: {exc}") from None

    def read(self, timeout: float | None = None):
        """Block until a frame arrives (None at end of stream or after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            frame = self.pop()
            if frame is not None:
                return frame
            if self.eof:
                return None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                ready, _, _ = select.select([self.sock], [], [], left)
                if not ready:
                    return None
            self.feed()

    def take_fds(self, n: int) -> list[int]:
        taken, self.fds = self.fds[:n], self.fds[n:]
        return taken


# --------------------------------------------------------------------------- worker side

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38

_libc = None


def _prctl(option: int, arg: int) -> bool:
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        import ctypes

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.prctl(option, arg, 0, 0, 0) == 0


class _State:
    """The template's state, set once by ``init``."""

    config: dict = {}
    frames: dict = {}
    pd = None
    np = None


def _read_dataset(spec: dict):
    pd = _State.pd
    path = spec["path"]
    frame = pd.read_parquet(path) if spec.get("format") == "parquet" else pd.read_csv(path)
    for col in spec.get("date_columns", ()):
        if col in frame.columns:
            frame[col] = pd.to_datetime(frame[col], errors="coerce")
    return frame


def _init(config: dict) -> dict:
    t0 = time.perf_counter()
    import numpy as np
    import pandas as pd

    _State.config = config
    _State.pd, _State.np = pd, np
    imported = time.perf_counter() - t0
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_DUMPABLE, 0)
    import gc

    gc.collect()
    gc.freeze()
    return {
        "op": "ready",
        "import_s": round(imported, 4),
        "init_s": round(time.perf_counter() - t0, 4),
        "pid": os.getpid(),
        "rss_kb": _status_kb("VmRSS"),
    }


def _idle_tasks(config: dict) -> list:
    """Work the template does while no call is waiting: preload small datasets, then exercise
    common pandas paths so their lazy imports are shared by every later call. A call that
    arrives first runs at once (its child loads what it needs itself)."""

    def preload(name: str, spec: dict):
        def task() -> None:
            try:
                _State.frames[name] = _read_dataset(spec)
            except Exception as exc:  # reported when the code touches the dataset
                _State.frames[name] = exc

        return task

    tasks = [
        preload(name, spec)
        for name, spec in config.get("datasets", {}).items()
        if spec.get("preload")
    ]
    return tasks + _warm_up_steps(_State.pd, _State.np)


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
    )

    def guarded(step):
        def run() -> None:
            with contextlib.suppress(Exception):
                step()

        return run

    return [guarded(step) for step in steps]


def _status_kb(field: str) -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children() -> list[int]:
    me = os.getpid()
    try:  # direct children from the kernel (no scan of a host's whole /proc in rlimits mode)
        found = []
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children") as fh:
                found += [int(p) for p in fh.read().split()]
        return found
    except (OSError, ValueError):
        pass
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(entry))
    return found


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _sweep(pgid: int) -> int:
    """Kill every process the call left behind; return how many were killed."""
    killed = 0
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        if _State.config.get("pidns"):
            # Alone in our PID namespace with init: -1 reaches exactly the call's processes.
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        kids = _children()
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        _reap_all()
        if not kids and not _children():
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return killed
        time.sleep(0.002)
    return killed


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _handle_run(ctrl: socket.socket, reader: FrameReader, req: dict, fds: list[int]) -> dict:
    import tempfile

    chan_fd, out_fd, err_fd = fds
    uid = _State.config.get("uid")
    gid = _State.config.get("gid")
    scratch = tempfile.mkdtemp(prefix="call-", dir=_State.config.get("scratch_base") or None)
    if uid is not None:
        os.chown(scratch, uid, gid)
    os.chmod(scratch, 0o700)
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the call's process
        code = 70
        try:
            ctrl.close()
            _child_main(req, chan_fd, out_fd, err_fd, scratch)
        except BaseException:
            try:
                import traceback

                os.write(2, ("sandbox setup failed:\n" + traceback.format_exc()).encode())
            except BaseException:
                pass
        finally:
            os._exit(code)
    for fd in (chan_fd, out_fd, err_fd):
        os.close(fd)
    timeout = float(req.get("timeout", 30.0))
    deadline = t0 + timeout
    timed_out = cancelled = host_gone = False
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        wait_on = [ctrl] + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(
            wait_on, [], [], left if pidfd is not None else min(left, 0.005)
        )
        if ctrl in ready:
            if not reader.feed():
                host_gone = True
                break
            frame = reader.pop()
            if frame and frame.get("op") == "kill":
                cancelled = True
                break
        if pidfd is None or pidfd in ready:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            status = None
    if status is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
    if pidfd is not None:
        os.close(pidfd)
    duration = time.monotonic() - t0
    leftovers = _sweep(pid)
    _remove_tree(scratch)
    if host_gone:
        sys.exit(0)
    result = {
        "op": "exit",
        "id": req.get("id"),
        "returncode": os.waitstatus_to_exitcode(status),
        "timed_out": timed_out,
        "cancelled": cancelled,
        "duration": round(duration, 6),
        "maxrss_kb": usage.ru_maxrss,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 4),
        "leftovers_killed": leftovers,
    }
    return result


def _set_limits(limits: dict) -> None:
    import resource

    def cap(which, value):
        if value is None:
            return
        soft, hard = (value, value) if not isinstance(value, list) else value
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))

    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_CPU, limits.get("cpu"))
    cap(resource.RLIMIT_AS, limits.get("as"))
    cap(resource.RLIMIT_FSIZE, limits.get("fsize"))
    cap(resource.RLIMIT_NOFILE, limits.get("nofile"))
    cap(resource.RLIMIT_NPROC, limits.get("nproc"))


def _child_main(req: dict, chan_fd: int, out_fd: int, err_fd: int, scratch: str) -> None:
    os.setsid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
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
    _set_limits(req.get("limits", {}))
    uid, gid = _State.config.get("uid"), _State.config.get("gid")
    if uid is not None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
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
    import tempfile

    tempfile.tempdir = scratch
    chan = socket.socket(fileno=chan_fd)
    _run_cell(req, chan)


# --------------------------------------------------------------------------- the prelude


def _jsonable(value):
    """A JSON-safe scalar: numpy/pandas scalars to Python, NaN/inf to None, dates to ISO text."""
    np, pd = _State.np, _State.pd
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if np is not None:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return _jsonable(float(value))
    if pd is not None:
        if value is pd.NaT or (isinstance(value, type(pd.NA)) and value is pd.NA):
            return None
        if isinstance(value, pd.Timestamp):
            if value.tz is None and value == value.normalize():
                return value.date().isoformat()
            return value.isoformat()
        if isinstance(value, pd.Period):
            return str(value)
    import datetime as _dt

    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return str(value)


def _table_payload(table) -> dict:
    pd = _State.pd
    if isinstance(table, pd.Series):
        table = table.to_frame(name=table.name if table.name is not None else "value")
    elif isinstance(table, (dict, list)):
        table = pd.DataFrame(table)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            "emit_result(table=...) takes a pandas DataFrame or Series, a dict of columns or a "
            f"list of row dicts, not {type(table).__name__}"
        )
    frame = table
    index = frame.index
    if not isinstance(index, pd.RangeIndex) or any(n is not None for n in index.names):
        frame = frame.reset_index()
    if isinstance(frame.columns, pd.MultiIndex):
        columns = [" / ".join(str(p) for p in col if str(p)) for col in frame.columns]
    else:
        columns = [str(c) for c in frame.columns]
    rows = [[_jsonable(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return {"columns": columns, "rows": rows}


def _values_payload(values) -> dict:
    pd = _State.pd
    if isinstance(values, pd.Series):
        values = values.to_dict()
    if not isinstance(values, dict):
        raise TypeError(
            "emit_result(values=...) takes a dict {name: number} (or a pandas Series), "
            f"not {type(values).__name__}"
        )
    out = {}
    for name, value in values.items():
        converted = _jsonable(value)
        if isinstance(converted, bool) or not isinstance(converted, (int, float)):
            raise TypeError(
                f"emit_result(values=...): {name!r} must be a finite number, got {value!r}"
            )
        out[str(name)] = converted
    return out


def _date_payload(date) -> dict:
    import datetime as _dt
    import re

    pd = _State.pd
    label = None
    if isinstance(date, str):
        text = date.strip()
        match = re.fullmatch(r"(\d{4})\s*-?\s*Q([1-4])", text, re.IGNORECASE)
        if match:
            date = pd.Period(f"{match.group(1)}Q{match.group(2)}", freq="Q")
            label = text
    if isinstance(date, pd.Period):
        label = label or str(date)
        return {"date": date.end_time.date().isoformat(), "label": label}
    if isinstance(date, (_dt.date, _dt.datetime, pd.Timestamp, str)):
        try:
            stamp = pd.Timestamp(date)
        except (ValueError, TypeError):
            raise ValueError(
                f"emit_result(date=...): cannot read {date!r} as a date (use YYYY-MM-DD, "
                "a datetime, a pandas Timestamp/Period or 'YYYYQn')"
            ) from None
        if stamp is pd.NaT:
            raise ValueError("emit_result(date=...): the date is missing (NaT)")
        out = {"date": stamp.date().isoformat()}
        if isinstance(date, str) and date.strip() != out["date"]:
            out["label"] = date.strip()
        return out
    raise TypeError(f"emit_result(date=...) takes a date, not {type(date).__name__}")


class _Channel:
    """The private channel to the host (request/reply frames, each signed by the seal)."""

    def __init__(self, sock: socket.socket, seal: Seal) -> None:
        self._sock = sock
        self._reader = FrameReader(sock)
        self._seal = seal

    def send(self, message: dict) -> None:
        send_frame(self._sock, self._seal.sign(message))

    def call(self, message: dict) -> dict:
        self.send(message)
        reply = self._reader.read()
        if reply is None:
            raise RuntimeError("the sandbox host closed the result channel")
        return reply


class _EngineResult(dict):
    """A capability's data (a dict) plus the ids of the refs the host issued for it."""

    refs: list = []

    def frame(self):
        """The result as a pandas DataFrame (for table-shaped results with columns/rows)."""
        if "columns" in self and "rows" in self:
            return _State.pd.DataFrame(self["rows"], columns=self["columns"])
        raise ValueError("this result has no columns/rows table")


class _Engine:
    """``engine.<name>(...)`` calls a registered capability on the host (trusted code)."""

    def __init__(self, channel: _Channel, catalog: list) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_catalog", {c["name"]: c for c in catalog})

    def __getattr__(self, name: str):
        catalog = object.__getattribute__(self, "_catalog")
        if name.startswith("_") or name not in catalog:
            known = ", ".join(sorted(catalog)) or "none"
            raise AttributeError(f"engine has no capability {name!r}; known: {known}")
        channel = object.__getattribute__(self, "_channel")
        entry = catalog[name]

        def call(*args, **kwargs):
            message = {
                "op": "engine",
                "name": name,
                "args": [_plain(a) for a in args],
                "kwargs": {k: _plain(v) for k, v in kwargs.items()},
            }
            reply = channel.call(message)
            if not reply.get("ok"):
                raise RuntimeError(f"engine.{name} failed: {reply.get('error')}")
            data = reply.get("data")
            if isinstance(data, dict):
                data = _EngineResult(data)
                data.refs = list(reply.get("refs", []))
            return data

        call.__name__ = name
        call.__doc__ = f"{entry.get('signature', name)}\n\n{entry.get('doc', '')}"
        return call

    def __dir__(self):
        return sorted(object.__getattribute__(self, "_catalog"))

    def __setattr__(self, name, value):
        raise AttributeError("engine is read-only")

    def __repr__(self) -> str:
        return f"<engine: {', '.join(self.__dir__())}>"


def _plain(value):
    """Engine arguments must be JSON: plain scalars, lists and dicts."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    out = _jsonable(value)
    if out is not None and not isinstance(out, (bool, int, float, str)):
        raise TypeError(f"engine arguments must be JSON values, got {type(value).__name__}")
    if isinstance(out, str) and not isinstance(value, str) and hasattr(value, "shape"):
        raise TypeError("engine arguments must be JSON values, not arrays or DataFrames")
    return out


class _Datasets(dict):
    """``datasets["name"]`` -> a pandas DataFrame of a workspace dataset (read-only files)."""

    def __init__(self, specs: dict) -> None:
        super().__init__()
        self._specs = specs

    def __missing__(self, name):
        if name not in self._specs:
            known = ", ".join(sorted(self._specs)) or "none (no workspace)"
            raise KeyError(f"no dataset {name!r}; datasets: {known}")
        frame = _State.frames.get(name)
        if frame is None:
            frame = _read_dataset(self._specs[name])
        if isinstance(frame, Exception):
            raise frame
        self[name] = frame
        return frame

    def __contains__(self, name) -> bool:
        return name in self._specs

    def keys(self):
        return self._specs.keys()

    def __iter__(self):
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def meta(self, name: str) -> dict:
        """Column metadata from refgate.toml: {column: {unit, scale, description}}."""
        if name not in self._specs:
            raise KeyError(f"no dataset {name!r}")
        return dict(self._specs[name].get("columns", {}))

    def __repr__(self) -> str:
        return f"<datasets: {', '.join(sorted(self._specs)) or 'none'}>"


def _make_emit(channel: _Channel):
    def emit_result(
        table=None,
        values=None,
        units=None,
        date=None,
        sources=None,
        *,
        title=None,
        scale=None,
        period=None,
        date_label=None,
    ):
        """Emit evidence back to refgate (the only way results leave the sandbox).

        table=  a DataFrame/Series (or dict of columns / list of row dicts) -> a tableRef
        values= {name: number} -> a valueRef
        units=  {column_or_value_name: unit} or one unit for all values ("USD", "%", ...)
        date=   the as-of date ("2009-09-30", a Timestamp, or "2009Q3") -> a dateRef
        sources= dataset names or ref ids the result was computed from
        title=, scale= ("billion", ...), period= ("2009Q3"), date_label= optional.
        Returns the ids of the refs that will be issued.
        """
        if table is None and values is None and date is None:
            raise ValueError("emit_result needs at least one of table=, values=, date=")
        message = {"op": "emit"}
        if table is not None:
            message["table"] = _table_payload(table)
        if values is not None:
            message["values"] = _values_payload(values)
        if date is not None:
            message["date"] = _date_payload(date)
            if date_label is not None:
                message["date"]["label"] = str(date_label)
        if units is not None:
            message["units"] = (
                {str(k): str(v) for k, v in units.items()}
                if isinstance(units, dict)
                else str(units)
            )
        if sources is not None:
            message["sources"] = (
                [sources] if isinstance(sources, str) else [str(s) for s in sources]
            )
        for key, value in (("title", title), ("scale", scale), ("period", period)):
            if value is not None:
                message[key] = str(value)
        reply = channel.call(message)
        if not reply.get("ok"):
            raise ValueError(f"emit_result rejected: {reply.get('error')}")
        return list(reply.get("refs", []))

    return emit_result


def _format_error(exc: BaseException, code: str) -> str:
    import traceback

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


def _run_cell(req: dict, chan: socket.socket) -> None:
    import builtins
    import io
    import linecache

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
    channel = _Channel(chan, Seal(req.pop("seal", "")))
    emit = _make_emit(channel)
    emit_code, call, send, sign = emit.__code__, _Channel.call, _Channel.send, Seal.sign
    specs = _State.config.get("datasets", {})
    namespace = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "pd": _State.pd,
        "np": _State.np,
        "datasets": _Datasets(specs),
        "engine": _Engine(channel, req.get("capabilities", [])),
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
        ok, error = False, _format_error(exc, code)
    tampered = (
        namespace.get("emit_result") is not emit
        or emit.__code__ is not emit_code
        or _Channel.call is not call
        or _Channel.send is not send
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


# --------------------------------------------------------------------------- main loop


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
            import gc

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
            import resource

            kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            send_frame(
                ctrl,
                {
                    "op": "pong",
                    "rss_kb": _status_kb("VmRSS"),
                    "hwm_kb": _status_kb("VmHWM"),
                    "children_maxrss_kb": kids,
                    "warm": not tasks,
                    "preloaded": sorted(
                        n for n, f in _State.frames.items() if not isinstance(f, Exception)
                    ),
                },
            )
        elif op == "stop":
            return


if __name__ == "__main__":
    main()

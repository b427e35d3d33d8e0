"""Host side of the sandbox: starts warm workers (bubblewrap or rlimits-only) and runs calls.

A ``Worker`` is one warm template process for one set of datasets. ``Worker.run`` hands it a
private channel (a socketpair) plus stdout/stderr pipes for one call, serves the call's channel
requests (``emit``, ``engine``, ``result``) through a handler, caps the output it keeps, and
returns a ``RawRun``. ``get_worker`` keeps a small pool of warm workers keyed by mode and datasets
(file path, size and mtime, so an edited file starts a fresh worker).

What the bubblewrap sandbox sees: ``/usr`` (and the ``/bin``, ``/lib*`` links), the Python
installation(s) the project's interpreter needs (its venv and base prefix), the worker package,
each dataset file read-only at ``/workspace/datasets/<name>.<ext>``, a fresh ``/proc`` and
``/dev``, and a size-capped ``/tmp`` holding the per-call scratch dir. No network (its own empty
network namespace), its own PID/IPC/UTS namespaces, no inherited environment; ``/`` is
remounted read-only. When the host runs as root, calls run as an unprivileged uid of their own
(one per worker, ``PRIVATE_UIDS``), so no other process counts against their process limit.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refgate.paths import PathEscape, recheck
from refgate.tools.dataset_scan import estimated_bytes
from refgate.tools.sandbox.worker.protocol import (
    FrameReader,
    ProtocolError,
    Seal,
    encode_frame,
    send_frame,
)

#: The worker package (standard library only; the sandbox binds this one folder of refgate).
WORKER_PACKAGE = Path(__file__).with_name("worker")
SANDBOX_ROOT = "/workspace"
MODES = ("bwrap", "rlimits")
NOBODY = 65534
#: When the host runs as root, each worker's calls run as a uid of their own from this range (no
#: account needed). RLIMIT_NPROC counts a uid's processes machine-wide: under a uid shared with
#: every other sandbox (nobody), a call's process limit moved with how many processes the others
#: ran at that moment (a flood got 89 processes against a limit of 80 when theirs exited), and
#: one sandbox's processes could signal another's.
PRIVATE_UIDS = range(600_000, 1_600_000)

#: Datasets at most this large are parsed once in the warm template (shared copy-on-write).
PRELOAD_MAX_BYTES = 32 << 20


class SandboxError(RuntimeError):
    """The sandbox could not run the call (not a failure of the code itself)."""


class SandboxUnavailable(SandboxError):
    """The requested isolation is not available here; the message says what to do."""


@dataclass(frozen=True)
class Limits:
    """Per-call resource limits."""

    memory_mb: int = 2048  # RLIMIT_AS of the call's process (the template is ~350 MB of it)
    extra_processes: int = 64  # RLIMIT_NPROC headroom above what the uid already runs
    file_mb: int = 64  # RLIMIT_FSIZE: largest file the code may write
    open_files: int = 256  # RLIMIT_NOFILE
    scratch_mb: int = 256  # size of the tmpfs holding the scratch dirs (bubblewrap)
    output_bytes: int = 64 * 1024  # stdout/stderr kept per stream; the rest is counted, dropped


@dataclass(frozen=True)
class DatasetMount:
    """A dataset the call sees: a file bound read-only, or (``path=None``, format
    ``"warehouse"``) a database table reached only through ``sql()`` and the host's proxy."""

    name: str
    path: Path | None
    format: str = "csv"
    date_columns: tuple[str, ...] = ()
    columns: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def is_file(self) -> bool:
        return self.path is not None

    def fingerprint(self) -> tuple:
        try:
            if self.path is None:
                raise OSError("no file")
            st = self.path.stat()
            stamp: tuple = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = (None, None)
        return (self.name, str(self.path), self.format, self.date_columns, *stamp)


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


def _worker_argv(python: str, parent: str) -> list[str]:
    """Run the worker package found under ``parent`` (``-I``: no user site, no cwd on the path)."""
    boot = f"import sys; sys.path.insert(0, {parent!r}); from worker.template import main; main()"
    return [python, "-I", "-c", boot]


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def _bwrap_supports(bwrap: str, flag: str) -> bool:
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return flag in (out.stdout + out.stderr)


def _mode_refusal() -> str:
    return (
        "RunPython refuses to run: bubblewrap (bwrap) is not installed, so the code cannot be "
        "isolated. Install it (Debian/Ubuntu: apt-get install bubblewrap), or set "
        "REFGATE_SANDBOX=rlimits to accept a weaker sandbox (a separate process with rlimits, a "
        "scrubbed environment and a timeout, but no filesystem or network isolation)."
    )


def _python_roots() -> list[str]:
    """Folders the interpreter needs: the venv, its base installation, the real executable's."""
    roots: list[str] = []
    exe = Path(os.path.realpath(sys.executable))
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates.append(str(exe.parent.parent))
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            candidates.append(sysconfig.get_paths()[key])
    for cand in candidates:
        real = os.path.realpath(cand)
        if real in ("/", "/usr") or real.startswith("/usr/"):
            continue  # /usr is bound as a whole
        if not any(real == r or real.startswith(r + os.sep) for r in roots):
            roots = [r for r in roots if not r.startswith(real + os.sep)] + [real]
    home = os.path.realpath(os.path.expanduser("~"))
    for root in roots:
        if root in (home, "/", os.path.realpath("/root")):
            raise SandboxUnavailable(
                f"the Python installation lives at {root}; binding it would expose the whole "
                "home directory. Use a virtualenv or a Python installed outside the home folder."
            )
    return roots


def _system_binds() -> list[str]:
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"):
        if os.path.exists(etc):
            args += ["--ro-bind", etc, etc]
    return args


def _parents(paths: Iterable[str]) -> list[str]:
    """Every ancestor folder of ``paths`` (outermost first), except the system binds."""
    found: set[str] = set()
    for path in paths:
        parent = os.path.dirname(path.rstrip("/"))
        while parent not in ("", "/"):
            found.add(parent)
            parent = os.path.dirname(parent)
    skip = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev")
    kept = [p for p in found if not any(p == s or p.startswith(s + "/") for s in skip)]
    return sorted(kept, key=lambda p: (p.count("/"), p))


def confined_source(mount: DatasetMount) -> str:
    """The dataset's file, re-checked at mount time: it must still resolve to the real path
    confined when the workspace was loaded (``refgate.paths.recheck``; no symlink swap)."""

    try:
        return str(recheck(mount.path, what=f"dataset {mount.name!r}"))
    except PathEscape as exc:
        raise SandboxError(str(exc)) from exc


def sandbox_path(mount: DatasetMount) -> str:
    suffix = mount.path.suffix.lower() or ".csv"
    return f"{SANDBOX_ROOT}/datasets/{mount.name}{suffix}"


_THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    # pyarrow's jemalloc would start a background thread; a template must be single-threaded
    # to fork safely.
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "LANG": "C.UTF-8",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
    # Address space is the sandbox's memory limit (RLIMIT_AS): pyarrow's mimalloc pool reserves
    # about 1 GB of it at first use and glibc 64 MB per thread arena (DuckDB's threads), so
    # both are turned to their frugal settings (measured in benchmarks/data_scale.py).
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "MALLOC_ARENA_MAX": "2",
}


def _count_uid_processes(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


def _private_uid() -> int:
    """A uid of ``PRIVATE_UIDS`` that runs no process now (drawn at random: two hosts starting
    workers at once do not pick the same one in practice)."""
    for _ in range(32):
        uid = PRIVATE_UIDS[secrets.randbelow(len(PRIVATE_UIDS))]
        if _count_uid_processes(uid) == 0:
            return uid
    raise SandboxError("no free sandbox uid found (32 draws from the private range were in use)")


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
        self.ready: dict[str, Any] = {}
        self.start_seconds = 0.0
        self._lock = threading.Lock()
        self._log = bytearray()
        self._drain: threading.Thread | None = None
        self._scratch_base: str | None = None
        self.uid: int | None = _private_uid() if os.geteuid() == 0 else None
        self.calls = 0

    # ----------------------------------------------------------------- lifecycle

    def _command(self, fd: int) -> list[str]:
        python = sys.executable
        if self.mode == "rlimits":
            return _worker_argv(python, str(WORKER_PACKAGE.parent))
        bwrap = find_bwrap()
        if bwrap is None:
            raise SandboxUnavailable(_mode_refusal())
        # No --die-with-parent: its PR_SET_PDEATHSIG follows the *thread* that started the
        # worker, so a worker started from a tool thread would die with that thread. The
        # worker exits instead when the host's end of its control socket closes (the host
        # process ending closes it too).
        cmd = [
            bwrap,
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--new-session",
            "--clearenv",
            "--hostname",
            "sandbox",
        ]
        for key, value in _THREAD_ENV.items():
            cmd += ["--setenv", key, value]
        cmd += ["--setenv", "REFGATE_SANDBOX_FD", str(fd)]
        cmd += _system_binds()
        # The scratch tmpfs first: binds that land under /tmp (a checkout or venv there) must be
        # mounted on top of it, not hidden by it.
        if _bwrap_supports(bwrap, "--size"):  # bubblewrap >= 0.8; older ones: FSIZE only
            cmd += ["--size", str(self.limits.scratch_mb << 20)]
        cmd += ["--tmpfs", "/tmp"]
        binds = [(root, root) for root in _python_roots()]
        binds.append((str(WORKER_PACKAGE), f"{SANDBOX_ROOT}/sandbox/worker"))
        binds += [(confined_source(m), sandbox_path(m)) for m in self.datasets if m.is_file]
        # bwrap creates missing parent dirs 0700; the unprivileged call must traverse them.
        for parent in _parents(dest for _, dest in binds):
            cmd += ["--perms", "0755", "--dir", parent]
        for src, dest in binds:
            cmd += ["--ro-bind", src, dest]
        cmd += ["--proc", "/proc", "--dev", "/dev"]
        cmd += ["--remount-ro", "/", "--chdir", "/tmp"]
        cmd += ["--", *_worker_argv(python, f"{SANDBOX_ROOT}/sandbox")]
        return cmd

    def start(self, timeout: float = 30.0) -> None:
        t0 = time.perf_counter()
        host_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            cmd = self._command(child_sock.fileno())
        except SandboxError:
            host_sock.close()
            child_sock.close()
            raise
        env = dict(_THREAD_ENV)
        env["REFGATE_SANDBOX_FD"] = str(child_sock.fileno())
        cwd = None
        if self.mode == "rlimits":
            self._scratch_base = tempfile.mkdtemp(prefix="refgate-sandbox-")
            if self.uid is not None:
                os.chown(self._scratch_base, 0, 0)
                os.chmod(self._scratch_base, 0o711)
            cwd = self._scratch_base
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
        init = {
            "op": "init",
            "uid": self.uid,
            "gid": self.uid,
            "pidns": self.mode == "bwrap",
            # rlimits mode: calls drop to an unprivileged uid on the host's own filesystem, which
            # may not read a Python installed under /root, so sql()'s engine is imported by the
            # template (bubblewrap binds the installation readable; there it loads when idle).
            "eager_imports": ["duckdb"] if self.mode == "rlimits" else [],
            "scratch_base": "/tmp" if self.mode == "bwrap" else self._scratch_base,
            "datasets": {m.name: self._dataset_entry(m) for m in self.datasets},
        }
        try:
            send_frame(host_sock, init)
            ready = self.reader.read(timeout)
        except OSError:
            ready = None
        if not ready or ready.get("op") != "ready":
            detail = ready.get("error") if ready else None
            self.close()
            log = self.log_tail()
            hint = ""
            if self.mode == "bwrap":
                hint = (
                    " If bubblewrap cannot create namespaces here, set REFGATE_SANDBOX=rlimits "
                    "for the weaker rlimits-only sandbox."
                )
            raise SandboxUnavailable(
                f"the {self.mode} sandbox failed to start"
                + (f": {detail}" if detail else "")
                + (f"\n{log}\n" if log else ". ")
                + hint.strip()
            )
        self.ready = ready
        self.start_seconds = time.perf_counter() - t0

    def _dataset_entry(self, m: DatasetMount) -> dict[str, Any]:
        columns = {k: dict(v) for k, v in m.columns.items()}
        if not m.is_file:
            return {"kind": "warehouse", "format": m.format, "columns": columns}
        return {
            "kind": "file",
            "path": sandbox_path(m) if self.mode == "bwrap" else str(m.path),
            "format": m.format,
            "date_columns": list(m.date_columns),
            "preload": _memory_bytes(m) <= PRELOAD_MAX_BYTES,
            "memory_bytes": _memory_bytes(m),
            "columns": columns,
        }

    def _drain_log(self) -> None:
        proc = self.proc
        if proc is None or proc.stdout is None:
            return
        for chunk in iter(lambda: proc.stdout.read1(4096), b""):
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

    def stats(self) -> dict[str, Any]:
        """The template's memory (``rss_kb``, ``hwm_kb``) and the calls' peak (``children_maxrss_kb``)."""
        with self._lock:
            if not self.alive:
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
        handler: Callable[[dict[str, Any]], dict[str, Any]],
        capabilities: list[dict[str, str]] | None = None,
    ) -> RawRun:
        """Run ``code`` in a fresh child; ``handler`` answers each ``emit``/``engine`` request."""
        with self._lock:
            if not self.alive:
                raise SandboxError("the sandbox worker is not running")
            self.calls += 1
            return self._run_locked(code, timeout, handler, capabilities or [])

    def _limits_frame(self, timeout: float) -> dict[str, Any]:
        lim = self.limits
        cpu = int(timeout) + 1
        nproc_base = _count_uid_processes(self.uid if self.uid is not None else os.getuid())
        return {
            "cpu": [cpu, cpu + 1],
            "as": lim.memory_mb << 20,
            "fsize": lim.file_mb << 20,
            "nofile": lim.open_files,
            "nproc": nproc_base + lim.extra_processes,
        }

    def _run_locked(self, code, timeout, handler, capabilities) -> RawRun:
        assert self.sock is not None and self.reader is not None
        host_chan, child_chan = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        key = secrets.token_hex(32)
        seal = Seal(key)
        request = {
            "op": "run",
            "id": self.calls,
            "seal": key,
            "code": code,
            "timeout": timeout,
            "limits": self._limits_frame(timeout),
            "capabilities": capabilities,
        }
        t0 = time.monotonic()
        try:
            send_frame(self.sock, request, fds=(child_chan.fileno(), out_w, err_w))
        except OSError as exc:
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            host_chan.close()
            child_chan.close()
            self.close()
            raise SandboxError(f"the sandbox worker is gone: {exc}") from exc
        child_chan.close()
        os.close(out_w)
        os.close(err_w)

        cap = self.limits.output_bytes
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
                    self.close()
                    raise SandboxError("the sandbox worker stopped responding and was restarted")
                watch = [self.sock, *open_fds]
                ready, _, _ = select.select(watch, [], [], 0.25)
                for fd in ready:
                    if fd is self.sock:
                        if not self.reader.feed():
                            self.close()
                            raise SandboxError("the sandbox worker died during the call")
                        frame = self.reader.pop()
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
                                elif op in ("emit", "engine", "sql", "warehouse"):
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
                            send_frame(self.sock, {"op": "kill"})
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
            error = _describe_exit(rc, stderr)
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


_FORGED = (
    "a frame on the result channel was not written by refgate's emit_result (unsigned, out of "
    "sequence or after the end of the run): the code wrote to the channel itself"
)


def _describe_exit(rc: int | None, stderr: str) -> str:
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


def _memory_bytes(mount: DatasetMount) -> int:
    return estimated_bytes(mount.path, mount.format)


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

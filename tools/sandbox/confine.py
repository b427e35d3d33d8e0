"""How a sandbox worker is confined: the bubblewrap command line (or the plain command of the
rlimits-only mode) and the environment it starts with.

What the bubblewrap sandbox sees: ``/usr`` (and the ``/bin``, ``/lib*`` links), the Python
installation(s) the project's interpreter needs (its venv and base prefix), the worker package,
each dataset file read-only at ``/workspace/datasets/<name>.<ext>``, a fresh ``/proc`` and
``/dev``, and a size-capped ``/tmp`` holding the per-call scratch dir. No network (its own empty
network namespace), its own PID/IPC/UTS namespaces, no inherited environment; ``/`` is
remounted read-only.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path

from refgate.tools.sandbox.errors import SandboxUnavailable
from refgate.tools.sandbox.limits import Limits
from refgate.tools.sandbox.mounts import SANDBOX_ROOT, DatasetMount, confined_source, sandbox_path

#: The worker package (standard library only; the sandbox binds this one folder of refgate).
WORKER_PACKAGE = Path(__file__).with_name("worker")
#: Sandbox modes: bubblewrap confinement, or the weaker rlimits-only process.
MODES = ("bwrap", "rlimits")


def _worker_argv(python: str, parent: str) -> list[str]:
    """Run the worker package found under ``parent`` (``-I``: no user site, no cwd on the path)."""
    boot = f"import sys; sys.path.insert(0, {parent!r}); from worker.template import main; main()"
    return [python, "-I", "-c", boot]


def find_bwrap() -> str | None:
    """The bubblewrap executable on PATH, or None."""
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
    # site folders a .pth file of the venv adds (a venv layered on another one's packages)
    candidates += [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
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


#: The whole environment of a worker (nothing is inherited): single-threaded numeric libraries.
THREAD_ENV = {
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


def command(mode: str, fd: int, datasets: Iterable[DatasetMount], limits: Limits) -> list[str]:
    """The command line of a worker whose control socket is ``fd``: bubblewrap (``mode="bwrap"``)
    or the bare interpreter (``"rlimits"``)."""
    python = sys.executable
    if mode == "rlimits":
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
    for key, value in THREAD_ENV.items():
        cmd += ["--setenv", key, value]
    cmd += ["--setenv", "REFGATE_SANDBOX_FD", str(fd)]
    cmd += _system_binds()
    # The scratch tmpfs first: binds that land under /tmp (a checkout or venv there) must be
    # mounted on top of it, not hidden by it.
    if _bwrap_supports(bwrap, "--size"):  # bubblewrap >= 0.8; older ones: FSIZE only
        cmd += ["--size", str(limits.scratch_mb << 20)]
    cmd += ["--tmpfs", "/tmp"]
    binds = [(root, root) for root in _python_roots()]
    binds.append((str(WORKER_PACKAGE), f"{SANDBOX_ROOT}/sandbox/worker"))
    binds += [(confined_source(m), sandbox_path(m)) for m in datasets if m.is_file]
    # bwrap creates missing parent dirs 0700; the unprivileged call must traverse them.
    for parent in _parents(dest for _, dest in binds):
        cmd += ["--perms", "0755", "--dir", parent]
    for src, dest in binds:
        cmd += ["--ro-bind", src, dest]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    cmd += ["--remount-ro", "/", "--chdir", "/tmp"]
    cmd += ["--", *_worker_argv(python, f"{SANDBOX_ROOT}/sandbox")]
    return cmd

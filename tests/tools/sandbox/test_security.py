"""The issue's security list, each for real through bubblewrap: contained, a clear error, and
the host untouched (checked from the host side, not only from inside)."""

import ast
import hashlib
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from refgate.tools.run_python import run_python
from refgate.tools.sandbox.host import Worker, get_worker, shutdown_pool
from refgate.tools.sandbox.limits import PRIVATE_UIDS
from tests.support.sandbox import SAMPLE, call_processes, needs_bwrap

pytestmark = needs_bwrap

REPO = Path(__file__).resolve().parents[3]


def _worker():
    return get_worker("bwrap", [])


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lines(result) -> dict[str, str]:
    out = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(": ")
        out[key] = value
    return out


def test_network_is_unreachable_including_host_loopback(settings):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    code = f"""
import socket
for name, addr in [("loopback", ("127.0.0.1", {port})), ("internet", ("1.1.1.1", 53))]:
    try:
        socket.create_connection(addr, timeout=2).close()
        print(name + ": CONNECTED")
    except OSError as exc:
        print(name + ": blocked " + type(exc).__name__)
try:
    socket.getaddrinfo("example.com", 443)
    print("dns: RESOLVED")
except OSError as exc:
    print("dns: blocked " + type(exc).__name__)
import os
print("interfaces: " + ",".join(sorted(os.listdir("/sys/class/net"))) if os.path.exists("/sys/class/net") else "interfaces: none visible")
"""
    try:
        result = run_python(code, settings=settings)
        assert result.ok, result.error
        seen = _lines(result)
        assert seen["loopback"].startswith("blocked")
        assert seen["internet"].startswith("blocked")
        assert seen["dns"].startswith("blocked")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the host's loopback listener
    finally:
        listener.close()


def test_files_outside_the_workspace_and_scratch_are_invisible(sample_ws, settings, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host-secret-canary")
    home = os.path.realpath(os.path.expanduser("~"))
    code = f"""
import os
def attempt(label, path):
    try:
        with open(path) as fh:
            print(label + ": READ " + fh.read(40).replace(chr(10), " "))
    except OSError as exc:
        print(label + ": denied " + type(exc).__name__)
attempt("shadow", "/etc/shadow")
attempt("passwd", "/etc/passwd")
attempt("tmpfile", {str(secret)!r})
attempt("repo", {str(REPO / "refgate" / "config.py")!r})
attempt("toml", {str(SAMPLE / "refgate.toml")!r})
attempt("bashrc", {home + "/.bashrc"!r})
attempt("dataset", "/workspace/datasets/macro.csv")
print("home: " + (",".join(sorted(os.listdir({home!r}))) if os.path.isdir({home!r}) else "absent"))
"""
    result = run_python(code, workspace=sample_ws, settings=settings)
    assert result.ok, result.error
    seen = _lines(result)
    for label in ("shadow", "passwd", "tmpfile", "repo", "toml", "bashrc"):
        assert seen[label].startswith("denied"), (label, seen[label])
    assert seen["dataset"].startswith('READ "year","quarter"')  # the one thing it may read
    # At most the path down to the Python installation is visible in the home folder.
    assert seen["home"] in ("absent", "", ".pyenv"), seen["home"]
    assert "host-secret-canary" not in result.stdout


def test_writes_outside_the_scratch_dir_fail_and_the_host_is_untouched(sample_ws, settings):
    dataset = sample_ws.datasets["macro"].path
    before = _sha(dataset)
    venv_target = Path(os.path.realpath(os.sys.prefix)) / "PWNED_BY_SANDBOX"
    code = f"""
import os
def attempt(label, path):
    try:
        with open(path, "w") as fh:
            fh.write("pwned")
        print(label + ": WROTE")
    except OSError as exc:
        print(label + ": denied " + type(exc).__name__)
attempt("root", "/pwned")
attempt("tmp", "/tmp/pwned")
attempt("shm", "/dev/shm/pwned")
attempt("dataset", "/workspace/datasets/macro.csv")
attempt("venv", {str(venv_target)!r})
attempt("scratch", "ok.txt")
print("scratch_dir: " + os.getcwd())
"""
    result = run_python(code, workspace=sample_ws, settings=settings)
    assert result.ok, result.error
    seen = _lines(result)
    for label in ("root", "tmp", "shm", "dataset", "venv"):
        assert seen[label].startswith("denied"), (label, seen[label])
    assert seen["scratch"] == "WROTE"
    assert seen["scratch_dir"].startswith("/tmp/call-")
    assert _sha(dataset) == before
    assert not venv_target.exists()
    assert not Path("/pwned").exists()


def test_environment_secrets_never_reach_the_sandbox(monkeypatch, settings):
    canary = "sk-canary-" + os.urandom(6).hex()
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", canary)
    shutdown_pool()  # the next worker starts with the secrets in the host's environment
    code = """
import os
print(sorted(os.environ.items()))
for pid in ("self", "1", "2"):
    try:
        print(pid, open(f"/proc/{pid}/environ", "rb").read())
    except OSError as exc:
        print(pid, "denied", type(exc).__name__)
"""
    try:
        result = run_python(code, settings=settings)
        assert result.ok, result.error
        assert canary not in result.stdout
        assert "OPENAI_API_KEY" not in result.stdout
        assert "AWS_SECRET" not in result.stdout
        assert "('HOME', '/tmp/call-" in result.stdout
    finally:
        shutdown_pool()


def test_shell_and_subprocess_escapes_are_contained(settings):
    marker = REPO / "PWNED_BY_SHELL"
    code = f"""
import os, subprocess, signal
r = subprocess.run("id -u; cat /etc/shadow; touch {marker}; echo done", shell=True,
                   capture_output=True, text=True)
print("shell: " + r.stdout.replace(chr(10), " ") + "| " + r.stderr.replace(chr(10), " "))
print("system: " + str(os.system("touch /pwned-by-system 2>/dev/null")))
try:
    os.kill(2, signal.SIGKILL)  # the warm template (pid 2 in the sandbox)
    print("kill_worker: KILLED")
except OSError as exc:
    print("kill_worker: denied " + type(exc).__name__)
try:
    os.setuid(0)
    print("setuid: ROOT")
except OSError as exc:
    print("setuid: denied " + type(exc).__name__)
"""
    result = run_python(code, settings=settings)
    assert result.ok, result.error
    seen = _lines(result)
    assert int(seen["shell"].split()[0]) in PRIVATE_UIDS  # ran, but as the unprivileged call uid
    assert "No such file" in seen["shell"] or "denied" in seen["shell"]
    # Read-only when the checkout sits on the read-only root; a checkout under /tmp sits inside
    # the private scratch tmpfs, where its folders belong to root: either way the touch fails.
    assert "Read-only file system" in seen["shell"] or (
        "cannot touch" in seen["shell"] and "Permission denied" in seen["shell"]
    )
    assert seen["system"] != "0"
    assert seen["kill_worker"].startswith("denied")
    assert seen["setuid"].startswith("denied")
    assert not marker.exists()
    assert not Path("/pwned-by-system").exists()
    assert run_python("print('still here')", settings=settings).stdout == "still here\n"


def test_ctypes_and_subclasses_tricks_are_contained(settings):
    marker = REPO / "PWNED_BY_CTYPES"
    code = f"""
import ctypes
libc = ctypes.CDLL(None)
print("ctypes_system: " + str(libc.system(b"touch {marker} 2>/dev/null")))
print("ctypes_setuid: " + str(libc.setuid(0)))
wrap = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"][0]
system = wrap.__init__.__globals__["system"]
print("subclasses_system: " + str(system("cat /etc/shadow > /dev/null 2>&1")))
"""
    result = run_python(code, settings=settings)
    assert result.ok, result.error
    seen = _lines(result)
    assert seen["ctypes_system"] != "0"
    assert seen["ctypes_setuid"] == "-1"
    assert seen["subclasses_system"] != "0"
    assert not marker.exists()

    crash = run_python("import ctypes\nctypes.string_at(0)", settings=settings)
    assert not crash.ok
    assert "SIGSEGV" in crash.error
    assert run_python("print(1)", settings=settings).ok  # the worker survived


def test_a_process_flood_hits_the_limit_and_is_cleaned_up(settings):
    worker = _worker()
    code = """
import os, time
children = []
try:
    while True:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    print("stopped: " + type(exc).__name__ + " after " + str(len(children)))
"""
    result = run_python(code, settings=settings, timeout=20)
    assert result.ok, result.error
    stopped = _lines(result)["stopped"]
    assert stopped.startswith("BlockingIOError after")
    assert int(stopped.rsplit(" ", 1)[1]) <= worker.limits.extra_processes + 16
    assert call_processes(worker) == []  # the sleeping children were killed with the call


_FLOOD_AFTER_PAUSE = """
import os, time
time.sleep(3.5)
children = []
try:
    while True:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    print("stopped: " + type(exc).__name__ + " after " + str(len(children)))
"""


def test_the_process_limit_holds_while_other_sandboxes_processes_come_and_go(settings):
    """Other sandboxes' processes that exit during a call do not widen its process limit (under
    one shared uid they did: the limit is set from the uid's process count when the call starts,
    so 40 processes exiting gave the flood 40 more)."""
    if os.geteuid() != 0:
        pytest.skip("calls keep the host's own uid when the host is not root")
    worker = _worker()
    other = Worker("bwrap")  # another sandbox: the uid its calls would run as (never started)
    assert other.uid != worker.uid
    sleepers = [
        subprocess.Popen(["sleep", "2"], user=other.uid, group=other.uid) for _ in range(40)
    ]
    # Reaped as they exit (a zombie still counts against the limit), while the call pauses.
    reapers = [threading.Thread(target=p.wait, daemon=True) for p in sleepers]
    for t in reapers:
        t.start()
    try:
        result = run_python(_FLOOD_AFTER_PAUSE, settings=settings, timeout=20)
    finally:
        for p in sleepers:
            p.kill()
        for t in reapers:
            t.join(5)
    assert result.ok, result.error
    stopped = _lines(result)["stopped"]
    assert stopped.startswith("BlockingIOError after")
    assert int(stopped.rsplit(" ", 1)[1]) <= worker.limits.extra_processes + 16
    assert call_processes(worker) == []


def test_a_fork_bomb_is_contained(settings):
    worker = _worker()
    result = run_python("import os\nwhile True:\n    os.fork()", settings=settings, timeout=3)
    assert not result.ok
    assert result.error  # BlockingIOError or the timeout, reported
    assert call_processes(worker) == []
    assert run_python("print('ok')", settings=settings).ok


def test_memory_bombs_raise_memory_error(settings):
    one_shot = run_python("x = bytearray(16 * 1024**3)", settings=settings)
    assert not one_shot.ok and "MemoryError" in one_shot.error
    growing = run_python(
        "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024**2))", settings=settings
    )
    assert not growing.ok and "MemoryError" in growing.error
    assert run_python("print(sum(range(10)))", settings=settings).stdout == "45\n"


def test_an_endless_loop_is_killed_at_the_wall_clock(settings):
    worker = _worker()
    t0 = time.monotonic()
    result = run_python("while True:\n    pass", settings=settings, timeout=1.5)
    elapsed = time.monotonic() - t0
    assert not result.ok and result.timed_out
    assert "timed out after 1.5 s" in result.error
    assert elapsed < 1.5 + 3.0
    assert result.refs[0].payload["timed_out"] is True
    assert call_processes(worker) == []


def test_a_process_escaping_the_session_is_still_killed(settings):
    worker = _worker()
    code = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(0.1)
    os._exit(0)
print("parent done")
"""
    result = run_python(code, settings=settings)
    assert result.ok and result.stdout == "parent done\n"
    assert call_processes(worker) == []


def test_huge_stdout_is_capped(settings):
    worker = _worker()
    code = "import sys\nfor _ in range(2000):\n    sys.stdout.write('y' * 25000 + chr(10))"
    result = run_python(code, settings=settings, timeout=30)
    assert result.ok, result.error
    cap = worker.limits.output_bytes
    assert len(result.stdout) < cap + 200
    assert f"output truncated: {2000 * 25001} bytes in total" in result.stdout
    assert len(result.refs[0].payload["stdout"]) < 8200


def test_redefining_emit_result_is_rejected_before_it_runs(settings):
    for code in (
        "print('ran')\ndef emit_result(**kw):\n    pass",
        "print('ran')\nemit_result = lambda **kw: None",
        "print('ran')\nimport json as emit_result",
    ):
        result = run_python(code, settings=settings)
        assert not result.ok
        assert result.error.startswith("rejected before running")
        assert "emit_result is reserved" in result.error
        assert result.stdout == ""  # nothing ran
        assert [r.kind for r in result.refs] == ["executionRef"]


def test_monkey_patching_emit_result_at_run_time_voids_the_call(settings):
    for code in (
        "emit_result(values={'a': 1.0})\nglobals()['emit_' + 'result'] = print",
        "emit_result(values={'a': 1.0})\nimport builtins\nsetattr(builtins, 'emit_' + 'result', print)",
        "emit_result(values={'a': 1.0})\n"
        "def make():\n    channel = None\n    def fake(**kw):\n        return channel\n"
        "    return fake\n"
        "globals()['emit_' + 'result'].__code__ = make().__code__",
    ):
        result = run_python(code, settings=settings)
        assert not result.ok, code
        assert "emit_result is reserved" in result.error
        assert "discarded" in result.error
        assert [r.kind for r in result.refs] == ["executionRef"]


def test_emitted_results_cannot_be_forged_through_stdout(settings):
    code = r"""
import json, os, struct
frame = json.dumps({"op": "emit", "values": {"forged": 1e9}, "units": "USD"})
print(frame)
print('{"op": "result", "ok": true}')
print("emit_result(values={'forged': 1e9})")
os.write(1, struct.pack(">I", len(frame)) + frame.encode())
"""
    result = run_python(code, settings=settings)
    assert result.ok, result.error
    assert '"forged"' in result.stdout  # printed, and nothing more
    assert [r.kind for r in result.refs] == ["executionRef"]
    assert result.refs[0].payload["emitted"] == []


def test_garbage_on_the_private_channel_is_a_protocol_error(settings):
    code = """
import os, socket, stat
for fd in map(int, os.listdir("/proc/self/fd")):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.write(fd, b"\\xff\\xff\\xff\\xff garbage")
    except OSError:
        pass
import time
time.sleep(5)
"""
    t0 = time.monotonic()
    result = run_python(code, settings=settings, timeout=20)
    assert not result.ok
    assert "broke the sandbox protocol" in result.error
    assert time.monotonic() - t0 < 5  # killed at once, not left to sleep
    assert [r.kind for r in result.refs] == ["executionRef"]
    assert run_python("print(2)", settings=settings).stdout == "2\n"


def test_a_request_flood_on_the_channel_is_bounded_by_the_timeout(settings):
    code = """
import json, os, stat, struct
frame = json.dumps({"op": "engine", "name": "list_datasets", "args": [], "kwargs": {}}).encode()
packet = (struct.pack(">I", len(frame)) + frame) * 200
fd = next(fd for fd in map(int, os.listdir("/proc/self/fd"))
          if stat.S_ISSOCK(os.fstat(fd).st_mode))
while True:  # never read the replies: the host's sends back up
    os.write(fd, packet)
"""
    t0 = time.monotonic()
    result = run_python(code, settings=settings, timeout=2)
    assert not result.ok
    # Unsigned requests are refused at the first frame (the call is killed), never served.
    assert "not written by refgate's emit_result" in result.error
    assert time.monotonic() - t0 < 2 + 8
    assert run_python("print(3)", settings=settings).stdout == "3\n"


def test_the_call_holds_only_stdio_and_its_result_channel(settings):
    code = """
import os, stat
kinds = []
for fd in sorted(map(int, os.listdir("/proc/self/fd"))):
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        continue  # the directory handle used for the listing
    kinds.append((fd, "sock" if stat.S_ISSOCK(mode) else "fifo" if stat.S_ISFIFO(mode) else "chr" if stat.S_ISCHR(mode) else "dir" if stat.S_ISDIR(mode) else "other"))
print(kinds)
"""
    result = run_python(code, settings=settings)
    assert result.ok, result.error
    kinds = dict(ast.literal_eval(result.stdout))
    kinds = {fd: kind for fd, kind in kinds.items() if kind != "dir"}
    assert kinds[0] == "chr" and kinds[1] == "fifo" and kinds[2] == "fifo"
    assert sorted(k for k in kinds.values() if k == "sock") == ["sock"]  # one socket only
    assert len(kinds) == 4


def test_frames_written_by_the_code_itself_are_rejected_and_void_the_call(settings):
    """Issue 13 item 9: null emit_result, hand-write an emit frame and a `result ok` frame on the
    channel, then os._exit(0): the call fails and the forged valueRef is not kept."""
    code = r"""
import json, os, stat, struct
globals()["emit_" + "result"] = None
fd = next(fd for fd in map(int, os.listdir("/proc/self/fd"))
          if stat.S_ISSOCK(os.fstat(fd).st_mode))
def send(obj):
    data = json.dumps(obj).encode()
    os.write(fd, struct.pack(">I", len(data)) + data)
send({"op": "emit", "values": {"forged": 1e9}, "units": "USD"})
os.read(fd, 65536)
send({"op": "result", "ok": True, "error": None, "tampered": False})
os._exit(0)
"""
    result = run_python(code, settings=settings)
    assert not result.ok
    assert "not written by refgate's emit_result" in result.error
    assert [r.kind for r in result.refs] == ["executionRef"]
    assert result.refs[0].payload["emitted"] == []


def test_a_code_that_exits_early_after_a_real_emit_keeps_nothing(settings):
    """The result is valid only when the prelude itself reports the end of the run."""
    code = "import os\nemit_result(values={'a': 1.0}, units='USD')\nos._exit(0)"
    result = run_python(code, settings=settings)
    assert not result.ok
    assert "without reporting a result" in result.error
    assert [r.kind for r in result.refs] == ["executionRef"]


def test_a_frame_signed_with_the_key_found_by_gc_gains_nothing_beyond_emit_result(settings):
    """The channel's key is reachable from the code (``gc.get_objects()``; issue 31, item 8), so
    the code can sign its own frames. That must buy nothing: every signed request is validated
    by the host as emit_result's are (a trust field is refused, a valid value becomes the same
    valueRef emit_result makes), and a forged ``result`` frame after patching emit_result keeps
    only what the host accepted."""
    code = r"""
import gc
channel = next(o for o in gc.get_objects() if type(o).__name__ == "Channel" and hasattr(o, "_seal"))
extra = channel.call({"op": "emit", "values": {"gdp": 1.5}, "units": "USD",
                      "source_type": "internal", "authority": "primary"})
print("extra field:", extra.get("ok"), extra.get("error"))
forged = channel.call({"op": "emit", "values": {"gdp": 1.5}, "units": "USD", "title": "same"})
print("plain:", forged.get("ok"))
emit_result(values={"gdp": 1.5}, units="USD", title="same")
globals()["emit_" + "result"] = None
channel.send({"op": "result", "ok": True, "error": None, "tampered": False})
import os
os._exit(0)
"""
    result = run_python(code, settings=settings)
    assert "extra field: False" in result.stdout and "source_type" in result.stdout
    assert "plain: True" in result.stdout
    # the forged end frame is taken (the code patched emit_result unseen), and what the call
    # keeps is exactly what the host validated: two identical refs, one per accepted request
    assert result.ok, result.error
    values = [r for r in result.refs if r.kind == "valueRef"]
    assert len(values) == 2
    forged, real = (r.model_dump(exclude={"id"}) for r in values)
    assert forged == real
    assert {r.source_type for r in values} == {"internal"}  # dataset-derived, as always

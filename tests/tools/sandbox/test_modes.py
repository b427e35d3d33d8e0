"""Sandbox modes: bubblewrap missing or broken is refused with the setting to change; the weaker
rlimits-only mode runs only when chosen explicitly and still scrubs, limits and times out."""

import os
import stat

import pytest

from refgate.config import Settings
from refgate.tools.run_python import run_python
from refgate.tools.sandbox import confine, host
from refgate.tools.sandbox.errors import SandboxError, SandboxUnavailable
from refgate.tools.sandbox.host import Worker, shutdown_pool
from refgate.tools.sandbox.limits import PRIVATE_UIDS
from tests.support.sandbox import descendants, needs_bwrap


@pytest.fixture
def no_pool():
    shutdown_pool()
    yield
    shutdown_pool()


def test_missing_bwrap_is_refused_with_the_weaker_setting_named(monkeypatch, no_pool):
    monkeypatch.setattr(confine, "find_bwrap", lambda: None)
    result = run_python("print('should not run')", settings=Settings(sandbox="bwrap"))
    assert not result.ok
    assert "bubblewrap (bwrap) is not installed" in result.error
    assert "REFGATE_SANDBOX=rlimits" in result.error
    assert result.stdout == ""
    exe = result.refs[0]
    assert exe.kind == "executionRef" and exe.payload["ok"] is False


def test_a_broken_bwrap_reports_its_own_message(monkeypatch, tmp_path, no_pool):
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(confine, "find_bwrap", lambda: str(fake))
    with pytest.raises(SandboxUnavailable) as err:
        Worker("bwrap").start(timeout=10)
    message = str(err.value)
    assert "No permissions to creating new namespace" in message
    assert "REFGATE_SANDBOX=rlimits" in message


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(SandboxError, match="unknown sandbox mode 'docker'"):
        Worker("docker")


def test_rlimits_mode_runs_when_chosen_in_the_environment(monkeypatch, sample_ws, no_pool):
    canary = "sk-canary-" + os.urandom(4).hex()
    monkeypatch.setenv("REFGATE_SANDBOX", "rlimits")
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    code = """
import os
print(os.getcwd().split("/")[-1].startswith("call-"), sorted(os.environ))
emit_result(values={"unemp": datasets["macro"].unemp.iloc[-1]}, sources=["macro"])
"""
    result = run_python(code, workspace=sample_ws)
    assert result.ok, result.error
    assert result.refs[0].payload["sandbox"] == "rlimits"
    assert result.stdout.startswith("True ")
    assert canary not in result.stdout and "OPENAI_API_KEY" not in result.stdout
    value = result.refs[1]
    assert value.payload["values"] == {"unemp": 9.6}
    assert value.payload["units"] == {"unemp": "%"}


def test_rlimits_mode_still_times_out_and_limits_memory(no_pool):
    settings = Settings(sandbox="rlimits")
    loop = run_python("while True:\n    pass", settings=settings, timeout=1.0)
    assert not loop.ok and loop.timed_out
    bomb = run_python("x = bytearray(16 * 1024**3)", settings=settings)
    assert not bomb.ok and "MemoryError" in bomb.error
    if os.geteuid() == 0:  # as root the call still drops to an unprivileged uid
        who = run_python("import os\nprint(os.getuid())", settings=settings)
        assert int(who.stdout) in PRIVATE_UIDS  # a uid of its own, not root nor nobody


@needs_bwrap
def test_bwrap_is_the_default_mode(monkeypatch, no_pool):
    monkeypatch.delenv("REFGATE_SANDBOX", raising=False)
    result = run_python("print(open('/proc/1/cmdline','rb').read().split(b'\\0')[0])")
    assert result.ok, result.error
    assert result.refs[0].payload["sandbox"] == "bwrap"
    assert "bwrap" in result.stdout  # pid 1 of the call's PID namespace is bubblewrap


@needs_bwrap
def test_prewarm_starts_the_worker_in_the_background(sample_ws, no_pool):
    import time

    from refgate.tools.run_python import _mounts, prewarm

    settings = Settings(sandbox="bwrap")
    prewarm(sample_ws, settings).join(60)
    worker = host.get_worker("bwrap", _mounts(sample_ws))  # already running: returned at once
    assert worker.alive and worker.calls == 0
    t0 = time.perf_counter()
    result = run_python("print(len(datasets))", workspace=sample_ws, settings=settings)
    assert result.ok and result.stdout == "5\n", result.error
    assert worker.calls == 1  # the call used the prewarmed worker
    assert time.perf_counter() - t0 < 5


@needs_bwrap
def test_the_sandbox_goes_away_when_the_host_process_dies():
    import subprocess
    import sys
    import time

    script = (
        "import time\n"
        "from refgate.config import Settings\n"
        "from refgate.tools.run_python import run_python\n"
        "from refgate.tools.sandbox.host import _POOL\n"
        "assert run_python('print(1)', settings=Settings(sandbox='bwrap')).ok\n"
        "print(next(iter(_POOL.values())).proc.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    host_proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        bwrap_pid = int(host_proc.stdout.readline())
        tree = [bwrap_pid, *descendants(bwrap_pid)]
        assert len(tree) >= 2  # bubblewrap and the template under it
    finally:
        host_proc.kill()
        host_proc.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(p) for p in tree):
        time.sleep(0.1)
    assert not any(_alive(p) for p in tree)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_rlimits_mode_kills_processes_that_escape_the_session(no_pool):
    from tests.support.sandbox import call_processes

    settings = Settings(sandbox="rlimits")
    code = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
print("parent done")
"""
    result = run_python(code, settings=settings)
    assert result.ok and result.stdout == "parent done\n"
    worker = host.get_worker("rlimits", [])
    assert call_processes(worker) == []

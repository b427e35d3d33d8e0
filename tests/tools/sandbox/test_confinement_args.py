"""The sandbox's confinement, read off bubblewrap's command line (not only through the second
guard inside the worker): a cleared environment, nothing bound writable, the network, pids and
the rest unshared, and the whole tree remounted read-only."""

from __future__ import annotations

import shutil

import pytest

from refgate.tools.sandbox import confine
from refgate.tools.sandbox.limits import Limits
from refgate.tools.sandbox.mounts import DatasetMount
from tests.support.sandbox import SAMPLE

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def _cmd() -> list[str]:
    data = DatasetMount("macro", SAMPLE / "data" / "statsmodels_macrodata.csv")
    return confine.command("bwrap", 3, (data,), Limits())


def test_the_environment_is_cleared_before_anything_is_set():
    cmd = _cmd()
    assert "--clearenv" in cmd
    clear = cmd.index("--clearenv")
    sets = [i for i, a in enumerate(cmd) if a == "--setenv"]
    assert sets and min(sets) > clear
    names = {cmd[i + 1] for i in sets}
    assert names == {*confine.THREAD_ENV, "REFGATE_SANDBOX_FD"}


def test_every_host_path_is_bound_read_only_and_the_tree_remounted_read_only():
    cmd = _cmd()
    writable = {"--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--bind-fd"}
    assert not writable & set(cmd)
    binds = [(cmd[i + 1], cmd[i + 2]) for i, a in enumerate(cmd) if a == "--ro-bind"]
    sources = {src for src, _ in binds}
    assert "/usr" in sources
    assert str(SAMPLE / "data" / "statsmodels_macrodata.csv") in sources
    assert cmd[cmd.index("--remount-ro") : cmd.index("--remount-ro") + 2] == ["--remount-ro", "/"]
    # the only writable place is the scratch tmpfs
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--tmpfs"] == ["/tmp"]


def test_network_pids_ipc_and_host_name_are_unshared():
    cmd = _cmd()
    for flag in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"):
        assert flag in cmd
    assert cmd.index("--") > cmd.index("--remount-ro")

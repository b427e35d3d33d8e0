"""The scratch tmpfs must not hide a Python installation or checkout that lives under /tmp."""

import shutil

import pytest

from refgate.tools.sandbox import confine
from refgate.tools.sandbox.limits import Limits


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_binds_under_tmp_are_mounted_after_the_scratch_tmpfs(monkeypatch):
    monkeypatch.setattr(confine, "_python_roots", lambda: ["/tmp/ci-checkout/.venv", "/usr"])
    cmd = confine.command("bwrap", 3, (), Limits())
    tmpfs = max(i for i, a in enumerate(cmd) if a == "--tmpfs" and cmd[i + 1] == "/tmp")
    venv_bind = next(
        i for i, a in enumerate(cmd) if a == "--ro-bind" and cmd[i + 2] == "/tmp/ci-checkout/.venv"
    )
    assert tmpfs < venv_bind
    parent_dir = next(
        i for i, a in enumerate(cmd) if a == "--dir" and cmd[i + 1] == "/tmp/ci-checkout"
    )
    assert tmpfs < parent_dir

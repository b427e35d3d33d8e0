"""The template's state, set once by ``init`` and inherited by every call it forks."""

from __future__ import annotations

from typing import Any, TypedDict


class WorkerConfig(TypedDict, total=False):
    """The host's ``init`` frame (``SandboxWorker._init_frame``)."""

    op: str
    #: The unprivileged uid and gid each call drops to (None: bubblewrap already confines it).
    uid: int | None
    gid: int
    #: The calls run in their own pid namespace (bubblewrap).
    pidns: bool
    eager_imports: list[str]
    #: Where each call's scratch folder is made.
    scratch_base: str | None
    #: Per dataset name, how to read it (``refgate.tools.sandbox.mounts.dataset_entry``).
    datasets: dict[str, dict[str, object]]


class State:
    """The template's state, set once by ``init``."""

    config: WorkerConfig = {}
    #: Per dataset read at ``init``: its DataFrame, or the error reading it raised.
    frames: dict[str, object] = {}
    #: pandas and numpy, imported by ``init`` (never on the host).
    pd: Any = None
    np: Any = None

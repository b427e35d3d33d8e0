"""How a CLI run stops on Ctrl-C (SIGINT) and SIGTERM (``docker stop``, a job scheduler, ``kill``).

The run unwinds normally (``KeyboardInterrupt``; ``SystemExit(143)`` for SIGTERM), so the
graph's databases are closed and the command that resumes the run is printed. Two things could keep it waiting: the embedded model server
evaluating a prompt (it finishes the request before it stops), and LangGraph, which waits for the
calls in flight before it lets the exception through (a remote model's reply can take minutes).
So the handler ends the embedded model servers at once (their calls fail, the unwinding goes
on), and if the process is still running ``STOP_GRACE_S`` later it says so and exits. Nothing
finished is lost: each completed pass is in the thread's checkpoint, and ``--thread`` resumes.
A second signal exits at once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

#: The embedded model's module; when no run imported it, no server of it is running.
_LOCAL_LLM = "refgate.api.local_llm"

#: Seconds the unwinding may take after SIGTERM before the process exits anyway (under
#: ``docker stop``'s default 10 s, so the message is seen).
STOP_GRACE_S = 5.0

_stopping = threading.Event()
#: What the user runs to resume the stopped run (set once the run has a thread).
_resume_command = "the same command with --thread THREAD"


def say_on_stop(resume_command: str) -> None:
    """The command that resumes this run, named if the run must exit before it unwinds."""
    global _resume_command
    _resume_command = resume_command


def _exit_after_grace(code: int, name: str) -> None:
    sys.stderr.write(
        f"refgate: stopped by {name}; a call in flight did not end within {STOP_GRACE_S:.0f} s."
        " Completed passes are kept in the thread's checkpoint; resume with: "
        + _resume_command
        + "\n"
    )
    sys.stderr.flush()
    os._exit(code)


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    code = 128 + signum
    if _stopping.is_set():
        os._exit(code)
    _stopping.set()
    local_llm = sys.modules.get(_LOCAL_LLM)
    if local_llm is not None:
        local_llm.stop_running_servers()
    name = signal.Signals(signum).name
    timer = threading.Timer(STOP_GRACE_S, _exit_after_grace, args=(code, name))
    timer.daemon = True
    timer.start()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(code)


def stop_on_signals() -> None:
    """Install the SIGINT and SIGTERM handlers for a CLI run (main thread only)."""
    signal.signal(signal.SIGINT, _on_stop_signal)
    signal.signal(signal.SIGTERM, _on_stop_signal)

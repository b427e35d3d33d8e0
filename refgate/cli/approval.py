"""The CLI's answer to an outbound approval (boundary B3): ask the person at the terminal.

``terminal_approver(timeout_s)`` returns the ``approve`` callback ``refgate.api.public.ask`` takes. It
shows what would be sent and where, then waits up to ``timeout_s`` for a line on stdin: "y" or
"yes" approves; anything else, end of input, or no answer in time refuses.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING

from refgate.cli.common import err_console, esc

if TYPE_CHECKING:
    from refgate.provenance.boundaries import ApprovalAnswer, ApprovalRequest

#: Characters of the answer shown in the prompt.
PREVIEW_CHARS = 400


def _read_line(stream: IO[str], out: queue.Queue) -> None:
    try:
        out.put(stream.readline())
    except (OSError, ValueError):  # closed or unreadable stdin: no answer
        out.put("")


def ask_line(stream: IO[str], timeout_s: float) -> str | None:
    """One line from ``stream``, or None when none arrives within ``timeout_s`` seconds."""
    box: queue.Queue = queue.Queue(maxsize=1)
    threading.Thread(target=_read_line, args=(stream, box), daemon=True).start()
    try:
        return box.get(timeout=timeout_s)
    except queue.Empty:
        return None


def terminal_approver(
    timeout_s: float, stream: IO[str] | None = None
) -> Callable[[ApprovalRequest], ApprovalAnswer]:
    """An approver prompting on stderr and reading stdin (``stream``), ``timeout_s`` at most."""

    def approve(request: ApprovalRequest) -> ApprovalAnswer:
        args = request.get("args") or {}
        raw_report = args.get("report")
        report: Mapping[str, object] = raw_report if isinstance(raw_report, dict) else {}
        # what is sent: the report's answer (PostReport), else the call's arguments (McpCall)
        shown = str(report.get("answer") or "") if report else json.dumps(args, default=str)
        preview = shown if len(shown) <= PREVIEW_CHARS else shown[: PREVIEW_CHARS - 1] + "…"
        err_console.print(
            f"\n[bold]approval needed[/bold]: {esc(request.get('approve_outbound') or 'a tool')} "
            f"sends data out of this machine to {esc(request.get('to') or 'an outside address')}"
        )
        if request.get("reason"):
            err_console.print(f"[dim]{esc(request['reason'])}[/dim]")
        if preview:
            err_console.print(f"[dim]{esc(preview)}[/dim]")
        err_console.print(f"Send it? [y/N] (no answer in {timeout_s:g} s refuses) ", end="")
        line = ask_line(stream or sys.stdin, timeout_s)
        if line is None:
            err_console.print("\nno answer in time: not sent")
            return {"approved": False, "reason": "timeout"}
        if line.strip().lower() in ("y", "yes"):
            return {"approved": True}
        err_console.print("not sent")
        return {"approved": False, "reason": "rejected"}

    return approve

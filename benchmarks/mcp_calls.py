"""What one McpCall costs, and that its bounds hold (issue 32).

WORK reaches a workspace's MCP server through the official SDK (``tools/mcp_client.py``). This
prints, side by side in one run:

- a pass of ``--calls`` calls over **stdio** with the server started for each call (one session
  per call: start, list the tools, call one, close), over **stdio kept for the pass** (WORK's
  way: ``McpSessions`` starts the server on the first call and stops it at the pass's end), and
  over **streamable HTTP** (the server already up): the pass's wall seconds and CPU seconds of
  refgate and of the started servers (children, counted once they are stopped), and the median
  call;
- the **bounds**: a tool that sleeps past ``timeout_s`` returns an error after how long; a
  tool returning ``--big`` characters comes back cut at ``max_result_chars``.

The server is the small one written below (the official SDK), so the figure is the SDK's and
Python's start-up plus refgate's session, not a real server's work.

Run: ``nice -n 10 python benchmarks/mcp_calls.py [--calls 5] [--big 5000000]``.
"""

from __future__ import annotations

import argparse
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from refgate.mcp_servers import McpServerSpec
from refgate.tools.mcp_client import McpServerError, McpSessions, call_tool

SERVER = '''
import sys, time
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
server = MCPServer("bench")
RO = ToolAnnotations(read_only_hint=True)

@server.tool(annotations=RO)
def rate(currency: str) -> str:
    """A rate."""
    return f"USD/{currency} 1.0842"

@server.tool(annotations=RO)
def slow(seconds: float) -> str:
    """Sleep."""
    time.sleep(seconds)
    return "late"

@server.tool(annotations=RO)
def big(n: int) -> str:
    """n characters."""
    return "x" * n

if len(sys.argv) > 2:
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run("stdio")
'''


def _cpu() -> tuple[float, float]:
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _timed(
    spec: McpServerSpec, tool: str, args: dict, cwd: Path, sessions: McpSessions | None = None
) -> tuple[float, float, float, str]:
    cpu0, kids0 = _cpu()
    t0 = time.perf_counter()
    try:
        _, out = call_tool(spec, tool, args, allow=lambda t: None, cwd=cwd, sessions=sessions)
        result = f"{len(out.text)} chars" + (" (cut)" if out.cut else "")
    except McpServerError as exc:
        result = f"error: {str(exc)[:70]}"
    wall = time.perf_counter() - t0
    cpu1, kids1 = _cpu()
    return wall, cpu1 - cpu0, kids1 - kids0, result


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--big", type=int, default=5_000_000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = folder / "bench_server.py"
        script.write_text(SERVER, encoding="utf-8")
        stdio = McpServerSpec("bench", command=(sys.executable, str(script)), start_timeout_s=120)
        port = _free_port()
        proc = subprocess.Popen([sys.executable, str(script), "http", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.2)
            http = McpServerSpec("bench", url=f"http://127.0.0.1:{port}/mcp")
            print(f"a pass of {opts.calls} calls")
            print(
                f"{'transport':<18} {'pass wall s':>11} {'cpu s':>7} {'server cpu s':>13}"
                f" {'median call wall s':>19}"
            )
            for name, spec, keep in (
                ("stdio, per call", stdio, False),
                ("stdio, kept", stdio, True),
                ("http", http, False),
            ):
                cpu0, kids0 = _cpu()
                t0 = time.perf_counter()
                with McpSessions() as sessions:
                    kept = sessions if keep else None
                    runs = [
                        _timed(spec, "rate", {"currency": "EUR"}, folder, kept)
                        for _ in range(opts.calls)
                    ]
                wall = time.perf_counter() - t0
                cpu1, kids1 = _cpu()
                call = statistics.median(r[0] for r in runs)
                print(
                    f"{name:<18} {wall:>11.2f} {cpu1 - cpu0:>7.2f} {kids1 - kids0:>13.2f}"
                    f" {call:>19.2f}"
                )
            print("\nbounds (http server)")
            tight = McpServerSpec("bench", url=http.url, timeout_s=1)
            wall, _, _, result = _timed(tight, "slow", {"seconds": 30}, folder)
            print(f"  slow(30 s) with timeout_s=1: returned after {wall:.2f} s: {result}")
            capped = McpServerSpec("bench", url=http.url, timeout_s=60, max_result_chars=20_000)
            wall, _, _, result = _timed(capped, "big", {"n": opts.big}, folder)
            print(f"  big({opts.big:,}) with max_result_chars=20000: {wall:.2f} s, {result}")
        finally:
            proc.terminate()  # the slow call may still sleep in it: kill after a grace
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


if __name__ == "__main__":
    main()

"""Talk to a workspace's MCP server (``refgate.mcp_servers``) with the official SDK's client.

A call lists the server's tools and calls one. Without ``sessions`` it is one session of its
own: start the command (stdio) or connect to the URL (streamable HTTP), list, call, close. With
``McpSessions`` (WORK's pass, ``refgate.tools.mcp_call.pass_sessions``) a stdio server is
started on its first call and kept until the pass ends; a call that times out or breaks the
protocol stops it, and the next call starts it again. Either way a server that hangs or dies
costs one call, never the run. Each request is bounded by the server's ``timeout_s``, a start
by ``start_timeout_s``, the text returned by ``max_result_chars``. A stdio server gets the
SDK's minimal environment plus the workspace's ``env``, runs in the workspace folder inside
bubblewrap (``refgate.tools.sandbox.servers``; ``sandbox="rlimits"`` starts it unconfined), and
its stderr goes to ``<workspace>/.refgate/mcp/<name>.log`` (never to the model: the server's
text). Whether the workspace is trusted to start it at all is the caller's check
(``refgate.trust``, ``McpCall``).

Every failure is an ``McpServerError`` whose message says what happened and what to check.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT, CallToolResult, ListToolsResult

from refgate.closing import Closing
from refgate.errors import RefgateError
from refgate.mcp_servers import TOOL_NAME, McpServerSpec
from refgate.payloads import JsonDict
from refgate.tools.sandbox.errors import SandboxUnavailable
from refgate.tools.sandbox.servers import server_argv

T = TypeVar("T")


class McpServerError(RefgateError, RuntimeError):
    """The MCP server could not be reached, did not answer in time, or broke the protocol."""


class McpToolHeld(McpServerError):
    """``allow`` held the call back before anything was sent (``tool`` says what it is)."""

    def __init__(self, tool: McpTool, reason: str) -> None:
        super().__init__(reason)
        self.tool = tool


@dataclass(frozen=True)
class McpTool:
    """A tool a server lists, with what refgate decides about it."""

    name: str
    description: str
    input_schema: JsonDict
    #: Read-only by the server's annotations, within the workspace's ``read_only_tools``.
    read_only: bool
    #: Why (shown to the person approving and in the listing).
    why: str


@dataclass
class McpOutput:
    """One tool call's result: its text (bounded), whether the tool said it failed."""

    text: str
    is_error: bool
    cut: bool = False
    kinds: list[str] = field(default_factory=list)


def judge(spec: McpServerSpec, name: str, annotations: object) -> tuple[bool, str]:
    """(read-only?, why): the server's ``readOnlyHint: true`` without ``destructiveHint:
    true``, and, when the workspace gives ``read_only_tools``, listed there too. The workspace's
    list only narrows: a tool it lists that the server does not annotate read-only stays
    write-like (a downloaded workspace cannot wave a write past the person)."""
    read_only = getattr(annotations, "read_only_hint", None) is True
    destructive = getattr(annotations, "destructive_hint", None) is True
    if read_only and destructive:
        return False, "the server annotates it both readOnlyHint and destructiveHint"
    if not read_only:
        listed = (
            " (read_only_tools cannot make it read-only)" if name in spec.read_only_tools else ""
        )
        return False, f"the server does not annotate it readOnlyHint{listed}"
    if spec.read_only_tools and name not in spec.read_only_tools:
        return False, "not listed in the workspace's read_only_tools"
    return True, "the server annotates it readOnlyHint"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _explain(spec: McpServerSpec, exc: BaseException, log: Path | None) -> str:
    where = f"command {' '.join(spec.command)!r}" if spec.command else f"URL {spec.url}"
    tail = f"; its stderr is in {log}" if log is not None else ""
    exc = _leaf(exc)
    if isinstance(exc, TimeoutError) or (isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT):
        return (
            f"MCP server {spec.name!r} ({where}) did not answer within {spec.timeout_s:g} s "
            f"(timeout_s in [mcp.servers.{spec.name}]; start_timeout_s bounds its start){tail}"
        )
    if isinstance(exc, FileNotFoundError | PermissionError) and spec.command:
        return (
            f"MCP server {spec.name!r} could not start: {type(exc).__name__}: {exc} "
            f"(check command in [mcp.servers.{spec.name}])"
        )
    if isinstance(exc, MCPError):
        if "closed" in exc.message.lower():
            return f"MCP server {spec.name!r} ({where}) closed the connection (it exited?){tail}"
        return f"MCP server {spec.name!r} answered with an error: {exc.message[:300]}"
    if isinstance(exc, OSError | ConnectionError) or type(exc).__module__.startswith("httpx"):
        return (
            f"MCP server {spec.name!r} ({where}) could not be reached: {type(exc).__name__}{tail}"
        )
    return (
        f"MCP server {spec.name!r} ({where}) failed: {type(exc).__name__}: {str(exc)[:300]}{tail}"
    )


def _run(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code (a worker thread when a loop already runs
    here: an async app calling ``refgate.ask``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())  # type: ignore[arg-type]
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()  # type: ignore[arg-type]


@contextlib.contextmanager
def _stderr_log(log: Path | None):
    if log is None:
        with open(os.devnull, "w", encoding="utf-8") as sink:
            yield sink
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8", errors="replace") as sink:
        yield sink


#: How stdio servers start: confined by bubblewrap (``refgate.tools.sandbox.servers``), or as
#: is under the explicitly weaker ``rlimits`` sandbox mode.
SANDBOXED, UNCONFINED = "bwrap", "rlimits"


def _client(spec: McpServerSpec, cwd: Path | None, errlog: TextIO, sandbox: str) -> Client:
    if spec.url:
        return Client(spec.url, read_timeout_seconds=spec.timeout_s, cache=None)
    argv = list(spec.command)
    if sandbox != UNCONFINED:
        root = cwd or Path.cwd()
        argv = server_argv(
            argv,
            cwd=root,
            env=dict(spec.env),
            network=spec.network,
            state=root / ".refgate" / "mcp" / spec.name,
        )
    params = StdioServerParameters(
        command=argv[0],
        args=argv[1:],
        env=dict(spec.env),
        cwd=str(cwd) if cwd is not None else None,
    )
    return Client(
        stdio_client(params, errlog=errlog), read_timeout_seconds=spec.timeout_s, cache=None
    )


def _tools(spec: McpServerSpec, listed: ListToolsResult) -> dict[str, McpTool]:
    out: dict[str, McpTool] = {}
    for tool in listed.tools:
        name = str(tool.name)
        if not TOOL_NAME.match(name) or (spec.tools and name not in spec.tools):
            continue
        read_only, why = judge(spec, name, tool.annotations)
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        out[name] = McpTool(name, str(tool.description or ""), schema, read_only, why)
    return out


def _block_text(block: object, kind: str) -> str:
    """A content block as the model reads it: its text, a text resource's, else a placeholder."""
    resource = getattr(block, "resource", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "resource" and hasattr(resource, "text"):
        return str(getattr(resource, "text", ""))
    return f"[{kind} content not shown]"


def _output(result: CallToolResult, limit: int) -> McpOutput:
    parts: list[str] = []
    kinds: list[str] = []
    for block in result.content or []:
        kind = str(getattr(block, "type", "") or type(block).__name__)
        kinds.append(kind)
        parts.append(_block_text(block, kind))
    if result.structured_content is not None and not any(k == "text" for k in kinds):
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(parts)
    cut = len(text) > limit
    if cut:
        text = text[:limit]
    return McpOutput(text=text, is_error=bool(result.is_error), cut=cut, kinds=kinds)


def _server_error(spec: McpServerSpec, exc: BaseException, log: Path | None) -> McpServerError:
    """Every transport, spawn and protocol failure as one clear error (refgate's own kept)."""
    leaf = _leaf(exc)
    if isinstance(leaf, McpServerError):
        return leaf
    if isinstance(leaf, SandboxUnavailable):
        return McpServerError(str(leaf))
    return McpServerError(_explain(spec, exc, log if spec.command else None))


def _session(
    spec: McpServerSpec,
    work: Callable[[Client], Awaitable[T]],
    *,
    cwd: Path | None,
    log: Path | None,
    sessions: McpSessions | None = None,
    sandbox: str = SANDBOXED,
) -> T:
    if sessions is not None and spec.command:
        return sessions.run(spec, work, cwd=cwd, log=log, sandbox=sandbox)

    async def main() -> T:
        with _stderr_log(log) as errlog:
            with anyio.fail_after(spec.start_timeout_s + spec.timeout_s):
                async with _client(spec, cwd, errlog, sandbox) as client:
                    return await work(client)

    try:
        return _run(main)
    except Exception as exc:
        raise _server_error(spec, exc, log) from None


_Job = tuple[Callable[[Client], Awaitable[object]], "asyncio.Future[Any]"]


class _Kept:
    """One started stdio server and its SDK session, served by one task (the SDK's task
    group and cancel scopes are entered and left there): jobs run one at a time, each bounded
    by ``timeout_s``; any failure but refgate's own verdicts closes the session."""

    def __init__(
        self, spec: McpServerSpec, cwd: Path | None, log: Path | None, sandbox: str
    ) -> None:
        self.spec, self.cwd, self.log, self.sandbox = spec, cwd, log, sandbox
        #: (work, its future); None ends the session
        self.jobs: asyncio.Queue[_Job | None] = asyncio.Queue()
        self.started = asyncio.Event()
        #: A job failed and the session is closing: the next call starts the server again.
        self.closing = False
        self.task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        current: asyncio.Future[Any] | None = None
        try:
            with _stderr_log(self.log) as errlog:
                async with _client(self.spec, self.cwd, errlog, self.sandbox) as client:
                    self.started.set()
                    while (job := await self.jobs.get()) is not None:
                        work, current = job
                        try:
                            with anyio.fail_after(self.spec.timeout_s):
                                result = await work(client)
                        except McpServerError as exc:  # held back, no such tool: session fine
                            current.set_exception(exc)
                            continue
                        except Exception as exc:  # timed out, broke: the server goes
                            self.closing = True
                            current.set_exception(exc)
                            return
                        current.set_result(result)
        except BaseException as exc:
            self.closing = True
            closed = exc if isinstance(exc, Exception) else McpServerError("session closed")
            for fut in [current, *self._queued()]:
                if fut is not None and not fut.done():
                    fut.set_exception(closed)
            if not isinstance(exc, Exception):
                raise

    def _queued(self) -> list[asyncio.Future[Any]]:
        out = []
        while not self.jobs.empty():
            job = self.jobs.get_nowait()
            if job is not None:
                out.append(job[1])
        return out

    async def submit(self, work: Callable[[Client], Awaitable[T]]) -> T:
        fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self.jobs.put_nowait((work, fut))
        if not self.started.is_set():
            waiter = asyncio.ensure_future(self.started.wait())
            await asyncio.wait(
                {waiter, self.task},
                timeout=self.spec.start_timeout_s,
                return_when="FIRST_COMPLETED",
            )
            waiter.cancel()
            if not self.started.is_set() and not self.task.done():
                fut.cancel()
                await self.stop()
                raise TimeoutError("the server did not start within start_timeout_s")
        either: set[asyncio.Future[Any]] = {fut, self.task}
        await asyncio.wait(either, return_when="FIRST_COMPLETED")
        if fut.done():
            return fut.result()
        exc = self.task.exception() if not self.task.cancelled() else None
        raise exc or McpServerError(f"MCP server {self.spec.name!r} session closed")

    async def stop(self) -> None:
        if self.task.done():
            return
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self.task, timeout=10)


class McpSessions(Closing):
    """The stdio MCP servers one WORK pass has started, each kept until ``close`` (the pass's
    end) so a pass calling a server k times starts it once. A server that times out, breaks
    the protocol or dies is stopped, and the next call starts it again: it still costs one call,
    never the run. Streamable HTTP servers are already running: a session per call."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._kept: dict[str, _Kept] = {}
        self._lock = threading.Lock()

    def _started_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="refgate-mcp", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    def run(
        self,
        spec: McpServerSpec,
        work: Callable[[Client], Awaitable[T]],
        *,
        cwd: Path | None,
        log: Path | None,
        sandbox: str = SANDBOXED,
    ) -> T:
        """``work`` on the server's kept session (started on first use)."""

        async def job() -> T:
            kept = self._kept.get(spec.name)
            if kept is not None and kept.closing:
                await asyncio.wait({kept.task}, timeout=10)  # the old server is stopped first
                await kept.stop()
            if kept is None or kept.task.done():
                kept = self._kept[spec.name] = _Kept(spec, cwd, log, sandbox)
            return await kept.submit(work)

        with self._lock:
            loop = self._started_loop()
            try:
                return asyncio.run_coroutine_threadsafe(job(), loop).result()
            except Exception as exc:
                raise _server_error(spec, exc, log) from None

    def close(self) -> None:
        """Stop every kept server and the session thread (safe to call twice)."""
        with self._lock:
            loop, self._loop = self._loop, None
            if loop is None:
                return

            async def stop_all() -> None:
                kept = list(self._kept.values())
                for k in kept:
                    k.jobs.put_nowait(None)
                if kept:
                    await asyncio.wait([k.task for k in kept], timeout=5)
                for k in kept:
                    await k.stop()

            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout=30)
            self._kept.clear()
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=10)
            if not loop.is_running():
                loop.close()


def list_tools(
    spec: McpServerSpec,
    *,
    cwd: Path | None = None,
    log: Path | None = None,
    sessions: McpSessions | None = None,
    sandbox: str = SANDBOXED,
) -> dict[str, McpTool]:
    """The server's tools that the workspace exposes, by name."""

    async def work(client: Client) -> dict[str, McpTool]:
        return _tools(spec, await client.list_tools())

    return _session(spec, work, cwd=cwd, log=log, sessions=sessions, sandbox=sandbox)


def call_tool(
    spec: McpServerSpec,
    name: str,
    arguments: dict[str, object],
    *,
    allow: Callable[[McpTool], str | None],
    cwd: Path | None = None,
    log: Path | None = None,
    sessions: McpSessions | None = None,
    sandbox: str = SANDBOXED,
) -> tuple[McpTool, McpOutput]:
    """Call tool ``name`` in one session: list the tools first (the tool must be exposed), ask
    ``allow(tool)`` (a reason to hold the call back, raised as ``McpToolHeld`` before anything
    is sent; else None), then call."""

    async def work(client: Client) -> tuple[McpTool, McpOutput]:
        tools = _tools(spec, await client.list_tools())
        if name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            raise McpServerError(
                f"MCP server {spec.name!r} has no tool {name!r} that this workspace exposes "
                f"(tools: {known})"
            )
        tool = tools[name]
        held = allow(tool)
        if held:
            raise McpToolHeld(tool, held)
        result = await client.call_tool(name, arguments)
        return tool, _output(result, spec.max_result_chars)

    return _session(spec, work, cwd=cwd, log=log, sessions=sessions, sandbox=sandbox)

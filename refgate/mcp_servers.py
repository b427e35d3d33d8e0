"""A workspace's MCP servers (``[mcp.servers.NAME]`` in refgate.toml): what WORK's ``McpCall`` may
reach, read from the file and validated here (``refgate.tools.mcp_client`` talks to them).

    [mcp.servers.fx]
    command = ["python", "fx_server.py"]   # stdio: the program and its arguments (run in the
                                           # workspace folder, with a minimal environment + env)
    env = { FX_MODE = "offline" }          # optional
    network = true                         # optional: reach the network (default: none)
    description = "FX rates, daily"        # optional: shown to WORK (the workspace's words)
    tools = ["rate", "convert"]            # optional: only these tools are callable
    read_only_tools = ["convert"]          # optional: read-only even without the server's hint
    timeout_s = 30                         # optional: per request (listing, the call)
    start_timeout_s = 30                   # optional: to start the server and shake hands
    max_result_chars = 20000               # optional: longer output is cut

    [mcp.servers.search]
    url = "http://127.0.0.1:8800/mcp"      # streamable HTTP

A tool is **write-like** unless the server annotates it ``readOnlyHint: true`` (and not
``destructiveHint: true``); ``read_only_tools``, when given, only narrows that: a tool it does
not list is write-like whatever the server says, and listing a tool never makes it read-only
(a workspace cannot vouch for a server). Write-like tools run only when a person approves the
exact call (boundary B3), never in a turn that read untrusted text (B1).

Starting a command is code execution. It starts only in a trusted workspace
(``refgate.trust``: ``refgate trust WS``, per path and content hash), inside bubblewrap
(``refgate.tools.sandbox.servers``: no parent environment, its own PID namespace, the workspace
read-only, no network unless ``network = true``), and for a served graph only in a folder under
``REFGATE_ALLOWED_WORKSPACES`` (``Workspace.may_start_servers``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
#: A tool name as the MCP spec allows it (others a server lists are ignored).
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")
_KEYS = frozenset(
    {"command", "url", "env", "description", "tools", "read_only_tools", "timeout_s"}
    | {"start_timeout_s", "max_result_chars", "network"}
)
DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 600.0
DEFAULT_RESULT_CHARS = 20_000
MAX_RESULT_CHARS = 200_000


@dataclass(frozen=True)
class McpServerSpec:
    """One ``[mcp.servers.NAME]`` entry: a command (stdio) or a URL (streamable HTTP)."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    description: str = ""
    #: Only these tools may be called (empty: every tool the server lists).
    tools: tuple[str, ...] = ()
    #: When given, the only tools that may count as read-only (and only if the server
    #: annotates them so): it narrows, never widens.
    read_only_tools: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    start_timeout_s: float = DEFAULT_TIMEOUT_S
    max_result_chars: int = DEFAULT_RESULT_CHARS
    #: A command server may reach the network (default: its own empty network namespace).
    network: bool = False

    @property
    def destination(self) -> str:
        """Where its arguments go, as reports name it."""
        return f"the MCP server {self.name!r}"


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: expected a list of non-empty strings")
    return tuple(value)


def _command(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            parts = tuple(shlex.split(value))
        except ValueError as exc:
            raise ValueError(f"{where}: cannot split the command: {exc}") from None
    else:
        parts = _strings(value, where)
    if not parts:
        raise ValueError(f"{where}: the command is empty")
    if any("\x00" in p for p in parts):
        raise ValueError(f"{where}: a NUL character in the command")
    return parts


def _seconds(table: Mapping[str, object], key: str, where: str) -> float:
    value = table.get(key, DEFAULT_TIMEOUT_S)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value <= MAX_TIMEOUT_S
    ):
        raise ValueError(f"{where}.{key}: seconds, above 0 and at most {MAX_TIMEOUT_S:g}")
    return float(value)


def _server(name: str, table: dict[str, Any], where: str) -> McpServerSpec:
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})"
        )
    has_command, has_url = "command" in table, "url" in table
    if has_command == has_url:
        raise ValueError(f"{where}: give exactly one of command (stdio) or url (streamable HTTP)")
    command: tuple[str, ...] = ()
    url = None
    if has_command:
        command = _command(table["command"], f"{where}.command")
    else:
        url = table["url"]
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{where}.url: expected an http(s) URL with a host, got {url!r}")
        if parts.username or parts.password:
            raise ValueError(f"{where}.url: no credentials in the URL")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and _ENV_NAME.match(k) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValueError(f'{where}.env: expected a table of NAME = "value" strings')
    if env and url:
        raise ValueError(f"{where}.env: only a command (stdio) server takes an environment")
    network = table.get("network", False)
    if not isinstance(network, bool) or (network and url):
        raise ValueError(f"{where}.network: true or false, for a command (stdio) server")
    description = table.get("description", "")
    if not isinstance(description, str) or len(description) > 500:
        raise ValueError(f"{where}.description: a string of at most 500 characters")
    tools = _strings(table.get("tools", []), f"{where}.tools")
    read_only = _strings(table.get("read_only_tools", []), f"{where}.read_only_tools")
    for i, tool in enumerate((*tools, *read_only)):
        if not TOOL_NAME.match(tool):
            raise ValueError(f"{where}: {tool!r} is not a tool name (entry {i})")
    timeout, start = (_seconds(table, key, where) for key in ("timeout_s", "start_timeout_s"))
    chars = table.get("max_result_chars", DEFAULT_RESULT_CHARS)
    if (
        isinstance(chars, bool)
        or not isinstance(chars, int)
        or not 100 <= chars <= MAX_RESULT_CHARS
    ):
        raise ValueError(f"{where}.max_result_chars: a whole number from 100 to {MAX_RESULT_CHARS}")
    return McpServerSpec(
        name=name,
        command=command,
        url=url,
        env=tuple(sorted(env.items())),
        description=" ".join(description.split()),
        tools=tools,
        read_only_tools=read_only,
        timeout_s=timeout,
        start_timeout_s=start,
        max_result_chars=chars,
        network=network,
    )


def parse_mcp_servers(raw: object, where: str) -> dict[str, McpServerSpec]:
    """The ``[mcp]`` table of a refgate.toml: ``{name: spec}``; ``ValueError`` naming the field."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: [mcp] must be a table")
    unknown = sorted(set(raw) - {"servers"})
    if unknown:
        raise ValueError(f"{where}: [mcp]: unknown key(s) {', '.join(unknown)} (known: servers)")
    servers = raw.get("servers", {})
    if not isinstance(servers, dict):
        raise ValueError(f"{where}: [mcp.servers] must be a table of servers")
    out: dict[str, McpServerSpec] = {}
    for name, table in servers.items():
        at = f"{where}: mcp.servers.{name}"
        if not _NAME.match(name):
            raise ValueError(
                f"{at}: a server name is a letter then letters, digits, '_' or '-' (at most 64)"
            )
        if not isinstance(table, dict):
            raise ValueError(f"{at}: expected a table")
        out[name] = _server(name, table, at)
    return out

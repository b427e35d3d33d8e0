"""A scripted OpenAI-compatible chat server on loopback, for tests that exercise the real client.

``OpenAIStub`` is a tiny threaded HTTP server implementing ``POST /v1/chat/completions`` (plain
JSON and streaming SSE, tool calls included) and ``GET /v1/models``. Point ``ChatOpenAI`` (or a
served graph, through ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``REFGATE_MODEL``) at
``stub.base_url``; no key and no network are needed.

How a request is answered, first match wins:

1. ``rules``: ``(match, reply)`` pairs; ``match`` is a substring of the request's prompt text
   (every message's content joined) or a predicate on the ``StubRequest``;
2. ``responder``: a callable of the ``StubRequest`` returning a reply, or ``None`` to fall through;
3. ``script``: replies served in order (each one once);
4. ``default``; else the stub answers 500 and records the miss in ``stub.misses``.

A reply is a string (assistant text), a ``Reply``, a dict ``{"content": ..., "tool_calls": ...}``
or a callable of the ``StubRequest`` returning one of those. ``http_error(429)`` scripts an error
status (with ``retry-after: 0`` so the client's retry does not wait). Every request is recorded in
``stub.requests`` (thread-safe), so tests can assert what the model was sent.

    with OpenAIStub(script=["hello", tool_reply(tool("Search", q="x"))]) as stub:
        model = ChatOpenAI(base_url=stub.base_url, api_key="k", model="m", max_retries=0)
"""

from __future__ import annotations

import io
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Required, TypeAlias

from typing_extensions import TypedDict

__all__ = [
    "OpenAIStub",
    "Reply",
    "StubRequest",
    "http_error",
    "tool",
    "tool_reply",
]

_ids = itertools.count(1)


class ScriptedCall(TypedDict, total=False):
    """A scripted tool call (``tool(...)``): its name, arguments (JSON text or a value to
    encode; ``args`` is accepted for ``arguments``) and id."""

    name: Required[str]
    arguments: object
    args: object
    id: str | None


class ToolCallJson(TypedDict):
    """A tool call as the OpenAI chat API sends it."""

    id: str
    type: str
    function: dict[str, str]


class ChatMessage(TypedDict, total=False):
    """One message of a chat request, as the client sent it."""

    role: str
    content: object
    name: str
    tool_calls: list[ToolCallJson]
    tool_call_id: str


class ToolSchema(TypedDict, total=False):
    """A tool bound on a chat request (OpenAI's ``{"type": "function", "function": {...}}``)."""

    type: str
    function: dict[str, object]
    name: str


class ChatRequest(TypedDict, total=False):
    """The JSON body of a chat request (the fields the stub reads)."""

    model: str
    messages: list[ChatMessage]
    stream: bool
    tools: list[ToolSchema]
    stream_options: dict[str, object]


@dataclass
class Reply:
    """One scripted answer: assistant text and/or tool calls, or an HTTP error status."""

    content: str = ""
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    status: int = 200
    error: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: dict[str, int] | None = None
    finish_reason: str | None = None


def tool(name: str, call_id: str | None = None, /, **arguments: object) -> ScriptedCall:
    """A scripted tool call: ``tool("RunPython", code="print(1)")``."""
    return {"name": name, "arguments": arguments, "id": call_id or f"call_{next(_ids)}"}


def tool_reply(*calls: ScriptedCall, content: str = "") -> Reply:
    """A reply that calls the given tools (``tool(...)`` dicts)."""
    return Reply(content=content, tool_calls=list(calls))


def http_error(status: int, message: str = "", headers: Mapping[str, str] | None = None) -> Reply:
    """An error response (e.g. 429, 500); ``retry-after: 0`` unless ``headers`` say otherwise."""
    hdrs = {"retry-after": "0", "retry-after-ms": "0"}
    hdrs.update(headers or {})
    return Reply(status=status, error=message or f"scripted HTTP {status}", headers=hdrs)


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text", "")))
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return "" if content is None else str(content)


@dataclass
class StubRequest:
    """One request the stub received."""

    path: str
    body: ChatRequest
    headers: dict[str, str]
    received: float = field(default_factory=time.time)
    status: int = 0

    @property
    def messages(self) -> list[ChatMessage]:
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str:
        return str(self.body.get("model") or "")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def tools(self) -> list[str]:
        """Names of the tools bound on this request."""
        out = []
        for t in self.body.get("tools") or []:
            fn = t.get("function", t) if isinstance(t, dict) else {}
            out.append(str(fn.get("name", "")))
        return out

    def role_text(self, role: str) -> str:
        return "\n".join(
            _content_text(m.get("content")) for m in self.messages if m.get("role") == role
        )

    @property
    def system(self) -> str:
        return self.role_text("system")

    @property
    def text(self) -> str:
        """Every message's content, joined (what substring rules match against)."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages)

    @property
    def last(self) -> ChatMessage:
        return self.messages[-1] if self.messages else {}

    @property
    def tool_results(self) -> list[str]:
        """Contents of the ``tool`` messages (results of earlier tool calls)."""
        return [_content_text(m.get("content")) for m in self.messages if m.get("role") == "tool"]


class ReplyDict(TypedDict, total=False):
    """A scripted reply written as a dict (``Reply``'s fields; ``tool_calls`` as ``tool(...)``)."""

    content: str | None
    tool_calls: list[ScriptedCall]
    status: int
    error: str | None
    headers: dict[str, str]
    delay: float


#: What a script, a rule or the responder gives: text, a ``Reply``, its dict form, a function of
#: the request returning one of those, or None (no reply: the next source is asked).
ReplyLike: TypeAlias = str | Reply | ReplyDict | Callable[[StubRequest], "ReplyLike"] | None
#: A rule's condition: a substring of the prompt text, or a predicate on the request.
RuleMatch: TypeAlias = str | Callable[[StubRequest], bool]


def _as_reply(value: ReplyLike, request: StubRequest) -> Reply | None:
    if callable(value) and not isinstance(value, Reply):
        value = value(request)
    if value is None:
        return None
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=value)
    if isinstance(value, Mapping):
        calls = []
        for c in value.get("tool_calls") or []:
            calls.append(c if "arguments" in c else {**c, "arguments": c.get("args", {})})
        return Reply(
            content=str(value.get("content") or ""),
            tool_calls=calls,
            status=int(value.get("status", 200)),
            error=value.get("error"),
            headers=dict(value.get("headers") or {}),
            delay=float(value.get("delay", 0)),
        )
    raise TypeError(f"cannot use {type(value).__name__} as a stub reply")


def _tool_call_json(call: ScriptedCall) -> ToolCallJson:
    args = call.get("arguments", {})
    if not isinstance(args, str):
        args = json.dumps(args)
    return {
        "id": str(call.get("id") or f"call_{next(_ids)}"),
        "type": "function",
        "function": {"name": str(call["name"]), "arguments": args},
    }


class OpenAIStub:
    """The scripted server; use as a context manager (or ``start()``/``stop()``)."""

    def __init__(
        self,
        script: Iterable[ReplyLike] | None = None,
        *,
        rules: Iterable[tuple[RuleMatch, ReplyLike]] | None = None,
        responder: Callable[[StubRequest], ReplyLike] | None = None,
        default: ReplyLike | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "stub-model",
        chunk_size: int = 8,
    ) -> None:
        self.script: list[ReplyLike] = list(script or [])
        self.rules: list[tuple[RuleMatch, ReplyLike]] = list(rules or [])
        self.responder = responder
        self.default = default
        self.host = host
        self.model = model
        self.chunk_size = max(1, int(chunk_size))
        self.requests: list[StubRequest] = []
        self.misses: list[StubRequest] = []
        self._lock = threading.Lock()
        self._index = 0
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ------------------------------------------------------------------------

    def add(self, *replies: ReplyLike) -> OpenAIStub:
        """Append replies to the sequential script."""
        with self._lock:
            self.script.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        """Sequential replies not served yet."""
        with self._lock:
            return len(self.script) - self._index

    def chat_requests(self) -> list[StubRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _candidates(self, request: StubRequest) -> Iterator[ReplyLike]:
        """The replies that may answer ``request``, in order: matching rules, the responder,
        the next scripted reply (drawn only when reached), the default."""
        with self._lock:
            rules = list(self.rules)
        for match, reply in rules:
            if match(request) if callable(match) else str(match) in request.text:
                yield reply
        if self.responder is not None:
            yield self.responder
        with self._lock:
            scripted = None
            if self._index < len(self.script):
                scripted = self.script[self._index]
                self._index += 1
        if scripted is not None:
            yield scripted
        if self.default is not None:
            yield self.default

    def _choose(self, request: StubRequest) -> Reply:
        for candidate in self._candidates(request):
            chosen = _as_reply(candidate, request)
            if chosen is not None:
                return chosen
        with self._lock:
            self.misses.append(request)
        return Reply(
            status=500,
            error="OpenAIStub: no scripted reply for this request "
            f"(prompt began {request.text[:160]!r})",
        )

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stub is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The ``OPENAI_BASE_URL`` to give a client (ends in ``/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    def env(self, api_key: str = "stub-key") -> dict[str, str]:
        """Environment that points refgate's settings at this stub."""
        return {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": api_key,
            "REFGATE_MODEL": self.model,
        }

    def start(self) -> OpenAIStub:
        if self._server is not None:
            return self
        handler = type("_Handler", (_Handler,), {"stub": self})
        server = ThreadingHTTPServer((self.host, self._port), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"openai-stub-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Chunks:
    """The server-sent chunks of one streamed completion (one id, creation time and model)."""

    def __init__(self, wfile: io.BufferedIOBase, model: str) -> None:
        self.wfile, self.model = wfile, model
        self.cid = f"chatcmpl-stub{next(_ids)}"
        self.created = int(time.time())

    def send(self, **fields: object) -> None:
        """One chunk with ``fields`` after the id, object, creation time and model."""
        payload = {
            "id": self.cid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            **fields,
        }
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())

    def delta(self, delta: Mapping[str, object], finish: str | None = None) -> None:
        """One choice's delta (and its finish reason at the end), sent at once."""
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        self.send(choices=[choice])
        self.wfile.flush()

    def tool_call(self, index: int, tc: ToolCallJson, size: int) -> None:
        """A tool call: its id and name first, then its arguments in ``size``-character parts."""
        function = {"name": tc["function"]["name"], "arguments": ""}
        self.delta(
            {
                "tool_calls": [
                    {"index": index, "id": tc["id"], "type": "function", "function": function}
                ]
            }
        )
        args = tc["function"]["arguments"]
        for i in range(0, len(args), size):
            self.delta(
                {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + size]}}]}
            )


class _Handler(BaseHTTPRequestHandler):
    stub: OpenAIStub
    protocol_version = "HTTP/1.1"
    server_version = "OpenAIStub/1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence access logs
        return

    def _send_json(self, status: int, payload: object, headers: Mapping[str, str] | None = None):
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": self.stub.model, "object": "model", "owned_by": "stub"}],
                },
            )
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid"}})
            return
        request = StubRequest(
            path=self.path, body=body, headers={k.lower(): v for k, v in self.headers.items()}
        )
        with self.stub._lock:
            self.stub.requests.append(request)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            request.status = 404
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            reply = self.stub._choose(request)
        except Exception as exc:  # a broken responder answers 500, visibly
            reply = Reply(status=500, error=f"OpenAIStub responder raised {exc!r}")
            with self.stub._lock:
                self.stub.misses.append(request)
        request.status = reply.status
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status >= 400:
            kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(
                reply.status, "server_error"
            )
            self._send_json(
                reply.status,
                {"error": {"message": reply.error or "error", "type": kind, "code": kind}},
                reply.headers,
            )
            return
        if request.stream:
            self._stream(request, reply)
        else:
            self._complete(request, reply)

    def _usage(self, request: StubRequest, reply: Reply) -> dict[str, int]:
        if reply.usage:
            return dict(reply.usage)
        prompt = max(1, len(request.text) // 4)
        completion = max(
            1,
            (
                len(reply.content)
                + sum(len(json.dumps(c.get("arguments", {}))) for c in reply.tool_calls)
            )
            // 4,
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _complete(self, request: StubRequest, reply: Reply) -> None:
        message: dict[str, object] = {"role": "assistant", "content": reply.content or None}
        if reply.tool_calls:
            message["tool_calls"] = [_tool_call_json(c) for c in reply.tool_calls]
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        self._send_json(
            200,
            {
                "id": f"chatcmpl-stub{next(_ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.model or self.stub.model,
                "choices": [
                    {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
                ],
                "usage": self._usage(request, reply),
            },
            reply.headers,
        )

    def _stream(self, request: StubRequest, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.close_connection = True
        chunks = _Chunks(self.wfile, request.model or self.stub.model)
        chunks.delta({"role": "assistant", "content": ""})
        size = self.stub.chunk_size
        text = reply.content or ""
        for i in range(0, len(text), size):
            chunks.delta({"content": text[i : i + size]})
        for index, call in enumerate(reply.tool_calls):
            chunks.tool_call(index, _tool_call_json(call), size)
        chunks.delta({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
        options = request.body.get("stream_options") or {}
        if options.get("include_usage"):
            chunks.send(choices=[], usage=self._usage(request, reply))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

"""The bearer token in front of ``refgate mcp --http``: an ASGI gate that answers 401 to any
HTTP request without ``Authorization: Bearer <token>`` (compared in constant time) and passes
the rest, and the lifespan, to the app behind it."""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

#: The environment variable that fixes the token (else one is made at start and printed).
TOKEN_ENV = "REFGATE_MCP_TOKEN"
#: Shortest token accepted from the environment.
MIN_TOKEN_CHARS = 16

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerTokenGate:
    """ASGI middleware: HTTP requests need the bearer token; lifespan events pass through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                return hmac.compare_digest(bytes(value), self._expected)
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket") or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps(
            {"error": "unauthorized", "detail": "send Authorization: Bearer <token>"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="refgate"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

"""Who may use the app, and what a page of it may load.

- The **session token** (``UiSecurity.token``) is printed in the URL ``refgate ui`` opens. A
  browser that presents it once gets a session cookie (``HttpOnly``, ``SameSite=Strict``); every
  other request needs that cookie, so another local user or a web page cannot use the app.
- Each session has its own **CSRF token**, read by the page from ``/api/session`` (same-origin
  only: the app sends no CORS headers). A state-changing request (POST) must carry it in the
  ``X-Refgate-CSRF`` header and an ``Origin`` equal to the app's own.
- The ``Host`` header must name the address the app is bound to (a DNS-rebinding page reaches
  the server under another name and is refused).
- Every response carries a Content-Security-Policy that allows scripts, styles, fonts and
  requests from the app's own origin only, and no inline script or style.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_COOKIE = "refgate_ui_session"
CSRF_HEADER = "x-refgate-csrf"

#: Scripts, styles and fonts from the app itself; images also as data: URIs (the report's
#: charts); no inline script or style, no frames, no plugin, nothing from another origin.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Refused(Exception):
    """A request without a session, a CSRF token or the app's own Origin (HTTP ``status``)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class UiSecurity:
    """The session token, the sessions it opened (id -> CSRF token) and the accepted hosts."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    #: ``host:port`` values a request's Host header may carry; None accepts any (``--host``
    #: 0.0.0.0, where the machine's own names are not known).
    hosts: frozenset[str] | None = None
    sessions: dict[str, str] = field(default_factory=dict)

    def open_session(self, offered: str | None) -> str | None:
        """A new session id when ``offered`` is the session token, else None."""
        if not offered or not hmac.compare_digest(offered.encode(), self.token.encode()):
            return None
        sid = secrets.token_urlsafe(24)
        self.sessions[sid] = secrets.token_urlsafe(24)
        return sid

    def csrf_of(self, request: Request) -> str:
        """The CSRF token of the request's session; ``Refused`` (401) without a session."""
        sid = request.cookies.get(SESSION_COOKIE, "")
        csrf = self.sessions.get(sid)
        if csrf is None:
            raise Refused(401, "no session: open the address refgate ui printed (with its token)")
        return csrf

    def check_read(self, request: Request) -> None:
        """A reading request needs a session."""
        self.csrf_of(request)

    def check_write(self, request: Request) -> None:
        """A state-changing request needs a session, its CSRF token and the app's Origin."""
        csrf = self.csrf_of(request)
        offered = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(offered.encode(), csrf.encode()):
            raise Refused(403, "missing or wrong CSRF token")
        origin = request.headers.get("origin")
        host = request.headers.get("host", "")
        if origin != f"{request.url.scheme}://{host}":
            raise Refused(403, f"cross-origin request refused (Origin {origin!r})")

    def host_allowed(self, host: str) -> bool:
        return self.hosts is None or host in self.hosts


def loopback_hosts(host: str, port: int) -> frozenset[str]:
    """The Host values of a loopback address (``localhost`` and the literal address)."""
    names = {host, "localhost", "127.0.0.1"} if host in ("127.0.0.1", "localhost") else {host}
    if host == "::1":
        names = {"[::1]", "localhost"}
    return frozenset(f"{n}:{port}" for n in names)


class SecurityHeaders:
    """ASGI middleware: refuses a foreign Host header and adds the CSP and its companions."""

    def __init__(self, app: ASGIApp, security: UiSecurity) -> None:
        self.app = app
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if not self.security.host_allowed(host):
            await send(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS],
                }
            )
            await send({"type": "http.response.body", "body": b"unknown Host header"})
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

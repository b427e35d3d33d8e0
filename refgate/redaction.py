"""Secret redaction: the one function that takes keys, tokens and passwords out of any text
before it is shown (stderr, an MCP tool error, ``RunFailed``) or stored (a node's error in the
checkpoints, the trace).

A model server that refuses a key often echoes it ("Incorrect API key provided: sk-...").
``redact_secrets`` replaces

- every known secret value: the environment's variables whose names say they hold one
  (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, ...), and values registered with
  ``register_secret`` (the endpoint key from settings, wherever it was configured);
- text shaped like a credential: ``sk-...`` keys, ``Bearer`` tokens, ``key=...`` pairs,
  passwords in URLs, AWS, GitHub, Slack and Google key formats.

``redact_exception`` redacts an exception's message in place, so its ``repr`` (what LangGraph
stores for a failed node) and ``str`` carry no secret; the type and traceback stay.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

#: What replaces a secret.
MASK = "[REDACTED]"
#: Shortest value treated as a secret (shorter ones would mask ordinary words).
MIN_SECRET_CHARS = 8
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE", re.IGNORECASE)
_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}"),  # OpenAI, Anthropic (sk-ant-...) keys
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(
        r"(?i)(\b(?:api[_-]?key|access[_-]?token|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&]{6,}"
    ),
    re.compile(r"(://[^:/@\s]+:)[^@\s]+(@)"),  # a password in a URL
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),  # Google API keys
)
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret from now on in this process (e.g. the configured API key)."""
    if value and len(value.strip()) >= MIN_SECRET_CHARS:
        _registered.add(value.strip())


def known_secrets(extra: Iterable[str] = ()) -> list[str]:
    """The secret values to mask: registered ones, the environment's, ``extra``; longest first
    (so a key is masked whole before any shorter secret inside it)."""
    found = set(_registered)
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and len(value.strip()) >= MIN_SECRET_CHARS:
            found.add(value.strip())
    found.update(v for v in extra if v and len(v) >= MIN_SECRET_CHARS)
    return sorted(found, key=len, reverse=True)


def redact_secrets(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every known secret value and credential-shaped string masked."""
    if not text:
        return text
    for secret in known_secrets(extra):
        text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        if pattern.groups == 2:
            text = pattern.sub(lambda m: f"{m.group(1)}{MASK}{m.group(2)}", text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda m: f"{m.group(1)}{MASK}", text)
        else:
            text = pattern.sub(MASK, text)
    return text


def redact_exception(exc: BaseException) -> BaseException:
    """Mask secrets in ``exc``'s message (its ``args`` and a ``message`` attribute, as the
    OpenAI and Anthropic clients keep), and in the exceptions it was raised from; returns it."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        try:
            cur.args = tuple(redact_secrets(a) if isinstance(a, str) else a for a in cur.args)
            message = getattr(cur, "message", None)
            if isinstance(message, str):
                cur.message = redact_secrets(message)  # type: ignore[attr-defined]
        except (AttributeError, TypeError):  # an exception type with read-only fields
            pass
        cur = cur.__cause__ or cur.__context__
    return exc


_P = ParamSpec("_P")
_R = TypeVar("_R")


def redacting(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` whose exceptions leave with their secrets masked (``redact_exception``): a graph
    node wrapped so, since LangGraph stores a failed node's exception in the checkpoints."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return func(*args, **kwargs)
        except BaseException as exc:
            raise redact_exception(exc) from exc.__cause__

    return wrapper

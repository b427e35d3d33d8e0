"""The sandbox's errors: it could not run a call, or the requested isolation is unavailable."""

from __future__ import annotations

from refgate.errors import RefgateError


class SandboxError(RefgateError, RuntimeError):
    """The sandbox could not run the call (not a failure of the code itself)."""


class SandboxUnavailable(SandboxError):
    """The requested isolation is not available here; the message says what to do."""

"""URL identity: when two URLs name the same page (dedup, "was this URL retrieved in this run?")."""

from __future__ import annotations

from urllib.parse import urlparse


def norm_url(url: str) -> str:
    """A URL's identity for dedup: lower-case host without ``www.`` plus path without trailing ``/``.

    Scheme, query, fragment and port are ignored, as in seed 001. Text that is not a URL comes back
    lower-cased and stripped.
    """
    raw = (url or "").strip()
    try:
        parsed = urlparse(raw)
        host = parsed.hostname or ""
    except ValueError:
        return raw.lower()
    if not host:
        return raw.lower()
    if host.startswith("www."):
        host = host[4:]
    path = (parsed.path or "").rstrip("/")
    return (host + path).lower()


def host_of(url: str) -> str:
    """The host of ``url`` without ``www.`` (``"unknown"`` when there is none)."""
    try:
        host = urlparse(url).hostname or "unknown"
    except ValueError:
        return "unknown"
    return host[4:] if host.startswith("www.") else host

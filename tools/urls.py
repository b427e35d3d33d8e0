"""URL identity: when two URLs name the same page (dedup, "was this URL retrieved in this run?")."""

from __future__ import annotations

from urllib.parse import urlparse, urlsplit

from courlan.clean import clean_query


def norm_url(url: str) -> str:
    """A URL's identity for dedup: lower-case host without ``www.``, path without trailing ``/``,
    and the query parameters that identify the page.

    Query strings are cleaned by courlan (trackers such as ``utm_*``, ``fbclid``, ``ref`` and
    session ids dropped, parameters sorted), so ``?id=1`` and ``?id=2`` stay two pages while a
    tracking link names the page it points to. Scheme, fragment and default ports are ignored, as
    in the research pipeline. Text that is not a URL comes back lower-cased and stripped.
    """
    raw = (url or "").strip()
    try:
        parts = urlsplit(raw)
        host = parts.hostname or ""
    except ValueError:
        return raw.lower()
    if not host:
        return raw.lower()
    if host.startswith("www."):
        host = host[4:]
    try:
        query = clean_query(parts.query)
    except (ValueError, TypeError, UnicodeError):  # a query courlan cannot parse is dropped
        query = ""
    path = (parts.path or "").rstrip("/")
    return (host + path).lower() + (f"?{query}" if query else "")


def host_of(url: str) -> str:
    """The host of ``url`` without ``www.`` (``"unknown"`` when there is none)."""
    try:
        host = urlparse(url).hostname or "unknown"
    except ValueError:
        return "unknown"
    return host[4:] if host.startswith("www.") else host

"""An httpx transport whose every socket operation ends by a deadline.

httpx's read timeout bounds each socket read, so a server sending one byte every 10 s keeps a
request with a 30 s timeout alive for ever. Here the network backend bounds each connect, read
and write by the time left until ``Deadline.at`` instead: a request cannot outlive its deadline
(its own timeout, or the whole sync's, whichever comes first) by more than one socket call that
was already under way, which is itself bounded by the time that was left."""

from __future__ import annotations

import ssl
import time
import typing

import certifi
import httpcore
import httpx


class Deadline:
    """A moment (``time.monotonic``) that the requests made now must end by."""

    def __init__(self) -> None:
        self.at = float("inf")

    def left(self, timeout: float | None) -> float:
        """The time a socket call may take: ``timeout`` cut to what is left, ``ReadTimeout``
        when nothing is."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the request's deadline has passed")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self.inner, self.deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.deadline.left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self.inner.start_tls(ssl_context, server_hostname, self.deadline.left(timeout))
        return _Stream(inner, self.deadline)

    def get_extra_info(self, info: str) -> typing.Any:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, deadline: Deadline) -> None:
        self.inner, self.deadline = httpcore.SyncBackend(), deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_tcp(
            host, port, self.deadline.left(timeout), local_address, socket_options
        )
        return _Stream(stream, self.deadline)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_unix_socket(path, self.deadline.left(timeout), socket_options)
        return _Stream(stream, self.deadline)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` over a connection pool whose sockets obey ``deadline``."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        # httpx offers no public hook for the network backend: the pool is swapped for one
        # built the way HTTPTransport builds its own, with the deadline-bound backend
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl.create_default_context(cafile=certifi.where()),
            network_backend=_Backend(deadline),
        )

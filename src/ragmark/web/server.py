"""A local web server: a Starlette app served by uvicorn, on a socket bound here.

uvicorn reads each request as HTTP says (exactly the announced body, chunked bodies,
keep-alive, malformed requests answered 400 by itself), so an endpoint deals with what
it receives, not with the protocol. The bind follows ragmark's rule for every page and
endpoint it serves: loopback, unless a non-empty token is given that every request must
carry (``Authorization: Bearer TOKEN``); without a token it answers only requests
whose ``Host`` is a loopback name (:func:`loopback_only`), so a page of another site
whose name is rebound to 127.0.0.1 gets nothing. Time is bounded too: a request's
headers must arrive within :data:`HEADERS_TIMEOUT` seconds (:class:`Server` closes the
connection past it) and an app reads a body with :func:`read_body`, which gives up after
its deadline. :class:`Server` runs in the foreground (``serve_forever``, Ctrl-C or
SIGTERM stop it) or in a thread (``shutdown`` stops it).
"""

from __future__ import annotations

import asyncio
import hmac
import importlib.util
import ipaddress
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from ragmark.errors import ConfigError
from ragmark.hosts import loopback_host

NEEDS = ("starlette", "uvicorn")


def missing_packages() -> list[str]:
    """The server's packages that are not installed (the ``otel`` extra has them)."""
    return [p for p in NEEDS if importlib.util.find_spec(p) is None]


def parse_listen(listen: str, token: str | None, option: str = "--listen") -> tuple[str, int]:
    """``HOST:PORT``, checked: a host beyond loopback needs a token, and a token given is
    not empty or blank (``Authorization: Bearer `` would let anyone in)."""
    if token is not None and not token.strip():
        raise ConfigError("--token is empty or blank: that is no token (anyone sending "
                          "'Authorization: Bearer ' would be let in); give a secret, or "
                          f"leave --token out and {option.lstrip('-')} on loopback")
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise ConfigError(f"{option} {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:4318"
                          ) from None
    if not 0 <= number <= 65535:
        raise ConfigError(f"{option} {listen}: the port {number} is not one: expected 0 "
                          "(any free port) to 65535")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and token is None:
        raise ConfigError(f"{option} {listen}: binding beyond loopback lets anyone who can "
                          "reach this machine in; give --token SECRET (sent as "
                          "'Authorization: Bearer SECRET') or listen on 127.0.0.1")
    return host, number


def authorised(headers: Any, token: str | None) -> bool:
    """Whether a request carries the token (always, without one) as ``Authorization:
    Bearer TOKEN``, the scheme in any case (RFC 9110); compared in constant time."""
    if token is None:
        return True
    scheme, _, given = str(headers.get("authorization") or "").strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode())


def host_name(host: str) -> str:
    """The name of a ``Host`` header, without its port (``[::1]:8080`` -> ``::1``)."""
    host = host.strip()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def is_loopback_name(host: str) -> bool:
    """Whether a ``Host`` header names this machine's loopback: ``localhost`` (and a
    ``*.localhost`` name, which browsers resolve to loopback themselves), or a loopback
    address (127.0.0.0/8, ::1)."""
    return loopback_host(host_name(host))


Refuse = Callable[[Any, int, str], Any]
"""How an app answers a refused request: (Starlette request, status, message) -> a
Starlette response (each app in its own format, told on its console if it tells)."""


def loopback_only(app: Any, token: str | None, refuse: Refuse) -> Any:
    """``app`` answering, without a token, only requests whose ``Host`` is a loopback
    name: a page of another site whose name is rebound to 127.0.0.1 (DNS rebinding)
    sends its own name and is refused (403). With a token, every request must carry it
    instead, and the name does not matter."""
    if token is not None:
        return app

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = next((v.decode("latin-1") for k, v in scope.get("headers", ())
                         if k == b"host"), "")
            if not is_loopback_name(host):
                from starlette.requests import Request

                response = refuse(Request(scope, receive), 403, (
                    f"the Host {host!r} is not a loopback name: without a token this "
                    "server answers only localhost, 127.0.0.1 and [::1] (a page of "
                    "another site whose name points here is refused); serve with "
                    "--token to be reached by other names"))
                await response(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


HEADERS_TIMEOUT = 15.0
"""Seconds a connection has to send a request's headers (its first; the next one after
a response has :data:`KEEP_ALIVE` seconds more); past them it is closed."""
KEEP_ALIVE = 30
"""Seconds an idle connection is kept open for the client's next request."""
BODY_TIMEOUT = 60.0
"""Seconds a request has to send its whole body (:func:`read_body`)."""


class BodyTimeout(Exception):
    """A body that did not arrive whole within its deadline (bytes read so far)."""

    def __init__(self, read: int, seconds: float) -> None:
        super().__init__(f"the body did not arrive within {seconds:g} s ({read} bytes "
                         "came)")
        self.read = read


async def read_body(request: Any, seconds: float) -> AsyncIterator[bytes]:
    """The chunks of a request's body as they come, all within ``seconds`` of the
    first read; :class:`BodyTimeout` past that (a client that sends half a body and
    waits, or one byte a second, is not held open)."""
    deadline = time.monotonic() + seconds
    chunks = request.stream().__aiter__()
    read = 0
    while True:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            chunk = await asyncio.wait_for(chunks.__anext__(), left)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise BodyTimeout(read, seconds) from None
        read += len(chunk)
        yield chunk


def _protocol(headers_timeout: float) -> type:
    """uvicorn's h11 protocol that closes a connection whose request headers have not
    all come within ``headers_timeout`` seconds (uvicorn itself waits for ever)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Bounded(H11Protocol):  # type: ignore[misc]
        _headers_timer: asyncio.TimerHandle | None = None

        def _arm(self, idle: float = 0) -> None:
            if self._headers_timer is not None:
                self._headers_timer.cancel()
            waiting_for = self.cycle  # the request answered last: no new one yet
            self._headers_timer = self.loop.call_later(
                idle + headers_timeout, self._expire, waiting_for)

        def _expire(self, waiting_for: Any) -> None:
            if self.cycle is waiting_for and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm(KEEP_ALIVE)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._headers_timer is not None:
                self._headers_timer.cancel()
            super().connection_lost(exc)

    return Bounded


class Server:
    """An ASGI app on a socket bound now (a taken port fails here, before any work)."""

    def __init__(self, app: Any, listen: str, host: str, port: int,
                 headers_timeout: float = HEADERS_TIMEOUT) -> None:
        import uvicorn

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
            self.socket.listen(128)
        except OSError as e:
            self.socket.close()
            raise ConfigError(f"--listen {listen}: cannot bind: {e}") from None
        self.server = uvicorn.Server(uvicorn.Config(
            app, log_level="warning", access_log=False, timeout_keep_alive=KEEP_ALIVE,
            lifespan="off", http=_protocol(headers_timeout)))
        self._done = threading.Event()

    @property
    def server_address(self) -> tuple[str, int]:
        host, port = self.socket.getsockname()[:2]
        return str(host), int(port)

    def serve_forever(self, **_: Any) -> None:
        """Serve until :meth:`shutdown` (or, in the main thread, Ctrl-C or SIGTERM)."""
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self._done.set()

    def shutdown(self) -> None:
        self.server.should_exit = True
        self._done.wait(10)

    def server_close(self) -> None:
        self.socket.close()

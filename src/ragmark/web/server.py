"""A local web server: a Starlette app served by uvicorn, on a socket bound here.

uvicorn reads each request as HTTP says (exactly the announced body, chunked bodies,
keep-alive, malformed requests answered 400 by itself), so an endpoint deals with what
it receives, not with the protocol. The bind follows ragmark's rule for every page and
endpoint it serves: loopback, unless a non-empty token is given that every request must
carry (``Authorization: Bearer TOKEN``). :class:`Server` runs in the foreground
(``serve_forever``, Ctrl-C or SIGTERM stop it) or in a thread (``shutdown`` stops it).
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import threading
from typing import Any

from ragmark.errors import ConfigError

NEEDS = ("starlette", "uvicorn")


def missing_packages() -> list[str]:
    """The server's packages that are not installed (the ``otel`` extra has them)."""
    import importlib.util

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
    """Whether a request carries the token (always, without one); compared in constant
    time."""
    if token is None:
        return True
    given = str(headers.get("authorization") or "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


class Server:
    """An ASGI app on a socket bound now (a taken port fails here, before any work)."""

    def __init__(self, app: Any, listen: str, host: str, port: int) -> None:
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
            app, log_level="warning", access_log=False, timeout_keep_alive=30,
            lifespan="off"))
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

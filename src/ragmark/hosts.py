"""Whether a host name is this machine's: the one rule of the servers ragmark runs (which
answer only loopback Host names without a token) and of the LLM client (which does not
ask a local server again after a timeout)."""

from __future__ import annotations

import ipaddress


def loopback_host(name: str) -> bool:
    """Whether a host name (no port) is this machine's loopback: ``localhost`` (and a
    ``*.localhost`` name, which browsers resolve to loopback themselves), or a loopback
    address (127.0.0.0/8, ::1)."""
    name = name.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False

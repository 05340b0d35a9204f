"""Whether an endpoint is reachable, told from the calls' failures: an attempt that got
no answer at all (:class:`Unreached`: refused, reset, timed out), how many of those in a
row take an endpoint as gone (:data:`DOWN_AFTER`), whether it is this machine's (a local
server's timeout is not retried: it goes on computing the call), and a server's text as
one line for a message."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ragmark.hosts import loopback_host
from ragmark.retry import Retry

_SNIPPET = 200

DOWN_AFTER = 3
"""Calls in a row that fail to reach the endpoint (refused, reset, timed out, after
their retries) before it is taken as gone and the rest fail at once, unasked."""


class Unreached(Retry):
    """An attempt that got no answer: the connection failed or timed out."""


def on_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (localhost, 127.0.0.0/8, ::1).

    >>> on_loopback("http://127.0.0.1:8080/v1"), on_loopback("https://api.openai.com/v1")
    (True, False)
    """
    return loopback_host(urlsplit(url).hostname or "")


def one_line(text: str, limit: int = _SNIPPET) -> str:
    r"""A server's text as one line for a message: an HTML page's title (or its text
    without tags), white space and control characters collapsed, cut at ``limit``.

    >>> one_line("<html><head><title>502 Bad Gateway</title></head><body>...</body>")
    '502 Bad Gateway'
    >>> one_line("line one\n  line two")
    'line one line two'
    """
    if re.search(r"(?is)<\s*(html|body|head|title|!doctype)\b", text):
        title = re.search(r"(?is)<title[^>]*>(.*?)</title>", text)
        text = title.group(1) if title and title.group(1).strip() else re.sub(
            r"(?is)<(script|style)\b.*?</\1\s*>|<[^>]*>", " ", text)
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return text if len(text) <= limit else text[:limit] + "…"

"""The receiver against what real clients and hostile ones sent (issue 48, items 3, 4, 6,
12, 14): bodies that are not trace exports are refused and never spooled; half-sent,
trickling and over-the-cap bodies get their answer in bounded time; a foreign Host is
refused without a token (DNS rebinding); the bearer scheme in any case; what the start
banner and a wrong path say. Each test fails on the main of before the issue."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from support.cli import run_cli

from ragmark.monitor.receiver import banner, make_server

SPAN = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "rag", "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": "input.value", "value": {"stringValue": "What is BM25?"}},
                       {"key": "output.value", "value": {"stringValue": "A ranking."}}]}
EXPORT = {"resourceSpans": [{"scopeSpans": [{"spans": [SPAN]}]}]}


class Served:
    """A receiver in a thread, with what it told its console."""

    def __init__(self, tmp: Path, **options) -> None:
        self.told: list[str] = []
        self.spool = tmp / "spool"
        self.server, self.sp = make_server("127.0.0.1:0", self.spool, say=self.told.append,
                                           **options)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def lines(self) -> list[str]:
        return [x for f in self.spool.glob("*.jsonl") for x in f.read_text().splitlines()]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.sp.close()


@pytest.fixture
def served(tmp_path):
    s = Served(tmp_path, max_body=64 * 1024, body_timeout=1.0, headers_timeout=1.0)
    yield s
    s.close()


def test_bodies_that_are_not_trace_exports_are_refused_and_never_spooled(served, tmp_path,
                                                                         capsys):
    with httpx.Client(base_url=served.url, timeout=10) as c:
        r = c.post("/v1/traces", json={"foo": 1})
        assert r.status_code == 400 and "'resourceSpans' list" in r.json()["message"]
        r = c.post("/v1/traces", content=b'{"foo": 1}', headers={"Content-Type": "text/plain"})
        assert r.status_code == 415
        assert "application/x-protobuf or application/json" in r.json()["message"]
        r = c.post("/v1/traces", content=json.dumps(EXPORT).encode())  # no Content-Type
        assert r.status_code == 415 and "missing" in r.json()["message"]
        r = c.post("/v1/traces", content=b"\xff\x00garbage",
                   headers={"Content-Type": "application/x-protobuf"})
        assert r.status_code == 400
        # an export without spans is acknowledged, and there is nothing to spool
        assert c.post("/v1/traces", json={"resourceSpans": []}).status_code == 200
        assert served.lines() == []
        r = c.post("/v1/traces", json=EXPORT,  # a charset parameter is fine
                   headers={"Content-Type": "application/json; charset=utf-8"})
        assert r.status_code == 200
    assert len(served.lines()) == 1
    # so the spool stays readable under --strict: the one trace, no warning
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(served.spool), "--strict", "--metrics",
                            "refusal", "--output", str(out), "--quiet", "--no-history"],
                           capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["per_query"] == {"ab" * 16: {"refusal": 0.0}}


def _connect(port: int, data: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    return s


def _answer(s: socket.socket) -> bytes:
    """What the server sends until it closes the connection."""
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def _head(port: int, length: int, kind: str = "application/json") -> bytes:
    return (f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def test_half_sent_and_trickling_bodies_are_answered_408_and_closed(served):
    body = json.dumps(EXPORT).encode()
    start = time.monotonic()
    # 300 clients that send half their body and wait
    held = [_connect(served.port, _head(served.port, len(body)) + body[: len(body) // 2])
            for _ in range(300)]
    answers = [_answer(s) for s in held]
    took = time.monotonic() - start
    for s in held:
        s.close()
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), {a[:20] for a in answers}
    assert took < 8, took  # the deadline is 1 s: not held open
    # one byte every 0.2 s: it never stops coming, and still the whole body is late
    s = _connect(served.port, _head(served.port, len(body)))
    start, got = time.monotonic(), b""
    s.settimeout(0.2)
    for byte in body:
        try:
            s.sendall(bytes([byte]))
            got += s.recv(65536)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
        if got:
            break
    s.settimeout(10)
    got += _answer(s)
    s.close()
    assert got.startswith(b"HTTP/1.1 408") and time.monotonic() - start < 4
    assert served.lines() == []  # nothing of them spooled
    assert sum("(408)" in t for t in served.told) == 301
    # and the receiver still takes a good export
    assert httpx.post(served.url + "/v1/traces", json=EXPORT).status_code == 200


def test_headers_that_never_end_and_idle_connections_are_closed(served):
    start = time.monotonic()
    partial = _connect(served.port, b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    silent = _connect(served.port, b"")
    assert _answer(partial) == b"" and _answer(silent) == b""
    assert time.monotonic() - start < 5  # the headers' deadline is 1 s
    partial.close()
    silent.close()


def test_an_announced_body_over_the_cap_gets_its_413_at_once(served):
    # the Content-Length says too much and no byte of the body follows
    s = _connect(served.port, _head(served.port, 10 * 1024 * 1024))
    s.settimeout(0.9)  # within the body's deadline: the answer does not wait for it
    got = _answer(s)  # and the connection is closed after it
    s.close()
    assert got.startswith(b"HTTP/1.1 413") and b"Content-Length 10485760" in got
    # one that sends its bytes still reads the 413, not a reset
    r = httpx.post(served.url + "/v1/traces", content=b"x" * (1024 * 1024),
                   headers={"Content-Type": "application/json"}, timeout=10)
    assert r.status_code == 413


def test_a_foreign_host_is_refused_without_a_token(served, tmp_path):
    """DNS rebinding: a page of attacker.example whose name now points to 127.0.0.1
    sends its own name as Host."""
    with httpx.Client(base_url=served.url, timeout=10) as c:
        for host in ("attacker.example", f"attacker.example:{served.port}",
                     "127.0.0.1.attacker.example", "localhost.attacker.example"):
            r = c.post("/v1/traces", json=EXPORT, headers={"Host": host})
            assert r.status_code == 403 and "not a loopback name" in r.json()["message"]
        for host in (f"localhost:{served.port}", f"127.0.0.1:{served.port}", "localhost",
                     f"[::1]:{served.port}", "app.localhost"):
            assert c.post("/v1/traces", json=EXPORT, headers={"Host": host}
                          ).status_code == 200
    assert len(served.lines()) == 5
    assert sum("(403)" in t and "attacker.example" in t for t in served.told) == 4
    # with a token, any name: the token is what lets a request in
    other = Served(tmp_path / "t", token="s3cret")
    try:
        for scheme in ("Bearer", "bearer", "BEARER"):  # RFC 9110: any case
            r = httpx.post(other.url + "/v1/traces", json=EXPORT, headers={
                "Host": "collector.example", "Authorization": f"{scheme} s3cret"})
            assert r.status_code == 200
        r = httpx.post(other.url + "/v1/traces", json=EXPORT,
                       headers={"Authorization": "Basic s3cret"})
        assert r.status_code == 401
    finally:
        other.close()


def test_a_wrong_path_says_what_was_asked_and_the_banner_what_to_set(served, tmp_path,
                                                                     capsys):
    r = httpx.get(served.url + "/")
    assert r.status_code == 404
    assert r.json()["message"] == "nothing at GET /: traces are received at POST /v1/traces"
    said = banner("0.0.0.0", 4318, True, Path("spool/t.jsonl"))
    assert "http://0.0.0.0" not in said and "http://THIS-HOST:4318" in said
    assert "OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%20TOKEN'" in said
    said = banner("127.0.0.1", 4318, False, Path("spool/t.jsonl"))
    assert "OTEL_EXPORTER_OTLP_ENDPOINT at http://127.0.0.1:4318" in said
    assert "HEADERS" not in said
    assert "[::1]:4318" in banner("::1", 4318, False, Path("s"))
    for listen in ("127.0.0.1:80000", "127.0.0.1:-1"):
        code, _, err = run_cli(["monitor", "--listen", listen, "--spool",
                                str(tmp_path / "s")], capsys)
        assert code == 2 and "65535" in err and "Traceback" not in err

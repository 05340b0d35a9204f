"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol (or
Ollama's native /api/chat), embeddings (``/embeddings``, Ollama's ``/api/embed``) and the
Cohere/Jina rerank protocol (``/rerank``), scripted per test."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from support.fake_batches import FakeBatches


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: when more clients connect at once than
    # the accept thread has taken, Linux drops their first data (or SYN) and the client
    # resends it after 200 ms (or 1 s), which shows up as a lost concurrency slot.
    request_queue_size = 128
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (a killed run) is not an error here."""
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


@dataclass
class Reply:
    """One scripted response; ``body=None`` is the default chat answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def chat_reply(text: str, prompt_tokens: int = 11, completion_tokens: int = 3) -> Reply:
    """An OpenAI chat-completions answer with ``text`` and the given token usage."""
    return Reply(body={
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}})


def tool_call_reply(call_id: str, name: str, arguments: dict[str, Any],
                    prompt_tokens: int = 50, completion_tokens: int = 9) -> Reply:
    """An OpenAI chat-completions answer that asks for one tool call."""
    return Reply(body={
        "id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
            "index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": call_id, "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}]}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}})


def fake_vector(text: str, dim: int = 8) -> list[float]:
    """The scripted server's embedding of ``text``: ``dim`` numbers from its sha256, not
    unit length (the client must normalise). Equal texts get equal vectors."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(digest[i] - 127.5) / 10.0 for i in range(dim)]


def fake_relevance(query: str, document: str) -> float:
    """The scripted server's rerank score: the share of the query's words in the document
    (ties broken by shorter documents)."""
    words = set(re.findall(r"\w+", query.lower()))
    found = set(re.findall(r"\w+", document.lower()))
    return len(words & found) / max(len(words), 1) + 1.0 / (10 + len(document))


def embed_tokens(text: str) -> int:
    """Tokens the scripted server reports for an embedded text: its words."""
    return len(text.split())


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class FakeLLMServer:
    """Answers chat requests from ``queue`` first, then ``rule(body)``, then the default
    answer ``echo: <last message content>``; records every request and the most requests
    it served at the same time (``max_active``)."""

    def __init__(self, provider: str = "openai") -> None:
        self.provider = provider
        self.queue: deque[Reply] = deque()
        self.rule: Callable[[Any], Reply | None] | None = None
        self.requests: list[Seen] = []
        self.gets: list[Seen] = []
        self.models = ["test-model", "other-model"]
        self.dim = 8
        self.batches = FakeBatches(self)
        self.active = 0
        self.max_active = 0
        self.n_ctx: int | None = None
        """A context window the server enforces (characters / 4 a token): a chat call
        whose prompt and max_tokens exceed it is refused with HTTP 400, as vLLM words it."""
        self.refused = 0
        self.refusal_delay = 0.0
        """Seconds a refusal for length waits before its answer (a server busy reading
        the long prompt): calls sent together are all in flight before the first is refused."""
        self.model_meta: dict[str, Any] = {}
        """Extra keys of every /v1/models entry (``max_model_len`` as vLLM)."""
        self.props: dict[str, Any] | None = None
        """The body of GET /props (llama.cpp), when set."""
        self.token_rate: float | None = None
        """The server's own tokenizer, when set: this many tokens a character. POST
        /tokenize (llama.cpp's) answers with them, and the window (``n_ctx``) counts
        with them instead of characters / 4."""
        self.tokenized: list[str] = []
        self.tokenize_peers: set[Any] = set()
        """The client addresses (connections) the tokenizer's requests came on."""
        self.get_delay = 0.0
        """Seconds every GET waits before its answer (a server busy generating)."""
        self.show: dict[str, Any] | None = None
        """The body of POST /api/show (Ollama), when set."""
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}" + ("/v1" if self.provider == "openai" else "")

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def default_answer(self, body: Any, path: str = "/v1/chat/completions") -> Any:
        if path.endswith("/embeddings"):
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            dim = int(body.get("dimensions") or self.dim)
            data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                    for i, t in enumerate(texts)]
            tokens = sum(embed_tokens(t) for t in texts)
            return {"object": "list", "model": body["model"], "data": data,
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        if path == "/api/embed":
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            return {"model": body["model"], "embeddings": [fake_vector(t) for t in texts],
                    "prompt_eval_count": sum(embed_tokens(t) for t in texts)}
        if path.endswith("/rerank"):
            docs = body["documents"]
            scored = sorted(((fake_relevance(body["query"], d), i) for i, d in enumerate(docs)),
                            reverse=True)[: body.get("top_n") or len(docs)]
            tokens = sum(embed_tokens(body["query"]) + embed_tokens(d) for d in docs)
            return {"model": body["model"], "usage": {"total_tokens": tokens},
                    "results": [{"index": i, "relevance_score": sc} for sc, i in scored]}
        text = "echo: " + str(body["messages"][-1]["content"])
        if self.provider == "ollama":
            return {
                "model": body["model"],
                "message": {"role": "assistant", "content": text},
                "done": True,
                "prompt_eval_count": 7,
                "eval_count": 2,
            }
        return {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        }

    def _too_long(self, body: Any, path: str) -> str | None:
        if self.n_ctx is None or not path.endswith("/chat/completions"):
            return None
        prompt = sum(self.tokens_of(str(m.get("content", ""))) for m in body["messages"])
        if self.token_rate is None:
            prompt = sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4
        asked = int(body.get("max_tokens") or 0)
        if prompt + asked <= self.n_ctx:
            return None
        return (f"This model's maximum context length is {self.n_ctx} tokens. However, you "
                f"requested {prompt + asked} tokens ({prompt} in the messages, {asked} in "
                "the completion). Please reduce the length of the messages or completion.")

    def tokens_of(self, text: str) -> int:
        return math.ceil(len(text) * (self.token_rate or 0.25))

    def _pick(self, body: Any) -> Reply:
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        if self.rule is not None:
            r = self.rule(body)
            if r is not None:
                return r
        return Reply()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Like a real server (uvicorn, vLLM, ...): TCP_NODELAY, and the status line,
            # headers and body leave in one send (see _send). The stdlib way sends the
            # headers and the body separately, and Nagle holds the body until the
            # client's delayed ACK of the headers: +40 ms on every keep-alive response.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                buf = io.BytesIO()  # the whole response, for one send
                sock, self.wfile = self.wfile, buf
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    buf.write(raw)
                finally:
                    self.wfile = sock
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    sock.write(buf.getvalue())

            def do_GET(self) -> None:  # noqa: N802
                seen = Seen(self.path, dict(self.headers), None, time.monotonic())
                time.sleep(server.get_delay)
                server.gets.append(seen)
                if self.path.startswith("/v1/batches/"):
                    self._send(*server.batches.get(self.path.rsplit("/", 1)[1]), {})
                elif self.path.startswith("/v1/files/") and self.path.endswith("/content"):
                    status, text = server.batches.content(self.path.split("/")[3])
                    self._send(status, text, {})
                elif self.path == "/api/tags":
                    self._send(200, {"models": [{"name": m} for m in server.models]}, {})
                elif self.path == "/props" and server.props is not None:
                    self._send(200, server.props, {})
                elif self.path == "/v1/models":
                    data = [{"id": m, "object": "model", **server.model_meta}
                            for m in server.models]
                    self._send(200, {"object": "list", "data": data}, {})
                else:
                    self._send(404, {"error": "not found"}, {})

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                if self.path == "/v1/files":
                    server.requests.append(Seen(self.path, dict(self.headers), None,
                                                time.monotonic()))
                    self._send(*server.batches.upload(self.headers["Content-Type"], raw), {})
                    return
                body = json.loads(raw or b"null")
                if self.path in ("/tokenize", "/extras/tokenize/count") and (
                        server.token_rate is not None):  # llama.cpp's, llama-cpp-python's
                    text = body.get("content", body.get("input"))
                    with server._lock:
                        server.tokenized.append(text)
                        server.tokenize_peers.add(self.client_address)
                    n = server.tokens_of(text)
                    self._send(200, {"tokens": list(range(n))} if "content" in body
                               else {"count": n}, {})
                    return
                if self.path == "/api/show":  # Ollama's model facts: not a chat call
                    server.gets.append(Seen(self.path, dict(self.headers), body,
                                            time.monotonic()))
                    self._send(*((200, server.show) if server.show is not None
                                 else (404, {"error": "not found"})), {})
                    return
                too_long = server._too_long(body, self.path)
                if too_long is not None:
                    time.sleep(server.refusal_delay)
                    with server._lock:
                        server.refused += 1
                        server.requests.append(Seen(self.path, dict(self.headers), body,
                                                    time.monotonic()))
                    self._send(400, {"error": {"message": too_long, "type": "invalid"}}, {})
                    return
                if self.path == "/v1/batches":
                    server.requests.append(Seen(self.path, dict(self.headers), body,
                                                time.monotonic()))
                    self._send(*server.batches.create(body), {})
                    return
                with server._lock:
                    server.requests.append(
                        Seen(self.path, dict(self.headers), body, time.monotonic())
                    )
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    reply = server._pick(body)
                    if reply.delay:
                        time.sleep(reply.delay)
                finally:
                    with server._lock:  # before answering: the client may send the next at once
                        server.active -= 1
                out = (server.default_answer(body, self.path) if reply.body is None
                       else reply.body)
                self._send(reply.status, out, reply.headers)

        return Handler

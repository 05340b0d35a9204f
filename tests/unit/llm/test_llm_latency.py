"""The local test server and LLMClient add no TCP-level stalls: what the throughput
benchmark (benchmarks/judge_throughput.py) measures is ragmark, not loopback artefacts.

Both stalls below are tens or hundreds of times the normal cost of a local request, so
the bounds leave a wide margin for a loaded machine."""

from __future__ import annotations

import asyncio
import statistics
import time

from support.fake_llm_server import FakeLLMServer, Reply

from ragmark.llm import LLMClient, LLMSettings


def _settings(url: str, concurrency: int) -> LLMSettings:
    return LLMSettings(base_url=url, model="test-model", timeout=10.0, concurrency=concurrency)


def test_keep_alive_calls_do_not_wait_for_a_delayed_ack(server: FakeLLMServer) -> None:
    # A response sent as two small writes without TCP_NODELAY waits for the client's
    # delayed ACK (40 ms on Linux) on every call over a kept-alive connection.
    async def main() -> list[float]:
        took = []
        async with LLMClient(_settings(server.url, 1), use_cache=False) as client:
            for i in range(15):
                t = time.perf_counter()
                await client.chat([{"role": "user", "content": f"ping {i}"}])
                took.append(time.perf_counter() - t)
        return took[1:]  # the first one also connects

    took = asyncio.run(main())
    assert len(server.requests) == 15
    assert statistics.median(took) < 0.02, f"median {statistics.median(took) * 1000:.1f} ms"


def test_a_burst_of_new_connections_is_served_at_once(server: FakeLLMServer) -> None:
    # With socketserver's listen backlog of 5, a burst of 16 connections lost some to
    # the accept queue and their requests arrived after a TCP retransmit (>= 200 ms,
    # usually 1 s), i.e. fewer calls than the concurrency limit were in flight.
    server.rule = lambda body: Reply(delay=0.3)
    n = 16

    async def main() -> None:
        async with LLMClient(_settings(server.url, n), use_cache=False) as client:
            await client.run_many([[{"role": "user", "content": f"q {i}"}] for i in range(n)])

    asyncio.run(main())
    at = sorted(r.at for r in server.requests)
    assert len(at) == n and server.max_active == n
    assert at[-1] - at[0] < 0.15, f"spread {(at[-1] - at[0]) * 1000:.0f} ms"

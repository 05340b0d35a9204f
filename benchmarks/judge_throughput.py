"""LLM call throughput: 1,000 judge calls against a local server that answers after
200 ms, against the floor the concurrency limit allows (calls x 0.2 s / concurrency),
then the same calls again from a warm cache, then a raw httpx reference: the very
request bodies of the cold run replayed with the same concurrency against the same kind
of server, without ragmark (what the server, httpx and this machine allow).

    python benchmarks/judge_throughput.py [--calls 1000] [--delay 0.2] [--concurrency 8]

Each run's wall time is split, from the arrival times the server records, into
startup (start -> first request at the server), steady state (first -> last request)
and tail (last request -> end), each against its share of the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import load_average, machine_info, md_table, write_results  # noqa: E402
from support.fake_llm_server import FakeLLMServer, Reply  # noqa: E402

ANSWER = {
    "id": "x",
    "object": "chat.completion",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": '{"rating": 4, "reason": "ok"}'}}
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 12},
}


@dataclass
class Run:
    name: str
    wall: float
    cpu: float  # process CPU seconds (client and the in-process server together)
    arrivals: list[float]  # server arrival times, seconds after the start
    calls: int = 0
    hits: int = 0
    latencies: list[float] | None = None  # per request, raw reference only

    @property
    def startup(self) -> float:
        return self.arrivals[0] if self.arrivals else self.wall

    @property
    def span(self) -> float:
        return self.arrivals[-1] - self.arrivals[0] if self.arrivals else 0.0

    @property
    def tail(self) -> float:
        return self.wall - self.arrivals[-1] if self.arrivals else 0.0


def serve(delay: float) -> FakeLLMServer:
    server = FakeLLMServer("openai").start()
    server.rule = lambda body: Reply(delay=delay, body=ANSWER)
    return server


def arrivals(server: FakeLLMServer, start: float, already: int = 0) -> list[float]:
    return sorted(r.at - start for r in server.requests[already:])


def grade_run(name: str, server: FakeLLMServer, calls: int, concurrency: int) -> Run:
    from ragmark.judges import answer_relevance
    from ragmark.llm import LLMClient, LLMSettings

    settings = LLMSettings(base_url=server.url, model="bench", concurrency=concurrency)
    already = len(server.requests)

    async def judge_all() -> tuple[float, float, LLMClient]:
        start, t0 = time.monotonic(), time.perf_counter()
        client = LLMClient(settings)  # its httpx client and cache open at the first call
        scores = await asyncio.gather(
            *(
                answer_relevance(client, f"question {i}?", f"answer number {i}.")
                for i in range(calls)
            )
        )
        wall = time.perf_counter() - t0
        await client.aclose()
        assert all(s.value == 0.75 for s in scores), "a judgement was lost"
        return start, wall, client

    cpu0 = time.process_time()
    start, wall, client = asyncio.run(judge_all())
    cpu = time.process_time() - cpu0
    return Run(
        name,
        wall,
        cpu,
        arrivals(server, start, already),
        client.stats.calls,
        client.stats.cache_hits,
    )


def raw_run(server: FakeLLMServer, bodies: list[Any], concurrency: int) -> Run:
    """The reference: the same bodies posted with httpx alone, ``concurrency`` at a time,
    through a pool of as many connections (as LLMClient does), all tasks started at once."""
    import httpx

    url = server.url + "/chat/completions"
    latencies: list[float] = []

    async def one(http: httpx.AsyncClient, sem: asyncio.Semaphore, body: Any) -> None:
        async with sem:
            t = time.perf_counter()
            resp = await http.post(url, json=body, timeout=60)
            resp.raise_for_status()
            resp.json()
            latencies.append(time.perf_counter() - t)

    async def post_all() -> tuple[float, float]:
        start, t0 = time.monotonic(), time.perf_counter()
        limits = httpx.Limits(max_connections=concurrency)
        async with httpx.AsyncClient(limits=limits) as http:
            sem = asyncio.Semaphore(concurrency)
            await asyncio.gather(*(one(http, sem, b) for b in bodies))
            return start, time.perf_counter() - t0

    cpu0 = time.process_time()
    start, wall = asyncio.run(post_all())
    cpu = time.process_time() - cpu0
    return Run(
        "raw httpx reference (same bodies, no ragmark)",
        wall,
        cpu,
        arrivals(server, start),
        len(bodies),
        0,
        latencies,
    )


def micro(calls: int, home: str) -> dict[str, float]:
    """Seconds a call of the synchronous pieces, timed alone: rendering the judge prompt,
    and the cache's lookup and insert + commit (a fresh file, same settings)."""
    from ragmark.judges.answers import ANSWER_RELEVANCE_PROMPT, AnswerRelevanceInput
    from ragmark.llm import LLMCache

    t = time.perf_counter()
    for i in range(calls):
        ANSWER_RELEVANCE_PROMPT.render(
            AnswerRelevanceInput(question=f"question {i}?", answer=f"answer number {i}.")
        )
    render = (time.perf_counter() - t) / calls
    cache = LLMCache(Path(home) / "micro.sqlite")
    keys = [f"{i:064x}" for i in range(calls)]
    cache.get("warm-up")
    t = time.perf_counter()
    for k in keys:
        cache.put(
            k,
            provider="openai",
            model="bench",
            text='{"rating": 4, "reason": "ok"}',
            prompt_tokens=120,
            completion_tokens=12,
            seconds=0.2,
        )
    put = (time.perf_counter() - t) / calls
    t = time.perf_counter()
    for k in keys:
        cache.get(k)
    get = (time.perf_counter() - t) / calls
    cache.close()
    return {"render": render, "put": put, "get": get}


def _sniffio_note() -> str:
    try:
        import sniffio  # noqa: F401
    except ImportError:
        return (
            " sniffio is not installed (anyio >= 4.11 no longer brings it), and httpcore "
            "1.0.x then retries `import sniffio`, a search of sys.path, several times a "
            "request (encode/httpcore#1103): CPU for both runs."
        )
    return ""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def gap_section(
    cold: Run, raw: Run, warm: Run, pieces: dict[str, float], a: argparse.Namespace
) -> list[str]:
    floor = a.calls * a.delay / a.concurrency
    ideal_span = floor - a.delay  # first request at 0, last one answered at the floor
    rounds = max(1, -(-a.calls // a.concurrency) - 1)

    def parts(r: Run) -> tuple[float, float, float]:
        return r.startup, r.span - ideal_span, r.tail - a.delay

    rows = []
    for r in (cold, raw):
        s, m, t = parts(r)
        rows.append(
            [
                r.name.split(" (")[0],
                f"{r.wall:.2f}",
                f"{r.wall - floor:+.2f}",
                f"{s:.3f}",
                f"{m:+.3f}",
                f"{1000 * m / rounds:+.2f}",
                f"{t:+.3f}",
                f"{r.cpu:.2f}",
            ]
        )
    lat = sorted(raw.latencies or [0.0])
    med, p99 = statistics.median(lat), lat[min(len(lat) - 1, int(0.99 * len(lat)))]
    cs, cm, ct = parts(cold)
    rs, rm, rt = parts(raw)
    return [
        "## Where the gap to the floor goes",
        "",
        f"Wall time = startup (start -> first request at the server) + steady state "
        f"(first -> last request; ideal floor - delay = {ideal_span:.1f} s) + tail (last "
        f"request -> end; ideal one delay, {a.delay} s). Overheads against those ideals, "
        f"in seconds (per round: over the {rounds} rounds of {a.concurrency} calls "
        "between the first and the last request):",
        "",
        *md_table(
            [
                "run",
                "wall s",
                "- floor s",
                "startup s",
                "steady +s",
                "per round ms",
                "tail +s",
                "process CPU s",
            ],
            rows,
        ),
        "",
        f"- **The server, httpx and the machine** (the raw reference, {raw.wall:.2f} s = "
        f"{raw.wall / floor:.3f}x the floor): a request takes {ms(med)} median "
        f"({ms(p99)} p99) for a {ms(a.delay)} answer, so each round costs "
        f"{1000 * rm / rounds:+.2f} ms over the delay: loopback TCP, httpx/httpcore "
        "(its pool scans its connections on every request), the stdlib HTTP server's "
        "parsing and thread wake-ups, all in one Python process on 2 cores under the GIL, "
        f"plus creating the httpx client and connecting ({ms(rs)} before the first request)."
        + _sniffio_note(),
        f"- **ragmark over the reference: {cold.wall - raw.wall:+.2f} s** "
        f"(cold / raw = {cold.wall / raw.wall:.3f}x). Startup {ms(cs)} vs {ms(rs)}: "
        f"asyncio.gather starts all {a.calls:,} judge calls at once and each does its "
        "synchronous part (render the prompt, the cache key, a cache lookup, queue on the "
        "concurrency limit) before the event loop can send the first request. Rendering "
        f"the judge prompt alone takes {1000 * pieces['render']:.2f} ms a call "
        f"({pieces['render'] * a.calls:.2f} s for all); the warm run, which is that same "
        f"work plus a cache hit, takes {warm.wall:.2f} s "
        f"({1000 * warm.wall / a.calls:.2f} ms a call). Steady state "
        f"{1000 * (cm - rm) / rounds:+.2f} ms a round over the reference (parsing and "
        "validating the judge's JSON, the cache row and its commit, the bookkeeping), "
        f"tail {ct - rt:+.3f} s.",
        "- The SQLite cache is not where the time goes: timed alone, an insert + commit "
        f"takes {1e6 * pieces['put']:.0f} us and a lookup {1e6 * pieces['get']:.0f} us "
        f"({(pieces['put'] + pieces['get']) * a.calls:.3f} s for all the calls). In WAL "
        "mode with synchronous=NORMAL a commit appends to the WAL without an fsync (only "
        "the checkpoint every ~1,000 pages fsyncs), and the concurrency limit is released "
        "before the row is written, so the next call is already on its way.",
        "",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "judge_throughput.md"))
    args = ap.parse_args()
    info = machine_info(["ragmark", "httpx", "httpcore", "anyio", "sniffio"])
    with tempfile.TemporaryDirectory() as home:
        os.environ["RAGMARK_HOME"] = home
        server = serve(args.delay)
        cold = grade_run("cold (every call to the server)", server, args.calls, args.concurrency)
        requests = len(server.requests)
        bodies = [r.body for r in server.requests]
        warm = grade_run("warm (same calls, cache)", server, args.calls, args.concurrency)
        extra = len(server.requests) - requests
        server.stop()
        ref_server = serve(args.delay)
        raw = raw_run(ref_server, bodies, args.concurrency)
        ref_server.stop()
        pieces = micro(args.calls, home)
    floor = args.calls * args.delay / args.concurrency
    rows = []
    for r in (cold, warm, raw):
        rows.append(
            [
                r.name,
                f"{r.wall:.2f}",
                f"{r.wall / floor:.3f}",
                f"{r.wall / raw.wall:.3f}",
                f"{r.calls:,}",
                f"{r.hits:,}",
                f"{args.calls / r.wall:,.0f}",
            ]
        )
    lines = [
        "# Judge throughput: answer_relevance against a local 200 ms server",
        "",
        "Command: `python benchmarks/judge_throughput.py`",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in info.items()],
        f"| load average at end | {load_average()} |",
        "",
        f"{args.calls:,} judge calls, server delay {args.delay} s, concurrency "
        f"{args.concurrency}: floor = calls x delay / concurrency = {floor:.1f} s.",
        "",
        *md_table(
            ["run", "wall s", "/ floor", "/ raw httpx", "calls made", "cache hits", "calls/s"], rows
        ),
        "",
        f"The server saw {requests:,} requests in the cold run and none more in the "
        f"warm one ({extra}). The raw reference posts the {len(bodies):,} request "
        "bodies of the cold run to a fresh server of the same kind.",
        "",
        *gap_section(cold, raw, warm, pieces, args),
    ]
    print("\n".join(lines))
    print(
        f"ratios: cold / floor {cold.wall / floor:.3f}, raw httpx / floor "
        f"{raw.wall / floor:.3f}, cold / raw httpx {cold.wall / raw.wall:.3f}"
    )
    write_results(Path(args.out), lines)


if __name__ == "__main__":
    main()

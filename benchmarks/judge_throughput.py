"""LLM call throughput: 1,000 judge calls against a local server that answers after
200 ms, against the floor the concurrency limit allows (calls x 0.2 s / concurrency),
then the same calls again from a warm cache.

    python benchmarks/judge_throughput.py [--calls 1000] [--delay 0.2] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import load_average, machine_info, write_results  # noqa: E402
from support.fake_llm_server import FakeLLMServer, Reply  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "judge_throughput.md"))
    args = ap.parse_args()
    info = machine_info(["ragmark", "httpx"])
    with tempfile.TemporaryDirectory() as home:
        os.environ["RAGMARK_HOME"] = home
        from ragmark.judges import answer_relevance
        from ragmark.llm import LLMClient, LLMSettings

        server = FakeLLMServer("openai").start()
        server.rule = lambda body: Reply(delay=args.delay, body={
            "id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant",
                                                 "content": '{"rating": 4, "reason": "ok"}'}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 12}})
        settings = LLMSettings(base_url=server.url, model="bench", concurrency=args.concurrency)

        async def judge_all() -> tuple[float, LLMClient]:
            client = LLMClient(settings)
            t0 = time.perf_counter()
            scores = await asyncio.gather(*(
                answer_relevance(client, f"question {i}?", f"answer number {i}.")
                for i in range(args.calls)))
            wall = time.perf_counter() - t0
            await client.aclose()
            assert all(s.value == 0.75 for s in scores), "a judgement was lost"
            return wall, client

        cold, c1 = asyncio.run(judge_all())
        requests = len(server.requests)
        warm, c2 = asyncio.run(judge_all())
        server.stop()
    floor = args.calls * args.delay / args.concurrency
    rows = [
        ("cold (every call to the server)", cold, c1.stats.calls, c1.stats.cache_hits),
        ("warm (same calls, cache)", warm, c2.stats.calls, c2.stats.cache_hits),
    ]
    lines = ["# Judge throughput: answer_relevance against a local 200 ms server", "",
             "Command: `python benchmarks/judge_throughput.py`", "", "| | |", "|---|---|",
             *[f"| {k} | {v} |" for k, v in info.items()],
             f"| load average at end | {load_average()} |", "",
             f"{args.calls:,} judge calls, server delay {args.delay} s, concurrency "
             f"{args.concurrency}: floor = calls x delay / concurrency = {floor:.1f} s.", "",
             "| run | wall s | / floor | calls made | cache hits | calls/s |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, wall, calls, hits in rows:
        lines.append(f"| {name} | {wall:.2f} | {wall / floor:.3f} | {calls:,} | {hits:,} | "
                     f"{args.calls / wall:,.0f} |")
    lines += ["", f"The server saw {requests:,} requests in the cold run and none more in the "
              f"warm one ({len(server.requests) - requests})."]
    print("\n".join(lines))
    write_results(Path(args.out), lines + [""])


if __name__ == "__main__":
    main()

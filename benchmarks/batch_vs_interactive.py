"""Provider batch jobs vs interactive calls: 1,000 chat calls to the scripted
OpenAI-compatible server (tests/support), once one request per call (the server answers
each after 200 ms, 8 in flight) and once as an OpenAI Batch API job (``--llm-batch``:
one JSONL upload, the job polled every second; the scripted server finishes a job after
three status requests, so the batch wall time here is the protocol's own, not a
provider's queue, which may take up to 24 hours).

    python benchmarks/batch_vs_interactive.py [--calls 1000] [--delay 0.2] [--poll 1]

Measured: wall time, the HTTP requests the server received, the calls answered, and the
cost at gpt-4.1-mini's list prices ($0.40 / $1.60 per million tokens, batch 50% off) of
the tokens the server reported (120 prompt + 12 completion a call).
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
from _env import (  # noqa: E402
    RESULTS,
    header_lines,
    load_average,
    machine_info,
    md_table,
    write_results,
)
from support.fake_llm_server import FakeLLMServer, Reply, chat_reply  # noqa: E402

PRICES = {"gpt-4.1-mini": (0.40, 1.60)}


def one_run(calls: int, delay: float, batch: bool, poll: float) -> dict[str, float]:
    from ragmark.llm import LLMClient, LLMSettings

    server = FakeLLMServer().start()
    answer = chat_reply('{"rating": 4, "reason": "ok"}', 120, 12)
    server.rule = lambda body: Reply(body=answer.body, delay=0 if batch else delay)
    gets_before = len(server.gets)
    with tempfile.TemporaryDirectory() as home:
        os.environ["RAGMARK_HOME"] = home
        client = LLMClient(LLMSettings(base_url=server.url, model="gpt-4.1-mini",
                                       concurrency=8, prices=PRICES, batch=batch,
                                       batch_poll=poll))
        if client.batcher is not None:
            client.batcher.on_status = lambda line: None
        msgs = [[{"role": "user", "content": f"rate answer {i}"}] for i in range(calls)]

        async def go() -> list[object]:
            async with client:
                return await client.run_many(msgs)

        t0 = time.perf_counter()
        got = asyncio.run(go())
        wall = time.perf_counter() - t0
    server.stop()
    answered = sum(1 for g in got if getattr(g, "text", None))
    return {"wall": wall, "posts": len(server.requests), "gets": len(server.gets) - gets_before,
            "answered": answered, "calls": client.stats.calls,
            "cost": client.stats.estimated_cost() or 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--poll", type=float, default=1.0)
    ap.add_argument("--out", default=str(RESULTS / "batch_vs_interactive.md"))
    args = ap.parse_args()
    info = machine_info(["ragmark", "httpx"])
    inter = one_run(args.calls, args.delay, False, args.poll)
    batch = one_run(args.calls, args.delay, True, args.poll)
    rows = [[name, f"{r['wall']:.2f}", f"{int(r['posts']):,} POST + {int(r['gets']):,} GET",
             f"{int(r['answered']):,}", f"${r['cost']:.4f}"]
            for name, r in (("interactive", inter), ("provider batch (--llm-batch)", batch))]
    lines = header_lines("Provider batch vs interactive calls (scripted server)", info,
                         "python benchmarks/batch_vs_interactive.py")
    lines += [
        f"{args.calls:,} distinct chat calls; interactive: the server answers each after "
        f"{args.delay} s, 8 in flight (floor {args.calls * args.delay / 8:.1f} s); batch: "
        f"the job polled every {args.poll:g} s and finished by the server after three "
        "status requests.",
        "",
        *md_table(["mode", "wall s", "HTTP requests", "answered", "cost"], rows),
        "",
        f"Cost ratio batch / interactive: {batch['cost'] / inter['cost']:.2f} (the batch "
        "discount). Requests: the batch sends one upload and one job, then polls; the "
        "interactive run sends one request per call. The batch wall time is what ragmark "
        "adds (building the file, uploading, polling, reading the answers into the cache); "
        "a real provider's queue adds minutes to hours.",
        "",
        f"Load average at the end: {load_average()}.",
    ]
    write_results(Path(args.out), lines)
    print("\n".join(lines))
    print(f"ratios: batch / interactive wall {batch['wall'] / inter['wall']:.3f}, cost "
          f"{batch['cost'] / inter['cost']:.3f}")


if __name__ == "__main__":
    main()

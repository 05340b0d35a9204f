"""Shared helpers of the benchmark scripts: machine and version header, peak memory,
subprocess workers, Markdown tables. Nothing here is measured or printed at import."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
RESULTS = PROJECT_ROOT / "benchmarks" / "results"
DEFAULT_DATA = PROJECT_ROOT.parent / "shared" / "data"
JSON_MARK = "@@RESULT@@ "


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return m.group(1).strip() if m else (platform.processor() or "unknown")


def _ram_gib() -> str:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return "unknown"
    m = re.search(r"^MemTotal:\s+(\d+) kB", text, re.MULTILINE)
    return f"{int(m.group(1)) / 2**20:.1f} GiB" if m else "unknown"


DISTRIBUTIONS = {"ragmark": "ragmark-eval"}
"""Import names whose distribution is named otherwise (ragmark is ragmark-eval)."""


def _version(dist: str) -> str:
    try:
        return metadata.version(DISTRIBUTIONS.get(dist, dist))
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_state() -> str:
    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "src")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} (uncommitted changes under src/)" if dirty else f"{head} (src/ clean)"


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def machine_info(dists: Sequence[str]) -> dict[str, str]:
    """Date, machine, Python, package versions and the load average, right now."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    info = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "cores": f"{os.cpu_count()} logical ({usable} usable by this process)",
        "ram": _ram_gib(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "ragmark git": _git_state(),
    }
    for dist in dists:
        info[dist] = _version(dist)
    info["load average (1/5/15 min) at start"] = load_average()
    return info


def header_lines(title: str, info: dict[str, str], command: str) -> list[str]:
    lines = [f"# {title}", "", f"Command: `{command}`", ""]
    lines += ["| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.items()]
    lines.append("")
    return lines


def md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


# -- memory ------------------------------------------------------------------------------


def _status_kib(field: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux >= 4.0); True if it worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class PeakRSS:
    """Peak resident memory of this process during a block, over the RSS at its start.

    Uses /proc/self/status VmHWM after resetting it through /proc/self/clear_refs; where
    that is impossible, falls back to ru_maxrss (which then only sees new peaks).
    """

    def __init__(self) -> None:
        self.method = ""
        self.start_kib = 0
        self.peak_kib = 0

    def __enter__(self) -> PeakRSS:
        import resource

        if reset_peak_rss() and _status_kib("VmHWM") is not None:
            self.method = "VmHWM after clear_refs reset"
            self.start_kib = _status_kib("VmRSS") or 0
        else:
            self.method = "ru_maxrss delta"
            self.start_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return self

    def __exit__(self, *exc: object) -> None:
        import resource

        if self.method.startswith("VmHWM"):
            self.peak_kib = _status_kib("VmHWM") or 0
        else:
            self.peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    @property
    def delta_mib(self) -> float:
        return max(0, self.peak_kib - self.start_kib) / 1024

    @property
    def peak_mib(self) -> float:
        return self.peak_kib / 1024


# -- workers -----------------------------------------------------------------------------


def emit(result: dict[str, Any]) -> None:
    """A worker's answer: one marked JSON line on stdout."""
    sys.stdout.write(JSON_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()


def run_worker(
    script: Path, args: Sequence[str], env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``script`` in a fresh interpreter and return the JSON it emitted."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, env=full_env
    )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(JSON_MARK):
            return dict(json.loads(line[len(JSON_MARK) :]))
    raise RuntimeError(
        f"worker {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )


def import_seconds(code: str, runs: int = 3) -> float:
    """Median wall time of ``code`` (imports) in fresh interpreters, nothing preloaded."""
    import statistics

    prog = f"import time\nt0 = time.perf_counter()\n{code}\nprint(time.perf_counter() - t0)"
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                             check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


Run = dict[str, dict[str, float]]


def check_scifact(folder: Path) -> None:
    """Exit with a clear message when ``folder`` is not a BEIR SciFact folder."""
    missing = [p for p in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
               if not (folder / p).is_file()]
    if missing:
        sys.exit(
            f"SciFact not found in {folder} (missing: {', '.join(missing)}).\n"
            "Download BEIR SciFact (corpus.jsonl, queries.jsonl, qrels/test.tsv) and pass "
            "its folder with --data."
        )


def corpus_slice(scifact: Path, n: int, out: Path) -> Path:
    """The first ``n`` documents of a BEIR folder's corpus written as a JSONL corpus."""
    lines = (scifact / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def to_run(qids: list[str], doc_ids: list[str], ids: Any, scores: Any) -> Run:
    """Retriever arrays ((queries x k) indices, -1 padded, and scores) as a trec-style run."""
    run: Run = {}
    for qi, q in enumerate(qids):
        keep = ids[qi] >= 0
        pairs = zip(ids[qi][keep], scores[qi][keep], strict=True)
        run[q] = {doc_ids[int(i)]: float(s) for i, s in pairs}
    return run


def write_results(path: Path, lines: Sequence[str]) -> None:
    """Write a results file (folders created) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    print(f"\nwritten: {path}")


# -- a local judge behind llama.cpp's server ------------------------------------------


def warm_up(url: str, model: str) -> None:
    """One short chat request, so the server's first-request warm-up is not timed."""
    import httpx

    httpx.post(f"{url}/chat/completions", timeout=600, json={
        "model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4})


def judge_eval_cli(url: str, model: str, args: Sequence[str], out: Path, home: str
                   ) -> tuple[dict[str, Any], float]:
    """``ragmark judge-eval ARGS`` against the server (two calls in flight, 600 s a call,
    its own RAGMARK_HOME): the report written to ``out`` and the wall time."""
    env = {**os.environ, "RAGMARK_HOME": home, "RAGMARK_LLM_CONCURRENCY": "2",
           "RAGMARK_LLM_TIMEOUT": "600"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragmark", "judge-eval", *args,
                           "--llm-base-url", url, "--llm-model", model, "--output", str(out),
                           "--quiet"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"judge-eval failed: {proc.stderr[-2000:]}")
    return json.loads(out.read_text()), wall


def served(stack: Any, args: Any, n_ctx: int) -> str:
    """The base URL the benchmark asks: ``args.url`` when given, else a llama-cpp-python
    server of ``args.model`` as ``args.alias`` started for the run (stopped with
    ``stack``); exits with a message when neither is given."""
    if args.url is not None:
        return str(args.url)
    if args.model is None:
        sys.exit("give --url of a running server or --model PATH.gguf to serve")
    import tempfile

    from support.llama import llama_server

    log = Path(tempfile.mkdtemp()) / "server.log"
    return str(stack.enter_context(llama_server(log, model=args.model, alias=args.alias,
                                                n_ctx=n_ctx)))

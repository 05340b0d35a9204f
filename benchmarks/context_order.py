"""Do the context judges judge the passages or their order? Each question's passages are
judged as retrieved and reversed; the share of passage verdicts that change tells the
order's effect, and each order's per-passage ROC AUC against SciFact's qrels tells how
well the verdicts find the relevant passages (issue 63, item 2).

    python benchmarks/context_order.py --model PATH.gguf --alias qwen [--items 20]
    python benchmarks/context_order.py --url http://127.0.0.1:PORT/v1 --alias qwen
    python benchmarks/context_order.py ... --src OTHER/src --label before

The questions: the first SciFact test claims whose relevant abstract BM25 ranks among
its top 5 chunks (benchmarks/judges_vs_ragas.py's items: BEIR SciFact, CC BY-SA 4.0
claims and CC BY-NC 2.0 abstracts, read from the copy beside the project, nothing
committed); a passage is relevant when its abstract is relevant by the qrels. The judges:
context_relevance and context_precision through ``ragmark run --outputs`` (``--src``
runs another checkout of ragmark's source, to measure a version before a change on the
same server in the same session). The first order from an empty cache; the reversed
order shares it, so a call it asks exactly again (a passage judged alone) is served from
it, and only calls whose prompt the order changes are asked anew. A verdict is the hard
one (relevant / useful or not); with log-probabilities the AUC reads each passage's
probability (ragmark.judge_eval.qrels.against_qrels, as ``judge-eval --against-qrels``).
The table goes to benchmarks/results/context_order_<alias>.md (appended per label).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    check_scifact,
    header_lines,
    machine_info,
    md_table,
    served,
)
from _passage_order import METRICS, passage_verdicts, summary  # noqa: E402
from judges_vs_ragas import build_items  # noqa: E402


def run_order(items: list[dict[str, Any]], reverse: bool, args: Any, home: Path
              ) -> dict[str, Any]:
    """One ``ragmark run`` over the items with the passages in order or reversed (both
    orders share the call cache in ``home``: a call the reversed order asks again is
    the same call); each question's per-passage verdicts and probabilities put back in
    retrieved order."""
    with tempfile.TemporaryDirectory() as tmp:
        logged, out = Path(tmp) / "outputs.jsonl", Path(tmp) / "r.json"
        logged.write_text("".join(json.dumps({
            "id": it["id"], "question": it["question"], "answer": it["answer"],
            "expected_answer": it["expected_answer"],
            "contexts": it["contexts"][::-1] if reverse else it["contexts"]}) + "\n"
            for it in items), encoding="utf-8")
        env = {**os.environ, "RAGMARK_HOME": str(home)}
        if args.src:
            env["PYTHONPATH"] = str(Path(args.src).resolve())
        cmd = [sys.executable, "-m", "ragmark", "run", "--outputs", str(logged),
               "--metrics", ",".join(METRICS), "--llm-base-url", args.url,
               "--llm-model", args.alias, "--llm-timeout", str(args.timeout),
               "--output", str(out), "--include-details", "--allow-missing", "--quiet",
               "--no-history"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ragmark failed ({proc.returncode}): {proc.stderr[-2000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    per: dict[str, dict[str, Any]] = {m: {} for m in METRICS}
    for q in data["queries"]:
        for m in METRICS:
            s = q["metrics"][m]
            if isinstance(s, dict) and s.get("value") is not None:
                per[m][q["id"]] = passage_verdicts(m, s, len(q["contexts"]), reverse)
    llm = data.get("llm") or {}
    return {"per": per, "wall_s": wall, "prompt_tokens": llm.get("prompt_tokens"),
            "calls": llm.get("calls")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--items", type=int, default=20)
    ap.add_argument("--url", default=None, help="a running server's base URL (…/v1)")
    ap.add_argument("--model", type=Path, default=None, help="a GGUF to serve")
    ap.add_argument("--alias", default="qwen")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--src", default=None, help="another checkout's src folder to run")
    ap.add_argument("--label", default="this version")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    check_scifact(args.data)
    items = build_items(args.data, args.items)
    with ExitStack() as stack:
        args.url = served(stack, args, args.n_ctx)
        home = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        given = run_order(items, False, args, home)
        rev = run_order(items, True, args, home)
    rows = summary(items, given, rev)
    out = args.out or RESULTS / f"context_order_{args.alias}.md"
    lines = [] if out.exists() else header_lines(
        "Context judges: verdicts changed by reversing the passages' order",
        machine_info(["ragmark-eval"]), "python benchmarks/context_order.py "
        + " ".join(a for a in sys.argv[1:] if "/" not in a))
    lines += ["", f"## {args.label}", "",
              f"{len(items)} SciFact questions, 5 passages each; wall time in order "
              f"{given['wall_s']:.0f} s, reversed {rev['wall_s']:.0f} s; prompt tokens "
              f"{given['prompt_tokens']} and {rev['prompt_tokens']}, calls to the server "
              f"{given['calls']} and {rev['calls']} (the reversed order shares the first's "
              "cache).", ""]
    lines += md_table(["judge", "questions", "passages", "verdicts changed",
                       "mean |Δ probability|", "'first relevant, rest not'",
                       "passage AUC (given order)", "passage AUC (reversed)"], rows)
    with out.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

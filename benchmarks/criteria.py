"""A judge of your own criterion, measured against a person's labels (issue 63, item 4):
ragmark's ``[judges.NAME]`` criteria through ``ragmark judge-eval --config``, and
DeepEval's GEval (the anchor: a criterion in a sentence, evaluation steps written by the
model, a score) on the same server, the same model and the same items, in the same run.

    python benchmarks/criteria.py --model PATH.gguf --alias qwen \
        [--deepeval-python .venv-deepeval/bin/python]
    python benchmarks/criteria.py --url http://127.0.0.1:PORT/v1 --alias qwen

The items: benchmarks/data/plain_language_30.py, thirty answers to health questions
written and labelled by a ragmark developer for the criterion "written in plain words a
reader without medical training understands" (15 yes, 15 no; CC0). ragmark's judges:
yes/no with the steps the model writes, yes/no with the developer's steps, and a 1-5
rating with the steps the model writes, each from an empty call cache. Per judge: the
balanced accuracy of its hard verdicts (yes at a value of 0.5 and above, as judge-eval
thresholds), the ROC AUC of its values (probability-weighted where the server gives
log-probabilities) with a bootstrap interval, calls, tokens and wall time. GEval's
score is its own (DeepEval weighs the score by log-probabilities only for OpenAI's
models; a custom model's is the score it writes, over 10). The table goes to
benchmarks/results/criteria_<alias>.md.
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
from _env import RESULTS, header_lines, machine_info, md_table, served  # noqa: E402
from data.plain_language_30 import ITEMS  # noqa: E402

CRITERION = ("The answer is written in plain words that a reader without medical training "
             "understands: any technical term it needs is explained.")
OWN_STEPS = ["Read the answer as a reader without medical training would.",
             "List the medical or technical terms, abbreviations and numbers with units.",
             "For each, check whether the answer explains it in everyday words.",
             "Say yes only when every such term is explained or there is none."]
JUDGES = {
    "ragmark yes/no, steps by the model": {"criterion": CRITERION},
    "ragmark yes/no, the developer's steps": {"criterion": CRITERION, "steps": OWN_STEPS},
    "ragmark 1-5, steps by the model": {"criterion": CRITERION, "scale": "1-5"},
}


def _toml(table: dict[str, Any]) -> str:
    return "[judges.plain_language]\n" + "".join(
        f"{k} = {json.dumps(v)}\n" for k, v in table.items())


def ragmark_judge(table: dict[str, Any], items: Path, args: Any) -> dict[str, Any]:
    """One judge-eval of the criterion, from an empty call cache."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg, out = Path(tmp) / "judge.toml", Path(tmp) / "eval.json"
        cfg.write_text(_toml(table), encoding="utf-8")
        env = {**os.environ, "RAGMARK_HOME": tmp, "RAGMARK_HISTORY": str(Path(tmp) / "h.sqlite")}
        cmd = [sys.executable, "-m", "ragmark", "judge-eval", str(items), "--metric",
               "plain_language", "--config", str(cfg), "--llm-base-url", args.url,
               "--llm-model", args.alias, "--llm-timeout", str(args.timeout), "--output",
               str(out), "--quiet"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ragmark failed ({proc.returncode}): {proc.stderr[-2000:]}")
        r = json.loads(out.read_text(encoding="utf-8"))
    llm = r.get("llm") or {}
    return {"balanced_accuracy": r["balanced_accuracy"], "roc_auc": r["scores"]["roc_auc"],
            "judged": r["judged"], "calls": llm.get("calls"),
            "prompt_tokens": llm.get("prompt_tokens"),
            "completion_tokens": llm.get("completion_tokens"), "wall_s": wall}


def deepeval_judge(args: Any) -> dict[str, Any]:
    """DeepEval's GEval on the same server, in its own environment (a subprocess)."""
    from ragmark.judge_eval.scores import score_report
    from ragmark.stats.agreement import evaluate

    script = Path(__file__).resolve().parent / "_deepeval_geval.py"
    t0 = time.perf_counter()
    proc = subprocess.run([args.deepeval_python, str(script), "--url", args.url, "--alias",
                           args.alias, "--criterion", CRITERION],
                          capture_output=True, text=True,
                          env={**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
                               "PYTHONPATH": str(Path(__file__).resolve().parent)})
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"DeepEval failed ({proc.returncode}): {proc.stderr[-3000:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    valued = [(sc, lab) for sc, (_, _, lab) in zip(got["scores"], ITEMS, strict=True)
              if sc is not None]
    # as judge-eval measures ragmark's judges: truth = "not plain" (a "no" label), the
    # verdict yes at 0.5 and above
    truth = [not lab for _, lab in valued]
    report = score_report(truth, [sc for sc, _ in valued], n_resamples=2000, seed=0)
    bal = evaluate(truth, [sc < 0.5 for sc, _ in valued], n_resamples=2000,
                   seed=0)["balanced_accuracy"]
    return {"balanced_accuracy": bal, "roc_auc": report["roc_auc"], "judged": len(valued),
            "calls": got["calls"], "prompt_tokens": got["prompt_tokens"],
            "completion_tokens": got["completion_tokens"], "wall_s": wall,
            "version": got["version"]}


def _fmt(stat: dict[str, Any]) -> str:
    v = stat.get("value")
    if v is None:
        return "-"
    lo, hi = stat.get("ci_low"), stat.get("ci_high")
    return f"{v:.2f}" + (f" [{lo:.2f}, {hi:.2f}]" if lo is not None else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None, help="a running server's base URL (…/v1)")
    ap.add_argument("--model", type=Path, default=None, help="a GGUF to serve")
    ap.add_argument("--alias", default="qwen")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--deepeval-python", default=None,
                    help="a Python with deepeval installed (the anchor)")
    args = ap.parse_args()
    rows, results = [], {}
    with ExitStack() as stack:
        args.url = served(stack, args, args.n_ctx)
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        items = tmp / "items.jsonl"
        items.write_text("".join(json.dumps({"question": q, "answer": a, "contexts": [],
                                             "label": lab}) + "\n" for q, a, lab in ITEMS),
                         encoding="utf-8")
        for name, table in JUDGES.items():
            results[name] = ragmark_judge(table, items, args)
        if args.deepeval_python:
            results["DeepEval GEval (anchor)"] = deepeval_judge(args)
    for name, r in results.items():
        rows.append([name, f"{r['judged']} of {len(ITEMS)}", _fmt(r["balanced_accuracy"]),
                     _fmt(r["roc_auc"]), str(r["calls"]), str(r["prompt_tokens"]),
                     str(r["completion_tokens"]), f"{r['wall_s']:.0f}"])
    anchor = results.get("DeepEval GEval (anchor)")
    out = RESULTS / f"criteria_{args.alias}.md"
    versions = ["ragmark-eval"] + ([] if anchor is None else [])
    lines = header_lines("A criterion of your own against a person's labels",
                         machine_info(versions), "python benchmarks/criteria.py "
                         + " ".join(a for a in sys.argv[1:] if "/" not in a))
    lines += ["", f"{len(ITEMS)} answers (benchmarks/data/plain_language_30.py), criterion: "
              f"\"{CRITERION}\"" + ("" if anchor is None else
                                   f"; DeepEval {anchor['version']} on the same server"), ""]
    lines += md_table(["judge", "judged", "balanced accuracy (hard verdicts)",
                       "ROC AUC (values) [95% bootstrap]", "calls", "prompt tokens",
                       "completion tokens", "wall s"], rows)
    if anchor is not None and anchor["roc_auc"]["value"]:
        best = max((r["roc_auc"]["value"] or 0) for n, r in results.items()
                   if n.startswith("ragmark"))
        lines += ["", f"Best ragmark AUC / GEval AUC: {best / anchor['roc_auc']['value']:.2f}"]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

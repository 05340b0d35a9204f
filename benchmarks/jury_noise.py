"""A judge's own noise and a jury's agreement on real models (issue 63, items 5 and 6):
faithfulness on SciFact answers whose truth is known, judged (1) by the 1.5B model three
times (``--judge-repeats 3`` at temperature 0.7) and (2) by a jury of the 1.5B model and
SmolLM2-135M (``--judge-llm``, two llama-cpp-python servers), through ``ragmark run
--outputs``.

    python benchmarks/jury_noise.py --model PATH.gguf [--items 10]

The items: benchmarks/judges_vs_ragas.py's (BEIR SciFact, CC BY-SA 4.0 claims and
CC BY-NC 2.0 abstracts, read from the copy beside the project, nothing committed):
answers drawn alternately from the relevant abstract among the contexts (faithful) and
from an abstract outside them (not). Per run: the judge's noise as the run reports it
(within-question s.d. beside the between-question s.d., verdict flips), the jurors'
Krippendorff's alpha, and each value's ROC AUC against the truth (each juror's own
values, read from the jury's details, beside the jury's mean; the first repeat beside
the mean of three). The table goes to benchmarks/results/jury_noise_<alias>.md.
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
)
from judges_vs_ragas import build_items  # noqa: E402
from support.llama import llama_server  # noqa: E402


def ragmark_run(items: list[dict[str, Any]], args: Any, home: Path, *more: str
                ) -> tuple[dict[str, Any], float]:
    """One ``ragmark run --outputs`` of faithfulness over the items."""
    with tempfile.TemporaryDirectory() as tmp:
        logged, out = Path(tmp) / "outputs.jsonl", Path(tmp) / "r.json"
        logged.write_text("".join(json.dumps({k: it[k] for k in (
            "id", "question", "answer", "contexts")}) + "\n" for it in items), encoding="utf-8")
        cmd = [sys.executable, "-m", "ragmark", "run", "--outputs", str(logged),
               "--metrics", "faithfulness", "--llm-base-url", args.url, "--llm-model",
               args.alias, "--llm-timeout", "600", "--output", str(out),
               "--include-details", "--allow-missing", "--quiet", "--no-history", *more]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env={**os.environ, "RAGMARK_HOME": str(home)},
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"ragmark failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return json.loads(out.read_text(encoding="utf-8")), wall


def auc_of(items: list[dict[str, Any]], values: dict[str, float | None]) -> str:
    """ROC AUC (95% bootstrap) of ``values`` (question id -> value) for the faithful
    answers, over the questions valued."""
    from ragmark.judge_eval.scores import score_report

    kept = [(values[it["id"]], it["supported"]) for it in items
            if values.get(it["id"]) is not None]
    if not kept:
        return "-"
    r = score_report([not s for _, s in kept], [v for v, _ in kept], n_resamples=2000)
    a = r["roc_auc"]
    if a.get("value") is None:
        return "-"
    return f"{a['value']:.2f} [{a['ci_low']:.2f}, {a['ci_high']:.2f}] ({len(kept)})"


def _values(data: dict[str, Any], pick: Any = None) -> dict[str, float | None]:
    out = {}
    for q in data["queries"]:
        s = q["metrics"]["faithfulness"]
        out[q["id"]] = s.get("value") if pick is None else pick(s)
    return out


def main() -> None:
    from support.llama import gguf

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--items", type=int, default=10)
    ap.add_argument("--model", type=Path, required=True, help="the 1.5B GGUF")
    ap.add_argument("--alias", default="qwen")
    args = ap.parse_args()
    check_scifact(args.data)
    items = build_items(args.data, args.items)
    rows = []
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        args.url = stack.enter_context(llama_server(logs / "qwen.log", model=args.model,
                                                    alias=args.alias, n_ctx=4096))
        small = stack.enter_context(llama_server(logs / "smol.log", model=gguf(),
                                                 alias="smollm2", n_ctx=2048))
        home = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        rep, rep_s = ragmark_run(items, args, home, "--judge-repeats", "3")
        jury, jury_s = ragmark_run(items, args, home, "--judge-llm", args.alias,
                                   "--judge-llm", f"smollm2@{small}")
    noise = rep["llm"]["judge_noise"]["faithfulness"]
    first = _values(rep, lambda s: (s.get("repeats") or [None])[0])
    rows.append([f"{args.alias}, 3 repeats at 0.7: first repeat", auc_of(items, first), "", ""])
    rows.append([f"{args.alias}, 3 repeats at 0.7: their mean", auc_of(items, _values(rep)),
                 f"within s.d. {noise['within_sd']:.3f}, between {noise['between_sd']:.3f}; "
                 f"verdict flipped on {noise['flipped']} of {noise['questions']}",
                 f"{rep['llm']['calls']} calls, {rep_s:.0f} s"])
    agreed = jury["llm"]["jury"]["faithfulness"]
    for juror in agreed["jurors"]:
        rows.append([f"juror {juror} alone (temperature 0)", auc_of(items, _values(
            jury, lambda s, j=juror: (s.get("jurors") or {}).get(j))), "", ""])
    av, ad = agreed["alpha_values"], agreed["alpha_verdicts"]

    def alpha(a: dict[str, Any]) -> str:
        return "undefined" if a.get("value") is None else f"{a['value']:.2f}" + (
            "" if a.get("ci_low") is None else f" [{a['ci_low']:.2f}, {a['ci_high']:.2f}]")

    rows.append(["jury mean (both)", auc_of(items, _values(jury)),
                 f"Krippendorff's alpha {alpha(av)} on values, {alpha(ad)} on verdicts",
                 f"{jury['llm']['calls']} calls, {jury_s:.0f} s"])
    out = RESULTS / f"jury_noise_{args.alias}.md"
    lines = header_lines("A judge's noise and a jury's agreement: faithfulness on SciFact",
                         machine_info(["ragmark-eval", "llama_cpp_python"]),
                         "python benchmarks/jury_noise.py " + " ".join(
                             a for a in sys.argv[1:] if "/" not in a))
    lines += ["", f"{len(items)} SciFact answers, half drawn from the relevant abstract "
              "among the contexts (faithful), half from one outside them; the AUC is the "
              "value's ROC AUC for the faithful ones (95% bootstrap; questions valued).", ""]
    lines += md_table(["judge", "ROC AUC vs truth", "noise / agreement", "cost"], rows)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

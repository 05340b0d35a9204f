"""``ragmark testset select`` on SciFact (issue 65, item 4): ten retrieval configs (BM25
variants, dense, hybrids) compared on SciFact's 300 test claims into a fresh run
history, then 30 of the 300 claims (10%) chosen by nDCG@10 with each method, and each
choice measured by leaving configs out: each config's whole-set mean estimated from
questions chosen without it — the mean and largest error, and Kendall's tau of the
estimates against the true means — beside random 10% subsets (mean of 10 seeds). The
goal: errors within 0.02 and tau at least 0.8. No reranker: no cross-encoder's weights
ship in a package here (MODELS.md), so none is measured.

Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card; BEIR's card lists CC BY-SA 4.0),
read from the copy beside the project.

    python benchmarks/testset_select_scifact.py [--budget 30]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _env import DEFAULT_DATA, RESULTS, check_scifact, header_lines, machine_info

BM25 = {"bm25-k0.9-b0.4": (0.9, 0.4), "bm25-k1.2-b0.75": (1.2, 0.75),
        "bm25-k2.0-b1.0": (2.0, 1.0), "bm25-k1.5-b0.2": (1.5, 0.2)}
CONFIGS = {
    **{name: f'name = "{name}"\n[retriever]\nname = "bm25"\nk1 = {k}\nb = {b}\n'
       for name, (k, b) in BM25.items()},
    "bm25-nostem": 'name = "bm25-nostem"\n[retriever]\nname = "bm25"\nstemmer = "none"\n'
                   'stopwords = "none"\n',
    "bm25-chunks": 'name = "bm25-chunks"\nunit = "chunk"\n[chunker]\nname = "fixed"\n'
                   'size = 400\noverlap = 0\n',
    "hybrid-weighted": 'name = "hybrid-weighted"\n[retriever]\nname = "hybrid"\n'
                       'fusion = "weighted"\nweights = [0.3, 0.7]\n'
                       '[[retriever.retrievers]]\nname = "bm25"\n'
                       '[[retriever.retrievers]]\nname = "dense"\n',
}
BUILTIN = ["sparse", "dense", "hybrid"]


def ragmark(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "ragmark", *args], capture_output=True,
                          text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"ragmark {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--also", default="mrr@10,recall@10,map@10",
                    help="other metrics of the same run, each measured the same way")
    ap.add_argument("--out", type=Path, default=RESULTS / "testset_select_scifact.md")
    args = ap.parse_args()
    check_scifact(args.data)
    info = machine_info(["ragmark", "bm25s", "sentence-transformers", "scipy"])
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        files = []
        for name, text in CONFIGS.items():
            (t / f"{name}.toml").write_text(text)
            files.append(str(t / f"{name}.toml"))
        hist = str(t / "history.sqlite")
        t0 = time.perf_counter()
        ragmark("compare", "--dataset", str(args.data), "--configs", *BUILTIN, *files,
                "--metrics", "ndcg@10", "--history", hist, "--output", str(t / "cmp"),
                "--quiet")
        compared = time.perf_counter() - t0
        rows: list[dict[str, Any]] = []
        for method in ("stratified", "anchors"):
            got = json.loads(ragmark("testset", "select", str(args.data), "--budget",
                                     str(args.budget), "--metric", "ndcg@10", "--history",
                                     hist, "--method", method, "--output",
                                     str(t / f"sub-{method}"), "--json"))
            rows += [m for m in got["left_out_configs"]
                     if method == "stratified" or not m["method"].startswith("random (")]
        means = got["whole_set_means"]
        others = []
        for metric in [m for m in args.also.split(",") if m]:
            got_m = json.loads(ragmark("testset", "select", str(args.data), "--budget",
                                       str(args.budget), "--metric", metric, "--history",
                                       hist, "--output", str(t / f"sub-{metric}"),
                                       "--json"))
            others += [(metric, m) for m in got_m["left_out_configs"]]
    lines = header_lines(f"testset select on SciFact: {args.budget} of 300 claims", info,
                         "python benchmarks/testset_select_scifact.py "
                         + " ".join(sys.argv[1:]))
    lines += [f"{len(means)} configs compared on SciFact's 300 test claims in "
              f"{compared:.0f} s; nDCG@10 over the whole set:", "",
              "| config | nDCG@10 |", "|---|---:|"]
    lines += [f"| {c} | {v:.4f} |" for c, v in sorted(means.items(), key=lambda kv: -kv[1])]
    lines += ["", f"Each config left out in turn, its mean estimated from {args.budget} "
              "claims chosen from the other configs' values (goal: errors within 0.02, "
              "tau at least 0.8):", "",
              "| choice | mean error | largest error | Kendall's tau |", "|---|---:|---:|---:|"]
    for r in rows:
        tau = "—" if r["kendall_tau"] is None else f"{r['kendall_tau']:.3f}"
        lines.append(f"| {r['method']} | {r['mean_abs_error']:.4f} | "
                     f"{r['max_abs_error']:.4f} | {tau} |")
    if others:
        lines += ["", "The same run, other metrics (stratified by each metric's own "
                  "values; random: mean of 10 seeds):", "",
                  "| metric | choice | mean error | largest error | Kendall's tau |",
                  "|---|---|---:|---:|---:|"]
        for metric, r in others:
            tau = "—" if r["kendall_tau"] is None else f"{r['kendall_tau']:.3f}"
            lines.append(f"| {metric} | {r['method']} | {r['mean_abs_error']:.4f} | "
                         f"{r['max_abs_error']:.4f} | {tau} |")
    lines += ["", "Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card; BEIR's card "
              "lists CC BY-SA 4.0). No reranker measured: no cross-encoder's weights ship "
              "in a package here."]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

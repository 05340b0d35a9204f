"""``ragmark testset select`` on SciFact (issue 65, item 4): eleven retrieval configs
(BM25 variants, dense over documents and over chunks, hybrids) compared on SciFact's
300 test claims into a fresh run history, then 30 of the 300 claims (10%) chosen by
nDCG@10 with each method, and each choice measured by leaving configs out: each
config's whole-set mean estimated from questions chosen without it — the mean and
largest error, Kendall's tau of the estimates against the true means, and the share of
the config pairs the whole set separates that the estimates keep in order — beside
random 10% subsets (mean of 10 seeds). The goal: errors within 0.02 and tau at least
0.8. Then the same measure over every history of 8 or more of the eleven configs, to
show how much a selection's numbers depend on which configs the history holds. No
reranker: no cross-encoder's weights ship in a package here (MODELS.md), so none is
measured.

Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card; BEIR's card lists CC BY-SA 4.0),
read from the copy beside the project.

    python benchmarks/testset_select_scifact.py [--budget 30]
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
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
    "dense-chunks": 'name = "dense-chunks"\nunit = "chunk"\n[chunker]\nname = "fixed"\n'
                    'size = 400\noverlap = 0\n[retriever]\nname = "dense"\n',
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


def _row(r: dict[str, Any]) -> str:
    tau = "—" if r["kendall_tau"] is None else f"{r['kendall_tau']:.3f}"
    kept = "—" if r.get("pairs_kept") is None else f"{r['pairs_kept']:.0%}"
    return f"{r['mean_abs_error']:.4f} | {r['max_abs_error']:.4f} | {tau} | {kept}"


def histories(data: Path, hist: str, budgets: list[int], smallest: int) -> list[str]:
    """Every history of ``smallest`` or more of the run's configs, each measured as
    ``testset select`` measures one (its own separated pairs: the pairs' t-test
    p-values, Holm-adjusted over the history's pairs); the spread over histories."""
    from ragmark.analysis.anchors import left_out
    from ragmark.data.detect import load_dataset
    from ragmark.data.fingerprint import dataset_hash
    from ragmark.data.leniency import Leniency
    from ragmark.plan.testset_check import CheckRequest, from_history
    from ragmark.stats.paired import holm, paired_t_test

    ds = load_dataset(str(data), None, "test", Leniency(strict=False, encoding=None))
    _, by = from_history(CheckRequest(str(data), history=hist, metric="ndcg@10"),
                         dataset_hash(ds))
    configs = sorted(by)
    ids = [s.id for s in ds.samples if all(by[c].get(s.id) is not None for c in configs)]
    m = np.array([[float(by[c][q]) for q in ids] for c in configs])
    raw = {pair: paired_t_test(m[pair[0]], m[pair[1]]).p_value
           for pair in itertools.combinations(range(len(configs)), 2)}
    got: dict[tuple[int, str], list[dict[str, Any]]] = {}
    count = 0
    for size in range(smallest, len(configs) + 1):
        for h in itertools.combinations(range(len(configs)), size):
            count += 1
            sub, names = m[list(h)], [configs[i] for i in h]
            every = list(itertools.combinations(range(size), 2))
            adjusted = holm([raw[(h[i], h[j])] for i, j in every])
            pairs = [pair for pair, p in zip(every, adjusted, strict=True) if p < 0.05]
            for budget in budgets:
                for method in ("stratified", "anchors"):
                    got.setdefault((budget, method), []).append(
                        left_out(sub, names, budget, method, 0, pairs))
                runs = [left_out(sub, names, budget, "random", s, pairs) for s in range(10)]
                got.setdefault((budget, "random (mean of 10 seeds)"), []).append(
                    {k: _mean([r[k] for r in runs]) for k in (
                        "mean_abs_error", "max_abs_error", "kendall_tau", "pairs_kept")})
    lines = [f"Across histories: every history of {smallest} to {len(configs)} of these "
             f"{len(configs)} configs ({count} histories), each measured as above (its own "
             "separated pairs); median [10th, 90th percentile] over histories, and how "
             "many histories meet the goal read as the mean error within 0.02 and tau at "
             "least 0.8, as the largest error within 0.02 and tau at least 0.8, and as the "
             "mean error within 0.02 with every separated pair kept:", "",
             "| claims | choice | mean error | largest error | Kendall's tau | separated "
             "pairs kept | mean goal | largest goal | mean goal, pairs kept |",
             "|---:|---|---|---|---|---|---:|---:|---:|"]
    for (budget, method), rs in got.items():
        cols = [_spread([r[k] for r in rs], pct=k == "pairs_kept")
                for k in ("mean_abs_error", "max_abs_error", "kendall_tau", "pairs_kept")]
        tau_ok = [r["kendall_tau"] is not None and r["kendall_tau"] >= 0.8 for r in rs]
        meet = [sum(ok and r[k] <= 0.02 for ok, r in zip(tau_ok, rs, strict=True))
                for k in ("mean_abs_error", "max_abs_error")]
        kept = sum(r["mean_abs_error"] <= 0.02 and r["pairs_kept"] in (None, 1.0)
                   for r in rs)
        lines.append(f"| {budget} | {method} | {' | '.join(cols)} | {meet[0]} of {count} | "
                     f"{meet[1]} of {count} | {kept} of {count} |")
    return lines


def _mean(values: list[Any]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def _spread(values: list[Any], pct: bool = False) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "—"
    lo, mid, hi = np.quantile(present, [0.1, 0.5, 0.9])
    f = "{:.0%}" if pct else "{:.3f}"
    return f"{f.format(mid)} [{f.format(lo)}, {f.format(hi)}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--also", default="mrr@10,recall@10,map@10",
                    help="other metrics of the same run, each measured the same way")
    ap.add_argument("--smallest", type=int, default=8,
                    help="the smallest history measured across histories")
    ap.add_argument("--across-budgets", default="60,90",
                    help="larger budgets measured across histories beside --budget")
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
        across = histories(args.data, hist, sorted({args.budget, *(
            int(b) for b in args.across_budgets.split(",") if b)}), args.smallest)
    lines = header_lines(f"testset select on SciFact: {args.budget} of 300 claims", info,
                         "python benchmarks/testset_select_scifact.py "
                         + " ".join(sys.argv[1:]))
    lines += [f"{len(means)} configs compared on SciFact's 300 test claims in "
              f"{compared:.0f} s; nDCG@10 over the whole set:", "",
              "| config | nDCG@10 |", "|---|---:|"]
    lines += [f"| {c} | {v:.4f} |" for c, v in sorted(means.items(), key=lambda kv: -kv[1])]
    pairs = got["separated_pairs"]
    lines += ["", f"The whole set separates {len(pairs)} of {len(means) * (len(means) - 1) // 2} "
              "pairs of configs (paired t-test, Holm-adjusted, 5%): "
              + ", ".join(f"{a} / {b}" for a, b in pairs) + ".", "",
              f"Each config left out in turn, its mean estimated from {args.budget} "
              "claims chosen from the other configs' values (goal: errors within 0.02, "
              "tau at least 0.8):", "",
              "| choice | mean error | largest error | Kendall's tau | separated pairs kept |",
              "|---|---:|---:|---:|---:|"]
    lines += [f"| {r['method']} | {_row(r)} |" for r in rows]
    if others:
        lines += ["", "The same run, other metrics (stratified by each metric's own "
                  "values; random: mean of 10 seeds; pairs separated by each metric):", "",
                  "| metric | choice | mean error | largest error | Kendall's tau | "
                  "separated pairs kept |", "|---|---|---:|---:|---:|---:|"]
        lines += [f"| {metric} | {r['method']} | {_row(r)} |" for metric, r in others]
    lines += ["", *across, "", "Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card; "
              "BEIR's card lists CC BY-SA 4.0). No reranker measured: no cross-encoder's "
              "weights ship in a package here."]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

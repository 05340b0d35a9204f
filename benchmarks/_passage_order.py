"""Each passage's verdict from a context judge's value, the verdicts a reversal of the
passages changes, and each order's per-passage ROC AUC against SciFact's qrels: what
benchmarks/context_order.py and benchmarks/judges_vs_ragas.py report (issue 63, item
2). Nothing happens at import."""

from __future__ import annotations

from typing import Any

METRICS = ("context_relevance", "context_precision")
"""The judges that read several passages."""


def passage_verdicts(metric: str, s: dict[str, Any], n: int, reverse: bool
                     ) -> dict[str, Any]:
    """A context judge's value on ``n`` passages as each passage's hard verdict
    (relevant, useful) and probability, in retrieved order (``reverse``: the passages
    were judged in the reverse order)."""
    key = "irrelevant" if metric == "context_relevance" else "useful"
    marked = {int(i) for i in s.get(key, [])}
    hard = [(i not in marked) if key == "irrelevant" else (i in marked)
            for i in range(1, n + 1)]
    chances = s.get("chances") or [float(h) for h in hard]
    if reverse:
        hard, chances = hard[::-1], chances[::-1]
    return {"value": s["value"], "hard": hard, "chances": chances, "details": s}


def summary(items: list[dict[str, Any]], given: dict[str, Any], rev: dict[str, Any]
            ) -> list[list[str]]:
    """Per metric: verdicts changed by the reversal, the mean change of a passage's
    probability, and each order's per-passage AUC against the qrels."""
    from ragmark.judge_eval.qrels import QrelsItem, against_qrels
    from ragmark.types import Score

    rows = []
    for m in METRICS:
        a, b = given["per"][m], rev["per"][m]
        both = [it for it in items if it["id"] in a and it["id"] in b]
        flips = sum(x != y for it in both for x, y in zip(a[it["id"]]["hard"],
                                                          b[it["id"]]["hard"], strict=True))
        moved = [abs(x - y) for it in both for x, y in zip(
            a[it["id"]]["chances"], b[it["id"]]["chances"], strict=True)]
        first_only = sum(a[it["id"]]["hard"] == [True] + [False] * (len(it["contexts"]) - 1)
                         for it in both)
        qitems = [QrelsItem(it["id"], it["question"], tuple(it["contexts"]),
                            tuple(it["truth"]["relevant"]), it["expected_answer"])
                  for it in both]
        aucs = []
        for got in (a, b):
            scores = [Score(got[it["id"]]["value"], details={
                k: v for k, v in got[it["id"]]["details"].items() if k != "value"})
                for it in both]
            if got is b:  # the reversed run's details name passages in reversed order
                scores = [Score(s.value, details={**s.details, **_unreversed(
                    s.details, len(it["contexts"]))}) for s, it in zip(scores, both,
                                                                       strict=True)]
            r = against_qrels(qitems, {m: scores}, resamples=1000)[m]["passages"]
            iv = r.get("roc_auc_interval")
            aucs.append(f"{r['roc_auc']:.2f}" + (f" [{iv[0]:.2f}, {iv[1]:.2f}]" if iv
                                                  else "") if r.get("roc_auc") is not None
                        else "-")
        n = sum(len(a[it["id"]]["hard"]) for it in both)
        rows.append([m, str(len(both)), str(n), f"{flips} ({flips / n:.0%})" if n else "-",
                     f"{sum(moved) / len(moved):.3f}" if moved else "-",
                     f"{first_only} of {len(both)}", aucs[0], aucs[1]])
    return rows


def _unreversed(details: dict[str, Any], n: int) -> dict[str, Any]:
    """The passage numbers and probabilities of a reversed run, in retrieved order."""
    out: dict[str, Any] = {}
    for key in ("irrelevant", "useful"):
        if key in details:
            out[key] = [n + 1 - int(i) for i in details[key]]
    if "chances" in details:
        out["chances"] = list(details["chances"])[::-1]
    return out

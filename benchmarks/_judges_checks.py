"""The sections of benchmarks/judges_vs_ragas.py's table beyond SciFact's four shared
metrics: the context judges passage by passage (against the qrels, and with the passages
reversed), faithfulness on the human-labelled sets, the judges' noise, the issue's goals
met or missed, and each item's values in a CSV file anyone can recheck. Nothing happens
at import."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from _env import md_table
from _judges_table import (
    METRICS,
    TOOLS,
    _fmt,
    against_truth,
    faithfulness_auc,
    separation,
)
from _passage_order import METRICS as PASSAGE_METRICS
from _passage_order import passage_verdicts, summary

Blocks = dict[str, dict[tuple[str, str], Any]]


def _per(block: dict[str, Any] | None, metric: str, items: list[dict[str, Any]],
         reverse: bool) -> dict[str, Any]:
    """A ragmark block's per-passage verdicts, in the shape _passage_order.summary reads."""
    got: dict[str, Any] = {}
    for it in items:
        if block is None or block["values"].get(it["id"]) is None:
            continue
        s = {**block["details"].get(it["id"], {}), "value": block["values"][it["id"]]}
        got[it["id"]] = passage_verdicts(metric, s, len(it["contexts"]), reverse)
    return got


def passage_rows(blocks: Blocks, items: list[dict[str, Any]]) -> list[list[str]] | None:
    """_passage_order.summary's rows (verdicts changed by the reversal, each order's
    per-passage AUC against the qrels) from this run's ragmark blocks."""
    given, rev = blocks.get("scifact", {}), blocks.get("scifact_reversed", {})
    if not all(("ragmark", m) in given and ("ragmark", m) in rev for m in PASSAGE_METRICS):
        return None
    return summary(items, {"per": {m: _per(given[("ragmark", m)], m, items, False)
                                   for m in PASSAGE_METRICS}},
                   {"per": {m: _per(rev[("ragmark", m)], m, items, True)
                            for m in PASSAGE_METRICS}})


def passage_lines(rows: list[list[str]] | None, blocks: Blocks) -> list[str]:
    if rows is None:
        return []
    rev = blocks["scifact_reversed"]
    cost = ", ".join(f"{m} {rev[('ragmark', m)]['calls']} calls, "
                     f"{rev[('ragmark', m)]['prompt_tokens']:,} prompt tokens"
                     for m in PASSAGE_METRICS)
    return ["", "## Context judges passage by passage: the qrels, and the passages reversed",
            "", "Each passage's probability of being relevant (context relevance) or useful "
            "for the reference answer (context precision) against SciFact's qrels (a chunk "
            "of a relevant abstract), as `judge-eval --against-qrels` reads it: ROC AUC "
            "over all passages with a 95% bootstrap interval. Then the same questions with "
            "their passages in the reverse order, asked again from an empty cache (" + cost
            + "): a verdict changed is a passage whose hard verdict differs between the "
            "orders.", "",
            *md_table(["judge", "questions", "passages", "verdicts changed",
                       "mean |Δ probability|", "'first relevant, rest not'",
                       "passage AUC (given order)", "passage AUC (reversed)"], rows)]


def human_lines(name: str, blocks: dict[tuple[str, str], Any], items: list[dict[str, Any]]
                ) -> list[str]:
    """Faithfulness on one human-labelled set: each tool's ROC AUC against people's
    labels, its means on the two kinds of answers, its cost."""
    rows = []
    for tool in TOOLS:
        b = blocks.get((tool, "faithfulness"))
        if b is None:
            rows.append([tool, "not measured in this run", *[""] * 9])
            continue
        m, *cells = separation(b, items)
        fails = ", ".join(f"{k} x{v}" for k, v in b["failures"].items()) or "—"
        rows.append([tool, f"{m} of {len(items)}", *cells, f"{b['wall_s']:.0f}",
                     str(b["calls"]), f"{b['prompt_tokens']:,}",
                     f"{b['completion_tokens']:,}", fails.replace("|", "/")])
    labels = sorted({it["label"] for it in items})
    counts = ", ".join(f"{sum(it['label'] == lab for it in items)} {lab}" for lab in labels)
    return ["", f"## Faithfulness against people's labels: {SET_TITLES.get(name, name)}", "",
            f"{len(items)} items ({counts}); supported means people found the answer fully "
            "supported by its sources (benchmarks/_human_sets.py says how the items were "
            "drawn).", "",
            *md_table(["tool", "items with a value", "ROC AUC", "95% bootstrap interval",
                       "mean (supported)", "mean (not)", "wall s", "calls",
                       "prompt tokens", "completion tokens", "failures"], rows)]


SET_TITLES = {"begin": "BEGIN (Wizard of Wikipedia responses, CC BY 4.0)",
              "wice": "WiCE (Wikipedia claims and the pages they cite, ODC-BY 1.0)"}


def noise_lines(blocks: dict[tuple[str, str], Any]) -> list[str]:
    """Each metric's judge noise from the blocks that asked every judge several times."""
    rows = []
    for (tool, metric), b in sorted(blocks.items()):
        r = b.get("noise") if tool.startswith("ragmark-x") else None
        if not r or not r.get("questions"):
            continue
        iv = r.get("flip_interval")
        rows.append([metric, str(r["repeats"]), str(r["questions"]), f"{r['within_sd']:.3f}",
                     _fmt(r.get("between_sd")),
                     f"{r['flipped']} ({r['flip_share']:.0%})"
                     + ("" if iv is None else f" [{iv[0]:.0%}, {iv[1]:.0%}]"),
                     f"±{1.96 * r['mean_se']:.3f}", f"{b['prompt_tokens']:,}"])
    if not rows:
        return []
    return ["", "## ragmark's judges' own noise on SciFact (`--judge-repeats`)", "",
            "Each judge asked several times at temperature 0.7, each repeat its own seed: "
            "the within-question standard deviation of a value beside the between-question "
            "one, the questions whose hard verdict flipped between repeats (Wilson 95% "
            "interval), and the half-width of the judge's own noise on the mean.", "",
            *md_table(["metric", "repeats", "questions", "within s.d.", "between s.d.",
                       "verdict flipped", "noise on the mean", "prompt tokens"], rows)]


def goal_rows(blocks: Blocks, sets: dict[str, list[dict[str, Any]]],
              passages: list[list[str]] | None) -> list[list[str]]:
    """Issue 63's goals, each with what was measured and met / MISSED."""
    rows: list[list[str]] = []

    def row(goal: str, got: str, ok: bool | None) -> None:
        rows.append([goal, got, "not measured" if ok is None else "met" if ok else "MISSED"])

    for name in ("scifact", "begin", "wice"):
        b = blocks.get(name, {})
        if name not in sets or ("ragmark", "faithfulness") not in b \
                or ("ragas", "faithfulness") not in b:
            row(f"faithfulness AUC on {name}: ragmark >= RAGAS", "—", None)
            continue
        ours = faithfulness_auc(b[("ragmark", "faithfulness")], sets[name])[0]
        theirs = faithfulness_auc(b[("ragas", "faithfulness")], sets[name])[0]
        row(f"faithfulness AUC on {name}: ragmark >= RAGAS",
            f"{_fmt(ours, 2)} against {_fmt(theirs, 2)}",
            None if ours is None or theirs is None else ours >= theirs)
    sci = blocks.get("scifact", {})
    errs = {t: against_truth(sci[(t, "context_recall")], sets["scifact"], "context_recall")
            for t in TOOLS if (t, "context_recall") in sci}
    if len(errs) == 2:
        ours, theirs = (float(errs[t][3].split()[0]) for t in TOOLS)
        row("context recall's error against the qrels: ragmark <= RAGAS",
            f"{ours:.3f} against {theirs:.3f}", ours <= theirs)
    else:
        row("context recall's error against the qrels: ragmark <= RAGAS", "—", None)
    if passages is None:
        row("context relevance per-passage AUC >= 0.65, interval above 0.5", "—", None)
        row("context verdicts changed by reversing the passages < 10%", "—", None)
    else:
        rel = next(r for r in passages if r[0] == "context_relevance")
        point = float(rel[6].split()[0]) if rel[6] != "-" else None
        low = float(rel[6].split("[")[1].split(",")[0]) if "[" in rel[6] else None
        row("context relevance per-passage AUC >= 0.65, interval above 0.5", rel[6],
            None if point is None or low is None else point >= 0.65 and low > 0.5)
        for r in passages:
            changed, n = int(r[3].split()[0]), int(r[2])
            row(f"{r[0]} verdicts changed by reversing the passages < 10%",
                f"{changed} of {n}", changed < 0.1 * n)
    both = [m for m in METRICS if all((t, m) in sci for t in TOOLS)]
    if len(both) == len(METRICS):
        ours, theirs = (sum(sci[(t, m)]["prompt_tokens"] for m in both) for t in TOOLS)
        row("prompt tokens over the four shared metrics <= 0.5x RAGAS's",
            f"x{ours / theirs:.2f} ({ours:,} against {theirs:,})", ours <= 0.5 * theirs)
    else:
        row("prompt tokens over the four shared metrics <= 0.5x RAGAS's", "—", None)
    return rows


def more_lines(blocks: Blocks, sets: dict[str, list[dict[str, Any]]], args: Any
               ) -> list[str]:
    """Everything after the SciFact sections of judges_table.report."""
    passages = passage_rows(blocks, sets["scifact"])
    lines = passage_lines(passages, blocks)
    for name in ("begin", "wice"):
        if name in sets:
            lines += human_lines(name, blocks.get(name, {}), sets[name])
    lines += noise_lines(blocks.get("scifact", {}))
    lines += ["", "## Issue 63's goals", "",
              *md_table(["goal", "measured", ""], goal_rows(blocks, sets, passages))]
    return lines


def write_items(path: Path, blocks: Blocks, sets: dict[str, list[dict[str, Any]]]) -> None:
    """Every item's value by each tool beside its label or truth, a row a set, item and
    metric (so anyone can recheck the AUCs and errors above)."""
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["set", "id", "metric", "label", "truth", *TOOLS])
        for name, items in sets.items():
            got = blocks.get(name, {})
            for metric in sorted({m for _, m in got}):
                for it in items:
                    vals = [got.get((t, metric), {}).get("values", {}).get(it["id"])
                            for t in TOOLS]
                    if all(v is None for v in vals) and not any((t, metric) in got
                                                                 for t in TOOLS):
                        continue
                    truth = it.get("truth", {}).get(metric)
                    w.writerow([name, it["id"], metric, it.get("label", ""),
                                "" if truth is None else f"{truth:g}",
                                *["" if v is None else f"{v:.4f}" for v in vals]])

"""The table of benchmarks/judges_vs_ragas.py: per tool and metric, values, time,
calls and tokens; the tools together; their agreement; faithfulness's separation of
supported from unsupported answers. Nothing happens at import."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from _env import header_lines, load_average, md_table

CHUNK_CHARS = 500
"""Contexts are chunks of whole sentences of up to this many characters (ragmark's
sentence chunker), as a RAG system would retrieve them."""
TOOLS = ("ragmark", "ragas")
METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")


def shown(argv: list[str]) -> str:
    """The command's arguments without this machine's paths: a path under the project's
    parent folder relative to the project, any other absolute path by its name."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out: list[str] = []
    for a in argv:
        if out and out[-1] == "--remark":
            out[-1:] = []  # printed below, not in the command
            continue
        p = Path(a)
        if p.is_absolute():
            try:
                a = str(Path("..") / p.resolve().relative_to(root.parent))
            except ValueError:
                a = p.name
        out.append(a)
    return " ".join(out)


def spearman(a: list[float], b: list[float]) -> float | None:
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def faithfulness_auc(block: dict[str, Any], items: list[dict[str, Any]], seed: int = 0
                     ) -> tuple[float | None, tuple[float, float] | None, int]:
    """ROC AUC of the values for supported answers (the items with a value), a 95%
    percentile bootstrap interval over those items, and how many there were."""
    from ragmark.stats.auc import auc
    from ragmark.stats.resample import percentile_interval

    pairs = [(block["values"][it["id"]], it["supported"]) for it in items
             if block["values"].get(it["id"]) is not None]
    if not pairs:
        return None, None, 0
    score = np.array([p[0] for p in pairs], dtype=np.float64)
    positive = np.array([p[1] for p in pairs], dtype=bool)
    point = float(auc(score, positive))
    rows = np.random.default_rng(seed).integers(0, len(pairs), (2000, len(pairs)))
    boot = auc(score[rows], positive[rows])
    boot = boot[~np.isnan(boot)]
    interval = percentile_interval(boot, 0.95) if len(boot) else None
    return (None if np.isnan(point) else point), interval, len(pairs)


def separation(block: dict[str, Any], items: list[dict[str, Any]]) -> list[Any]:
    """How many items a tool valued, then as cells: its faithfulness ROC AUC, the
    interval, its mean on supported and on unsupported answers."""
    point, ci, m = faithfulness_auc(block, items)
    means = [[block["values"][it["id"]] for it in items if it["supported"] is kind
              and block["values"].get(it["id"]) is not None] for kind in (True, False)]
    return [m, _fmt(point), "—" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
            *[_fmt(float(np.mean(v)) if v else None) for v in means]]


TRUTH = ("faithfulness", "context_precision", "context_recall")
"""The metrics whose value SciFact's qrels give without a judge (judges_vs_ragas.truth)."""


def against_truth(block: dict[str, Any], items: list[dict[str, Any]], metric: str
                  ) -> list[str]:
    """One tool's values against the qrels' truth, over the items it valued: the two
    means, the mean absolute error and the association (ROC AUC when the truth is 0 or
    1 on every item, else Spearman), each with a 95% bootstrap interval."""
    from ragmark.stats import bootstrap_ci
    from ragmark.stats.feedback import association

    pairs = [(block["values"][it["id"]], it["truth"][metric]) for it in items
             if block["values"].get(it["id"]) is not None]
    if not pairs:
        return [str(0), "—", "—", "—", "—", "—"]
    got = np.array([p[0] for p in pairs], dtype=np.float64)
    true = np.array([p[1] for p in pairs], dtype=np.float64)
    mae = bootstrap_ci(np.abs(got - true), 0.95, 2000, 0)
    a = association(metric, list(got), list(true))
    how = (f"{a.measure} {_fmt(a.value, 2)}"
           + ("" if a.low is None else f" [{a.low:.2f}, {a.high:.2f}]")
           + (f" ({a.note})" if a.note else ""))
    return [str(len(pairs)), _fmt(float(got.mean())), _fmt(float(true.mean())),
            f"{float(np.abs(got - true).mean()):.3f}"
            + ("" if mae is None else f" [{mae.low:.3f}, {mae.high:.3f}]"), how]


def hard_values(block: dict[str, Any]) -> dict[str, float | None] | None:
    """The block's values from its hard verdicts alone (each item's ``hard_value``: the
    share of YES verdicts), where its judge weighed them by probability; None for a
    block with no hard value beside its values."""
    details = block.get("details") or {}
    hard = {k: (d or {}).get("hard_value") for k, d in details.items()}
    if not any(v is not None for v in hard.values()) or all(
            hard.get(k) == v for k, v in block["values"].items()):
        return None
    return {k: hard.get(k) if block["values"].get(k) is not None else None
            for k in block["values"]}


def truth_lines(blocks: dict[tuple[str, str], dict[str, Any]], items: list[dict[str, Any]]
                ) -> list[str]:
    """The section that says which tool's values are right, by the qrels."""
    if not all("truth" in it for it in items):
        return []
    rows = []
    for metric in TRUTH:
        for tool in TOOLS:
            if (tool, metric) not in blocks:
                continue
            block = blocks[(tool, metric)]
            rows.append([metric, tool, *against_truth(block, items, metric)])
            hard = hard_values(block)
            if hard is not None:
                rows.append([metric, f"{tool} (hard verdicts)",
                             *against_truth({"values": hard}, items, metric)])
    return ["", "## Which is right? Each tool against the truth SciFact's qrels give", "",
            "Truth per question, no judge asked: context precision the rank-weighted "
            "precision of the five contexts with a chunk of a relevant abstract (qrels) "
            "counted useful; context recall the share of the reference answer's sentences "
            "that stand in a context; faithfulness 1 for an answer drawn from the relevant "
            "abstract's chunk among the contexts, 0 for one from an abstract outside them. "
            "Intervals: 95% percentile bootstrap over the questions a tool valued. "
            "ragmark's values are weighed by the verdicts' probabilities; the rows "
            "'(hard verdicts)' are the same calls' YES/NO verdicts alone.", "",
            *md_table(["metric", "tool", "items", "tool's mean", "truth's mean",
                       "mean absolute error [95%]", "agreement [95%]"], rows)]


def limit_lines(blocks: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """The section that sets each timed block's wall time against the server's own
    token rates, and names what is above them."""
    timed = [(k, b) for k, b in sorted(blocks.items()) if b.get("limit_s")]
    if not timed:
        return []
    rows = []
    for (tool, metric), b in timed:
        r = b["rates"]
        outside = b["wall_s"] - b["in_flight_s"]
        rows.append([metric, tool, f"{b['wall_s']:.0f}", f"{b['limit_s']:.0f}",
                     f"x{b['wall_s'] / b['limit_s']:.2f}",
                     f"{r['prefill_per_s']:.0f} / {r['decode_per_s']:.1f} ({r['calls']})",
                     f"{outside:.0f}", f"{b['in_flight_s'] - b['limit_s']:.0f}",
                     f"{b['refused']}"])
    return ["", "## The speed limit: the server's own token rates", "",
            "The limit is the block's prompt tokens the server evaluated (not those from its "
            "cache) over its prefill rate plus its completion tokens over its decode rate, "
            "the rates measured by llama.cpp's own timings when some of the block's calls "
            "were sent again one at a time with the prompt cache off. Outside the server: "
            "the block's wall time when none of its calls was with the server (the tool's "
            "start, its models loading, its own work between calls). Above the limit while "
            "calls were with the server: queueing behind its own calls, refused and "
            "re-sent calls, and what the server's batching of two calls gains (negative) "
            "or loses.", "",
            *md_table(["metric", "tool", "wall s", "limit s", "wall / limit",
                       "prefill / decode tokens/s (calls timed)", "outside the server s",
                       "with the server, above the limit s", "refused calls"], rows)]


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def report(blocks: dict[tuple[str, str], dict[str, Any]], items: list[dict[str, Any]],
           info: dict[str, str], args: Any) -> list[str]:
    n = len(items)
    lines = header_lines(f"Local judges: ragmark vs RAGAS 0.4.3 on {args.alias}", info,
                         "python benchmarks/judges_vs_ragas.py " + shown(sys.argv[1:]))
    lines += [f"{n} SciFact questions ({sum(it['supported'] for it in items)} answers from "
              "the relevant abstract, the others from an abstract outside the contexts), "
              f"5 contexts each (chunks of up to {CHUNK_CHARS} characters); {info['server']}, "
              f"{args.slots} slots of {args.n_ctx} tokens, behind one counting proxy; "
              "both tools: "
              f"concurrency {args.concurrency}, timeout "
              f"{args.timeout:g} s, {args.retries} retries, empty caches.", ""]
    if args.remark:
        lines += [args.remark, ""]
    head = ["metric", "tool", f"values of {n}", "wall s", "calls", "refused",
            "prompt tokens", "of them from the server's cache", "completion tokens",
            "answers cut at the cap", "failures"]
    rows = []
    for metric in METRICS:
        for tool in TOOLS:
            b = blocks.get((tool, metric))
            if b is None:
                rows.append([metric, tool, "not measured in this run", *[""] * 8])
                continue
            got = sum(v is not None for v in b["values"].values())
            fails = ", ".join(f"{k} x{v}" for k, v in sorted(b["failures"].items(),
                                                             key=lambda kv: -kv[1]))
            cached = b.get("cached_tokens")
            rows.append([metric, tool, str(got), f"{b['wall_s']:.0f}", str(b["calls"]),
                         str(b["refused"]), f"{b['prompt_tokens']:,}",
                         "—" if cached is None else f"{cached:,}",
                         f"{b['completion_tokens']:,}", str(b["cut_by_length"]),
                         fails.replace("|", "/") or "—"])
    lines += md_table(head, rows)
    both = [m for m in METRICS if all((tool, m) in blocks for tool in TOOLS)]
    lines += ["", "## The metrics measured for both tools, together", "",
              f"{', '.join(both) or 'none'}{'' if len(both) == len(METRICS) else ' only'}.",
              ""]
    sums = {tool: {k: sum(blocks[(tool, m)][k] for m in both)
                   for k in ("wall_s", "calls", "prompt_tokens", "completion_tokens")}
            for tool in TOOLS}
    got = {tool: sum(v is not None for m in both for v in blocks[(tool, m)]["values"].values())
           for tool in TOOLS}
    rows = [[tool, f"{got[tool]} of {n * len(both)}", f"{s['wall_s']:.0f}", str(s["calls"]),
             f"{s['prompt_tokens']:,}", f"{s['completion_tokens']:,}"]
            for tool, s in sums.items()]
    lines += md_table(["tool", "values", "wall s", "calls", "prompt tokens",
                       "completion tokens"], rows)
    r, g = sums["ragmark"], sums["ragas"]
    if g["wall_s"] and g["prompt_tokens"]:
        lines += ["", f"ragmark / RAGAS: wall time x{r['wall_s'] / g['wall_s']:.2f}, "
                  f"prompt tokens x{r['prompt_tokens'] / g['prompt_tokens']:.2f}, "
                  f"calls x{r['calls'] / max(g['calls'], 1):.2f}, values "
                  f"{got['ragmark']} against {got['ragas']}"
                  + (" (a tool that gives up after a first call that does not parse spends "
                     "fewer tokens and gets nothing)." if got["ragas"] < got["ragmark"]
                     and g["prompt_tokens"] < r["prompt_tokens"] else ".")]
    lines += ["", "## Do the values agree, and does faithfulness separate?", ""]
    rows = []
    for metric in METRICS:
        a, b = blocks.get(("ragmark", metric)), blocks.get(("ragas", metric))
        if a is None or b is None:
            continue
        both = [(a["values"][i], b["values"][i]) for i in a["values"]
                if a["values"][i] is not None and b["values"].get(i) is not None]
        rho = spearman([x for x, _ in both], [y for _, y in both])
        rows.append([metric, str(len(both)), _fmt(rho, 2)])
    lines += md_table(["metric", "items both valued", "Spearman rho"], rows)
    lines.append("")
    rows = []
    for tool in TOOLS:
        b = blocks.get((tool, "faithfulness"))
        if b is None:
            continue
        m, *cells = separation(b, items)
        rows.append([tool, str(m), *cells])
    lines += md_table(["tool", "items with a value", "faithfulness ROC AUC",
                       "95% bootstrap interval", "mean (supported)", "mean (unsupported)"],
                      rows)
    lines += truth_lines(blocks, items)
    lines += limit_lines(blocks)
    refusals = sorted({f"{b['tool']} {b['metric']}: {e}" for b in blocks.values()
                       for e in b.get("refusals", [])})
    if refusals:
        lines += ["", "Refused calls (HTTP 4xx/5xx), the server's words:", ""]
        lines += [f"- {r}" for r in refusals]
    measured = [f"{b['tool']} {b['metric']}: {b['measured']}, ragmark at {b.get('git', '?')}, "
                f"{b.get('slots', 2)} slots, load average after {b['load_after']}"
                for b in blocks.values()]
    lines += ["", "Blocks measured (each tool and metric, when and where):", ""]
    lines += [f"- {m}" for m in sorted(measured)]
    lines += ["", "Load average at the end: " + load_average() + "."]
    return lines

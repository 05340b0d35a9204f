"""Several label judges side by side (``ragmark label --judge-model A --judge-model B``).

Each judge labels the same (question, passage) pairs; each gets its own
:class:`~ragmark.passage_labels.LabelRun` (and files), and the side-by-side summary gives, per
config, each judge's answer presence and precision at K, each judge's agreement with the
ground truth, and for every pair of judges their agreement on the pairs both labelled
(raw, and Cohen's kappa with a bootstrap 95% interval).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmark.llm import LLMSettings
from ragmark.passage_labels.tops import Pair, TopK, label_pairs, labelled
from ragmark.progress import Progress
from ragmark.stats.agreement import evaluate
from ragmark.types import Score


def side_by_side(top: TopK, judges: Sequence[LLMSettings], template: str | None = None,
                 progress: Progress | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each judge's LabelRun by model name, and the side-by-side summary."""
    pairs = top.pairs()
    runs: dict[str, Any] = {}
    labels: dict[str, dict[Pair, Score]] = {}
    for s in judges:
        labels[s.model], llm = label_pairs(pairs, s, template, progress)
        runs[s.model] = labelled(top, labels[s.model], llm, template)
    k = top.top_k
    summary: dict[str, Any] = {"top_k": k, "judges": list(runs), "configs": {}, "pairs": []}
    for name in top.reports:
        summary["configs"][name] = {
            m: {f"answer_presence@{k}": r.configs[name].metrics[f"answer_presence@{k}"].value,
                f"judged_precision@{k}":
                    r.configs[name].metrics[f"judged_precision@{k}"].value,
                "agreement_with_truth": (None if r.configs[name].agreement is None
                                         else r.configs[name].agreement.to_json())}
            for m, r in runs.items()}
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = [p for p in pairs if labels[a][p].ok and labels[b][p].ok]
            entry: dict[str, Any] = {"first": a, "second": b, "passages": len(both)}
            if len(both) >= 2:
                va = [labels[a][p].value == 1.0 for p in both]
                vb = [labels[b][p].value == 1.0 for p in both]
                entry["raw_agreement"] = sum(x == y for x, y in zip(va, vb, strict=True)) / len(
                    both)
                entry["kappa"] = evaluate(va, vb)["kappa"]
            summary["pairs"].append(entry)
    return runs, summary


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The side-by-side summary for the console and the Markdown."""
    k = summary["top_k"]
    lines = [f"Judges side by side (top {k}):"]
    for cfg, by_judge in summary["configs"].items():
        for m, v in by_judge.items():
            ap, pr = v[f"answer_presence@{k}"], v[f"judged_precision@{k}"]
            agr = v["agreement_with_truth"]
            lines.append(
                f"  {cfg} / {m}: answer presence@{k} "
                f"{'-' if ap is None else f'{ap:.3f}'}, judged precision@{k} "
                f"{'-' if pr is None else f'{pr:.3f}'}"
                + ("" if not agr or agr.get("kappa") is None
                   else f", kappa with the ground truth {agr['kappa']:.3f}"))
    for p in summary["pairs"]:
        if "kappa" not in p:
            lines.append(f"  {p['first']} vs {p['second']}: {p['passages']} passages both "
                         "labelled, too few to compare")
            continue
        kap = p["kappa"]
        kap_text = (f"kappa {kap['value']:.3f} [{kap['ci_low']:.3f}, {kap['ci_high']:.3f}]"
                    if kap.get("value") is not None else f"kappa none ({kap['reason']})")
        lines.append(f"  {p['first']} vs {p['second']} on {p['passages']} passages: agree "
                     f"on {p['raw_agreement']:.1%}, {kap_text}")
    return lines

"""Markdown writer for comparisons: one row per config, changes and their significance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmark.analysis.trajectory_view import trajectories_summary
from ragmark.llm.accounting import COMPONENTS
from ragmark.report.console import ReasonKeys, label
from ragmark.results.model import RunReport, failing_cell
from ragmark.running.compare import Comparison, change_sentence
from ragmark.stats.baseline import out_of_reach

TEST_NAMES = {"permutation": "paired randomisation (sign-flip) test", "t": "paired t-test"}


def _cell(c: Comparison, config: str, metric: str, keys: ReasonKeys) -> str:
    report = c.reports[config]
    agg = report.metrics.get(metric)
    if agg is None:
        return "—"
    short = " †" if metric in report.short_metrics else ""
    refs = keys.cell(agg).partition(" ")[2]  # the footnote marks of the missing reasons
    if agg.value is None:
        return f"— (n=0/{agg.missing}){refs}"
    text = f"{agg.value:.4f}{short}"
    total = agg.n + agg.missing
    if agg.missing:
        text += f" (n={agg.n}/{total}){refs}"
    row = c.row(config, metric)
    if row is not None and row.relative_change is not None:
        base = c.reports[c.baseline].metrics.get(metric)
        # the change pairs the questions both have: say so when the means shown differ
        paired = "" if base is not None and row.n == agg.n == base.n else (
            f" on the {row.n} question{'s' if row.n != 1 else ''} both have")
        text += f" ({row.relative_change * 100:+.1f}%{paired})"
    if row is not None and row.significant:
        text += "*"
    return text


def llm_parts(llm: dict[str, Any]) -> list[str]:
    """``judges 3 calls (+3 cached), 90 + 15 tokens, $0.0001`` for each part that asked
    a model."""
    parts = [("judges", llm)] if "calls" in llm else []
    parts += [(p, llm[p]) for p in COMPONENTS if llm.get(p)]
    out = []
    for name, m in parts:
        cost = m.get("estimated_cost")
        hits = m.get("cache_hits", 0)
        out.append(f"{name} {m.get('calls', 0)} calls"
                   + (f" (+{hits} cached)" if hits else "")
                   + f", {m.get('prompt_tokens', 0):,} + "
                   f"{m.get('completion_tokens', 0):,} tokens"
                   + ("" if cost is None else f", ${cost:.4f}"))
    return out


def _family_text(correction: str, tested: list[Any]) -> str:
    if correction == "none":
        return f"not corrected for multiple comparisons ({len(tested)} made)"
    if correction == "all":
        return f"Holm-corrected over all {len(tested)} comparisons made"
    sizes = sorted({r.family_size for r in tested})
    each = (f"{sizes[0]} comparison{'s' * (sizes[0] != 1)}" if len(sizes) == 1
            else "as many comparisons as configs with values")
    return (f"Holm-corrected per metric (one family per metric, each config against the "
            f"baseline: {each} in each family; --correction all for one family of all "
            f"{len(tested)})")


def _calls(total: dict[str, Any]) -> str:
    hits = total.get("cache_hits", 0)
    return f"{total.get('calls', 0)}" + (f" (+{hits} cached)" if hits else "")


def comparison_markdown(c: Comparison, timings: bool = True) -> str:
    """The comparison table, its footnote, the intervals, the changes and (optionally)
    the latency and cost table. Without timings the text is the same on every rerun."""
    lines = _table(c) + _intervals(c)
    for name, r in c.reports.items():
        if r.conversations:
            lines += ["", *turns_markdown(r.conversations, c.metrics, name)]
    if c.rows:
        lines += ["", f"### Changes against {c.baseline}", ""]
        lines += [f"- {change_sentence(r, c.baseline, label(r.metric))}" for r in c.rows]
    if c.pairwise is not None:
        from ragmark.report.round_robin import pairwise_markdown

        lines += pairwise_markdown(c.pairwise)
    if c.ranking is not None:
        from ragmark.analysis.rank_against import ranking_markdown

        lines += ranking_markdown(c.ranking)
    if timings:
        lines += _costs(c)
    return "\n".join(lines) + "\n"


def _table(c: Comparison) -> list[str]:
    """The table of means, its footnotes and how the changes were tested."""
    cols = c.metrics
    st = c.settings
    first = next(iter(c.reports.values()))
    lines = [
        f"## ragmark compare: {first.dataset.get('name')} "
        f"({first.dataset.get('queries')} questions)",
        "",
        "| Config | " + " | ".join(label(m) for m in cols) + " | Queries |",
        "|---|" + "---:|" * len(cols) + "---:|",
    ]
    keys = ReasonKeys()
    for name, r in c.reports.items():
        shown = f"{name} (baseline)" if name == c.baseline else name
        cells = [_cell(c, name, m, keys) for m in cols]
        lines.append(f"| {shown} | " + " | ".join(cells) + f" | {r.dataset['queries']} |")
    tested = [r for r in c.rows if r.p_adjusted is not None]
    reach = out_of_reach(c.rows, st.test, st.alpha, st.n_resamples)
    lines += [""]
    notes = keys.footnotes()
    if notes:
        lines += ["`n=a/b`: the value covers a of b questions; the others are missing, and "
                  "why:", "", *[f"- {n}" for n in notes], ""]
    short = {name: r.config.get("top_k") for name, r in c.reports.items() if r.short_metrics}
    if short:
        lines += ["`†` computed on rankings shorter than the cutoff (--allow-short-rankings; "
                  + ", ".join(f"{n}: top_k = {k}" for n, k in short.items()) + ").", ""]
    return lines + [
        f"Changes are relative to the baseline **{c.baseline}**. `*` marks a difference "
        f"that is significant at α = {st.alpha:g} by a {TEST_NAMES[st.test]}"
        + (f" ({st.n_resamples:,} resamples, seed {st.seed})" if st.test == "permutation"
           else "")
        + f", {_family_text(st.correction, tested)}."
        + ("" if reach is None else f" {reach}"),
        "",
        *[f"Note: {n}\n" for n in dict.fromkeys(n for r in c.reports.values() for n in r.notes)],
    ]


def _intervals(c: Comparison) -> list[str]:
    """The bootstrap intervals of each config's means."""
    cols = c.metrics
    st = c.settings
    lines = [
        f"### {st.confidence:.0%} intervals of the mean",
        "",
        "| Config | " + " | ".join(label(m) for m in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for name in c.reports:
        cells = []
        for m in cols:
            iv = c.intervals[name].get(m)
            cells.append("—" if iv is None else f"[{iv.low:.4f}, {iv.high:.4f}]")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [
        "",
        f"Percentile bootstrap over queries, {st.n_resamples:,} resamples, seed {st.seed}; "
        "where every value is 0 or 1 (a hit rate, an exact match), Wilson's score interval "
        "of a proportion (a bootstrap of equal values would be a point).",
    ]


def _costs(c: Comparison) -> list[str]:
    """The latency and cost table, and the LLM calls by part."""
    lines = [
        "",
        "### Latency and cost",
        "",
        "| Config | Index build (s) | Retrieval p50 (ms) | Retrieval p95 (ms) | LLM calls "
        "| LLM tokens | Cost ($) | Total (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in c.reports.items():
        t = r.timings
        total = r.llm.get("total", {})
        tokens = total.get("prompt_tokens", 0) + total.get("completion_tokens", 0)
        cost = total.get("estimated_cost", 0.0)  # no LLM call at all: nothing to pay
        lines.append(
            f"| {name} | {t.get('index_s', 0.0):.2f} | {t.get('latency_p50_ms', 0.0):.1f} "
            f"| {t.get('latency_p95_ms', 0.0):.1f} | {_calls(total)} "
            f"| {tokens:,} | {'—' if cost is None else f'{cost:.4f}'} "
            f"| {t.get('total_s', 0.0):.2f} |"
        )
    judged = (c.pairwise or {}).get("llm") or {}
    if judged.get("calls") or judged.get("cache_hits"):  # the matches', not a config's
        tokens = judged.get("prompt_tokens", 0) + judged.get("completion_tokens", 0)
        cost = judged.get("estimated_cost")
        lines.append(f"| the pairwise judge (every match) | — | — | — | {_calls(judged)} "
                     f"| {tokens:,} | {'—' if cost is None else f'{cost:.4f}'} | — |")
    parts = [f"- {name}: " + "; ".join(parts) for name, r in c.reports.items()
             if (parts := llm_parts(r.llm))]
    if parts:
        lines += ["", "LLM calls by part:", "", *parts]
    return lines + [
        "",
        "Retrieval latency is per question, one question at a time (reranking "
        "included); embeddings served from ragmark's cache cost no encoding time. LLM "
        "calls, tokens and cost count the generator, the reranker and the judges "
        "(calls served from the cache are free); a cost of — needs --llm-prices.",
    ]


def run_markdown(report: RunReport) -> str:
    """A run's aggregates as a short Markdown table (for a CI summary)."""
    keys = ReasonKeys()
    lines = [f"### ragmark run: {report.config.get('name')} on {report.dataset.get('name')} "
             f"({report.dataset.get('queries')} questions)", "",
             "| Metric | Value | Questions | Missing |", "|---|---:|---:|---:|"]
    for name, agg in report.metrics.items():
        value = "—" if agg.value is None else f"{agg.value:.4f}"
        short = " †" if name in report.short_metrics else ""
        lines.append(f"| {label(name)}{short} | {value} | {agg.n} | {keys.cell(agg)} |")
    notes = keys.footnotes()
    lines += ([""] + [f"- {n}" for n in notes] if notes else [])
    if report.hops:
        lines += ["", "Retrieval by hop (each step judged on its own ranking):", "",
                  "| Hop | Questions | Recall | Hit | MRR | Found first |",
                  "|---:|---:|---:|---:|---:|---:|"]
        lines += [f"| {h.hop} | {h.questions} | {_num(h.recall)} | {_num(h.hit)} | "
                  f"{_num(h.mrr)} | {h.found} of {h.found_any} |" for h in report.hops]
    agents = trajectories_summary(report.queries)
    lines += ["", *agents] if agents else []
    if report.conversations:
        lines += ["", *turns_markdown(report.conversations, [
            m for m in report.metrics if m in report.conversations["overall"]][:6])]
    lines += ([""] + [f"Note: {n}" for n in report.notes] if report.notes else [])
    return "\n".join(lines) + "\n\n"


def turns_markdown(conv: dict[str, Any], metrics: Sequence[str], config: str | None = None
                   ) -> list[str]:
    """Conversations: each metric's mean per turn position, then over the conversations
    (the mean of their means, their last turns, how many fail at some turn)."""
    shown = [m for m in metrics if m in conv["overall"]]
    if not shown:
        return []
    o = conv["overall"]
    lines = [f"Conversations{f' ({config})' if config else ''}: {conv['conversations']}, "
             "each metric by turn:", "",
             "| Turn | Questions | " + " | ".join(label(m) for m in shown) + " |",
             "|---|---:|" + "---:|" * len(shown)]
    lines += [f"| {t['turn']} | {t['questions']} | "
              + " | ".join(_num(t["metrics"][m]["mean"]) for m in shown) + " |"
              for t in conv["by_turn"]]
    lines += [f"| per conversation | {conv['conversations']} | "
              + " | ".join(_num(o[m]["mean_of_conversations"]) for m in shown) + " |",
              "| last turn | | " + " | ".join(_num(o[m]["last_turn"]) for m in shown) + " |",
              "| failing | | " + " | ".join(failing_cell(o[m]) for m in shown) + " |"]
    return lines


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:.4f}"

"""Console writer: the report as a person reads it (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmark.llm.accounting import COMPONENTS
from ragmark.metrics.names import catalogue, read_name
from ragmark.results.model import (
    Aggregate,
    HopSummary,
    RunReport,
    failing_cell,
    grouped_reasons,
    reason_text,
)


def label(name: str) -> str:
    """``ndcg@10`` -> ``nDCG@10``, from the metric catalogue; names it does not know stay
    as they are."""
    base = read_name(name).name
    spec = catalogue().get(base)
    return (spec.label or base) + name[len(base):] if spec is not None else name


def _fmt(a: Aggregate) -> str:
    return "—" if a.value is None else f"{a.value:.4f}"


def print_report(report: RunReport, console: Console, verbose: bool = False) -> None:
    ds, cfg = report.dataset, report.config
    console.print(
        f"[bold]ragmark[/bold] · config [cyan]{escape(str(cfg.get('name')))}[/cyan] · "
        f"dataset [cyan]{escape(str(ds.get('name')))}[/cyan] ({ds.get('format')}, "
        f"{ds.get('queries')} questions, "
        f"{ds.get('documents')} documents, {ds.get('chunks')} chunks, unit {cfg.get('unit')})",
        markup=True,
    )
    if verbose:
        for q in report.queries:
            parts = [f"{k}={s.value:.3f}" if s.ok else f"{k}=missing ({s.reason})"
                     for k, s in q.metrics.items()]
            console.print(f"  {q.id}: " + ", ".join(parts), highlight=False, markup=False)
    table = Table(show_header=True, header_style="bold")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("queries", justify="right")
    table.add_column("missing", justify="right")
    keys = ReasonKeys()
    for name, agg in report.metrics.items():
        shown = label(name) + (" †" if name in report.short_metrics else "")
        table.add_row(shown, _fmt(agg), str(agg.n), keys.cell(agg))
    console.print(table)
    for line in keys.footnotes():
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if report.short_metrics:
        console.print(f"† computed on rankings shorter than the cutoff (top_k = "
                      f"{next(iter(report.short_metrics.values()))}; --allow-short-rankings)",
                      highlight=False)
    if report.hops:
        console.print(hops_table(report.hops))
    if report.conversations:
        console.print(turns_table(report.conversations, list(report.metrics)[:4]))
    n_total = ds.get("queries", 0)
    ret = next((a for k, a in report.metrics.items() if k.startswith(("recall", "mrr"))), None)
    g = report.metrics.get("groundedness")
    console.print(
        f"Query counts: total {n_total}"
        + (f" · with retrieval eval {ret.n}" if ret else "")
        + (f" · with groundedness eval {g.n}" if g else ""),
        highlight=False,
    )
    t = report.timings
    if "latency_p50_ms" in t:
        console.print(
            f"Time: index {t.get('index_s', 0.0):.2f} s"
            f"{' (loaded from the cache)' if ds.get('index') == 'loaded' else ''} · "
            f"{'pipeline' if 'pipeline_s' in t else 'retrieval'} per question p50 "
            f"{t['latency_p50_ms']:.1f} ms, p95 {t['latency_p95_ms']:.1f} ms"
            + (f" ({int(t['latency_sample'])} timed one at a time) · "
               f"{t['questions_per_s']:,.0f} questions/s" if "questions_per_s" in t else "")
            + " · total "
            f"{t.get('total_s', 0.0):.2f} s",
            highlight=False,
        )
    if "calls" in report.llm:
        console.print(llm_line("judges", report.llm), highlight=False, markup=False,
                      soft_wrap=True)
    for part in COMPONENTS:
        if report.llm.get(part):
            console.print(llm_line(part, report.llm[part]), highlight=False, markup=False,
                          soft_wrap=True)
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True, markup=True)


def _mean(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def hops_table(hops: Sequence[HopSummary]) -> Table:
    """Retrieval by step: each hop judged on its own, and which hop first found the
    relevant targets."""
    table = Table(title="Retrieval by hop (each step judged on its own ranking)",
                  show_header=True, header_style="bold", title_justify="left")
    for col in ("hop", "span", "questions", "recall", "hit", "MRR", "found first"):
        table.add_column(col, justify="left" if col == "span" else "right")
    for h in hops:
        names = ", ".join(sorted(h.names, key=lambda n: -h.names[n])[:2])
        share = f"{h.found} of {h.found_any}" if h.found_any else "-"
        table.add_row(str(h.hop), names, str(h.questions), _mean(h.recall), _mean(h.hit),
                      _mean(h.mrr), share)
    return table


def turns_table(conv: dict[str, Any], metrics: Sequence[str]) -> Table:
    """Conversations: each metric's mean per turn position, then over the conversations
    (the mean of their means, their last turns, how many fail somewhere)."""
    table = Table(title=f"{conv['conversations']} conversations, by turn",
                  show_header=True, header_style="bold", title_justify="left")
    table.add_column("turn")
    table.add_column("questions", justify="right")
    shown = [m for m in metrics if m in conv["overall"]]
    for m in shown:
        table.add_column(label(m), justify="right")
    for t in conv["by_turn"]:
        table.add_row(str(t["turn"]), str(t["questions"]),
                      *(_mean(t["metrics"][m]["mean"]) for m in shown))
    o = conv["overall"]
    table.add_row("per conversation", str(conv["conversations"]),
                  *(_mean(o[m]["mean_of_conversations"]) for m in shown))
    table.add_row("last turn", "", *(_mean(o[m]["last_turn"]) for m in shown))
    table.add_row("failing", "", *(failing_cell(o[m]) for m in shown))
    return table


class ReasonKeys:
    """Missing-value reasons as footnotes: a table cell says ``12 [1]`` and each distinct
    reason is written once below the table as ``[1] reason (12 questions)``."""

    def __init__(self) -> None:
        self._keys: dict[tuple[str, int], int] = {}

    def cell(self, agg: Aggregate) -> str:
        if not agg.missing:
            return "0"
        refs = [self._key(reason_text(r, v), n)
                for r, (n, v) in grouped_reasons(agg.reasons).items()]
        return f"{agg.missing} " + "".join(f"[{k}]" for k in refs)

    def _key(self, reason: str, n: int) -> int:
        return self._keys.setdefault((reason, n), len(self._keys) + 1)

    def footnotes(self) -> list[str]:
        return [f"[{k}] {reason} ({questions(n)})" for (reason, n), k in self._keys.items()]


def questions(n: int) -> str:
    return f"{n} question" + ("" if n == 1 else "s")


def llm_line(role: str, m: dict[str, Any], left: str = "without a verdict") -> str:
    """One line of LLM accounting: calls, cache hits, re-asks, retries, failed calls,
    items ``left`` without a verdict (a failed call or unusable output after the
    re-ask), tokens, estimated cost."""
    cost = m.get("estimated_cost")
    if "texts_embedded" in m:  # an embedding endpoint: no answers to judge
        return (f"Embedding endpoint ({m.get('model')}): {m.get('calls', 0)} calls for "
                f"{m['texts_embedded']:,} texts, {m.get('cache_hits', 0):,} texts from the "
                f"cache, {m.get('retries', 0)} retries, {m.get('failures', 0)} failed calls; "
                f"{m.get('prompt_tokens', 0):,} tokens"
                + ("" if cost is None else f"; estimated cost ${cost:.4f}"))
    reasks = m.get("judge_reasks", m.get("reasks", 0))
    unusable = m.get("judge_failures", m.get("passages_failed", 0))
    return (
        f"LLM {role} ({m.get('model')}): {m.get('calls', 0)} calls, {m.get('cache_hits', 0)} "
        f"cache hits, {reasks} re-asks, {m.get('retries', 0)} retries, "
        f"{m.get('failures', 0)} failed calls, {unusable} {left}; tokens "
        f"{m.get('prompt_tokens', 0):,} prompt + {m.get('completion_tokens', 0):,} completion"
        + ("" if cost is None else f"; estimated cost ${cost:.4f}")
        + (f"; {m.get('batch_calls', 0)} calls in provider batch jobs "
           f"{', '.join(m['batch_jobs'])}" if m.get("batch_jobs") else ""))

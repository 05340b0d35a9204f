"""``ragmark monitor``: evaluate a production source's new records as a window, show the
trend, gate on drift; or (``--listen``) receive OTLP/HTTP traces into a spool."""

from __future__ import annotations

import signal
import threading
from dataclasses import fields
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ragmark.analysis.gates import Condition, check
from ragmark.cli.app import (
    alpha_option,
    cli,
    consoles,
    data_options,
    dry_run_option,
    history_option,
    quiet_option,
    search_tool_option,
    trace_options,
)
from ragmark.cli.llm_opts import endpoint_opts, llm_flags
from ragmark.cli.shared import option
from ragmark.monitor.receiver import serve
from ragmark.plan.monitor import MonitorRequest, plan_monitor
from ragmark.report.junit import append_step_summary, write_junit


def _opts(f: Any) -> Any:
    for o in reversed(endpoint_opts()):
        f = o(f)
    return f


@cli.command("monitor")
@click.argument("source", required=False, type=click.Path(path_type=Path))
@option("--name")
@option("--metrics", show_default="on every record, those of groundedness, "
        "empty_retrieval, refusal, latency_s, retrieval_latency_s, generation_latency_s, "
        "tokens, cost_usd, feedback the source records")
@option("--judge-metrics")
@click.option("--sample", type=click.FloatRange(0, 1, min_open=True), default=0.05,
              show_default=True, help="Share of records the judges see, picked by a hash "
                                      "of the record id (reruns pick the same).")
@click.option("--budget-calls", type=click.IntRange(min=0),
              help="At most this many judge calls a window (estimated; the sample is cut).")
@click.option("--budget-cost", type=click.FloatRange(min=0),
              help="At most this estimated judge cost (USD) a window (needs --llm-prices).")
@click.option("--fail-on-drift", metavar="METRICS",
              help="Exit 1 when one of these metrics drifted the bad way in the newest "
                   "window (Welch's t-test against the reference, Holm-corrected).")
@click.option("--reference", type=click.IntRange(min=1), default=5, show_default=True,
              help="Drift reference: the previous N windows, pooled.")
@click.option("--reference-run", type=int, help="Drift reference: this run of the history "
                                                "instead (a pinned window or run).")
@option("--margin", type=click.FloatRange(min=0), default=0.0, show_default=True)
@alpha_option()
@option("--output", "outputs", multiple=True, metavar="FILE")
@option("--junit", metavar="FILE")
@history_option
@trace_options
@search_tool_option
@click.option("--root-wait", type=click.FloatRange(min=0), default=300.0, show_default=True,
              metavar="SECONDS", help="For traces: a trace whose root span has not come "
              "this long after its last span ended is evaluated with its earliest orphan "
              "as the root (a root whose parent is remote is the root at once).")
@click.option("--retain-questions", "retain_questions", metavar="AGE",
              help="Keep each window's per-question values this long (30d, 12h): older "
              "windows of the source are pruned as new ones are recorded (aggregates, "
              "verdicts and the trend stay). Default: kept for ever.")
@data_options
@dry_run_option
@click.option("--follow", is_flag=True, help="Keep watching: a window whenever records "
              "arrive (Ctrl-C stops).")
@click.option("--interval", type=click.FloatRange(min=0.05), default=5.0, show_default=True,
              help="With --follow: seconds between looks.")
@option("--listen", metavar="HOST:PORT")
@click.option("--spool", type=click.Path(path_type=Path), help="With --listen: the folder "
              "the export requests are appended to (monitor it as a SOURCE).")
@option("--token")
@click.option("--max-body-mb", type=click.FloatRange(min=0.001), default=16.0,
              show_default=True, help="With --listen: the largest request accepted.")
@quiet_option
@_opts
def monitor_cmd(**flags: Any) -> None:
    """Evaluate the records of SOURCE (a JSONL log of outputs, a file or folder of OTLP
    JSON traces, the receiver's spool) that no earlier window evaluated; record them as a
    window in the history; show the trend; gate on drift.

    Exit 0, or 1 when --fail-on-drift found drift, 2 on bad input or usage."""
    out, progress = consoles(flags["quiet"])
    if flags["listen"]:
        return _listen(out, flags)
    if flags["source"] is None:
        raise click.UsageError("give the SOURCE to monitor (or --listen HOST:PORT --spool "
                               "DIR to receive traces)")
    from ragmark.monitor.windows import estimate_window, monitor_once

    settings = plan_monitor(_request(flags))

    if not flags["follow"]:
        w = (estimate_window(settings) if flags["dry_run"] else
             monitor_once(settings, progress))
        _show(out, w, settings, flags)
        return _gate(out, [w], settings, flags)
    windows = _follow(out, settings, flags, progress)
    return _gate(out, windows, settings, flags)


def _follow(out: Console, settings: Any, flags: dict[str, Any], progress: Any) -> list[Any]:
    """Windows until Ctrl-C or SIGTERM, which stop after the window in progress (a
    second Ctrl-C stops at once; the window then is not recorded, its records wait)."""
    from ragmark.monitor.windows import monitor_once

    stop = threading.Event()

    def on_signal(*_: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    windows = []
    try:
        while not stop.is_set():
            w = monitor_once(settings, progress)
            if w.id is not None:
                windows.append(w)
                _show(out, w, settings, flags)
            stop.wait(flags["interval"])
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    out.print(f"stopped: {len(windows)} window{'s' if len(windows) != 1 else ''} recorded",
              highlight=False)
    return windows


def _request(flags: dict[str, Any]) -> Any:
    """The monitor's request of this command's flags."""
    names = {f.name for f in fields(MonitorRequest)}
    return MonitorRequest(**{k: v for k, v in flags.items() if k in names},
                          llm_flags=llm_flags())


def _show(out: Console, w: Any, s: Any, flags: dict[str, Any]) -> None:
    from ragmark.monitor.output import percentiles, write

    n = 0 if w.batch.oset is None else len(w.batch.oset.dataset.samples)
    if flags["dry_run"]:
        j = w.judged
        out.print(f"dry run: {n} new record{'s' if n != 1 else ''} in {s.source}"
                  + (f"; the judges ({', '.join(j['judges'])}) would see {j['judged']} of "
                     f"{j['sampled']} sampled (--sample {s.sample}): about "
                     f"{j.get('calls_in_budget', 0)} calls (at most "
                     f"{j.get('at_most') or 0} for all {j['sampled']} with re-asks)"
                     + (f", ${j['estimated_cost']:.4f}" if j.get("estimated_cost") else "")
                     if j.get("judges") else "; no judge metric (cheap metrics only)"),
                  highlight=False, soft_wrap=True, markup=False)
    elif w.report is None:
        last = w.trend[-1].id if w.trend else None
        out.print(f"no new record in {s.source}"
                  + (f" since the last window (history run {last})" if last is not None
                     else ""), highlight=False, markup=False)
    else:
        table = Table(title=Text(f"window {w.number} of {s.system} (history run {w.id}): "
                                 f"{n} records"),
                      title_justify="left", header_style="bold")
        for col in ("metric", "value", "records", "missing", "previous"):
            table.add_column(col, justify="left" if col == "metric" else "right")
        prev = w.trend[-2] if len(w.trend) > 1 else None
        for m, a in w.report.metrics.items():
            before = prev.means.get(m) if prev else None
            table.add_row(m, "-" if a.value is None else f"{a.value:.4g}", str(a.n),
                          str(a.missing), "-" if not before or before[0] is None
                          else f"{before[0]:.4g}")
        out.print(table)
        pct = percentiles(w.report)
        if pct:
            out.print("latency per record: " + ", ".join(
                f"{k} {v:.3g} s" for k, v in pct.items()), highlight=False)
        if w.satisfaction:
            _satisfaction(out, w.satisfaction)
        for d in w.drift:
            out.print(("[red]" if d.drifted else "") + escape(d.line(s.margin, s.alpha))
                      + ("[/red]" if d.drifted else ""), soft_wrap=True, highlight=False,
                      markup=True)
    for note in w.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True, markup=True)
    if not flags["dry_run"]:
        for o in flags["outputs"]:
            out.print(f"written: {write(w, s, o)}", highlight=False)


def _satisfaction(out: Console, rows: list[Any]) -> None:
    table = Table(title="what users are satisfied with: each metric against their feedback "
                        "(AUC for thumbs, Spearman for scores; 95 % bootstrap interval)",
                  title_justify="left", header_style="bold")
    for col in ("metric", "measure", "value", "interval", "n"):
        table.add_column(col, justify="left" if col in ("metric", "measure") else "right")
    for a in rows:
        table.add_row(a.metric, a.measure, "-" if a.value is None else f"{a.value:.3f}",
                      "-" if a.low is None else f"{a.low:.3f} to {a.high:.3f}", str(a.n))
    out.print(table)


def _gate(out: Console, windows: list[Any], s: Any, flags: dict[str, Any]) -> None:
    from ragmark.monitor.output import window_markdown

    if flags["dry_run"]:
        return
    conds = [Condition(f"drift {d.metric} (window {w.number})", not d.drifted,
                       d.line(s.margin, s.alpha)) for w in windows for d in w.drift]
    conds += asked_conditions(windows, s)
    if flags["junit"] and s.fail_on_drift:
        out.print(f"JUnit XML written to {write_junit(conds, flags['junit'])}", highlight=False)
    for w in windows:
        append_step_summary(window_markdown(w, s))
    check(conds)


def asked_conditions(windows: list[Any], s: Any) -> list[Any]:
    """A metric asked for by name (--metrics, --judge-metrics) that got no value for any
    record of a window fails the command, as it fails a run (and the window is recorded
    as failed)."""
    from ragmark.monitor.windows import unvalued

    return [Condition(f"{m} has a value (window {w.number})", False, why)
            for w in windows if w.report is not None
            for m, why in unvalued(w.report, s, w.number)]


def _listen(out: Console, flags: dict[str, Any]) -> None:
    if flags["spool"] is None:
        raise click.UsageError("--listen needs --spool DIR (where the traces are kept)")
    serve(flags["listen"], flags["spool"], token=flags["token"],
          max_body=int(flags["max_body_mb"] * 1024 * 1024), say=lambda t: out.print(
              t, highlight=False, soft_wrap=True))

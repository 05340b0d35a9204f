"""What a monitor window is written as: JSON (everything), Markdown (the CI summary) and
an HTML page with the trend (each metric over the windows, as points with their 95 %
intervals, a window that drifted marked)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.monitor.windows import Point, Settings, Window
from ragmark.report import svg
from ragmark.results.codec import num
from ragmark.results.model import RunReport
from ragmark.versions import versions

FORMATS = {".json": "json", ".md": "markdown", ".html": "html"}


def _point(p: Point) -> dict[str, Any]:
    return {"id": p.id, "created_at": p.created_at, "records": p.records, "drift": p.flagged,
            "metrics": {m: {"mean": num(v[0]), "low": num(v[1]), "high": num(v[2]),
                            "n": v[3]} for m, v in p.means.items()}}


def percentiles(report: RunReport | None) -> dict[str, float]:
    """p50, p95 and p99 of the records' latency (seconds), when they record one."""
    if report is None:
        return {}
    xs = [q.metrics["latency_s"].value for q in report.queries
          if "latency_s" in q.metrics and q.metrics["latency_s"].value is not None]
    if not xs:
        return {}

    return {f"p{p}": float(np.percentile(xs, p)) for p in (50, 95, 99)}


def window_json(w: Window, s: Settings) -> dict[str, Any]:
    """The window: its records and sample, each metric with its counts, the drift rows,
    the trend of the source's windows, notes."""
    r = w.report
    out: dict[str, Any] = {
        "kind": "monitor", "source": str(s.source), "system": s.system, "window": w.id,
        "number": w.number,
        "records": 0 if w.batch.oset is None else len(w.batch.oset.dataset.samples),
        "waiting": w.batch.waiting,
        "metrics": {} if r is None else {m: num(a.value) for m, a in r.metrics.items()},
        "counts": {} if r is None else {m: a.to_json() for m, a in r.metrics.items()},
        "latency_s": percentiles(r),
        "sample": w.judged,
        "drift": [{"metric": d.metric, "reference": num(d.reference), "newest": num(d.newest),
                   "n_reference": d.n_reference, "n_newest": d.n_newest,
                   "change": num(d.change), "p": d.p, "p_adjusted": d.p_adjusted,
                   "mde": num(d.mde), "worse": d.worse, "drifted": d.drifted,
                   **({"note": d.note} if d.note else {})} for d in w.drift],
        "drift_test": {"test": "Welch's t-test (unpaired), two-sided", "correction": "holm",
                       "alpha": s.alpha, "margin": s.margin},
        "trend": [_point(p) for p in w.trend],
        "feedback_association": [
            {"metric": a.metric, "measure": a.measure, "value": num(a.value),
             "low": num(a.low), "high": num(a.high), "n": a.n,
             **({"note": a.note} if a.note else {})} for a in w.satisfaction],
        "notes": w.notes,
        "versions": versions(),
    }
    if r is not None and r.llm:
        out["llm"] = r.llm
    return out


def window_markdown(w: Window, s: Settings) -> str:
    """The window as a short Markdown summary (the GitHub step summary)."""
    n = 0 if w.batch.oset is None else len(w.batch.oset.dataset.samples)
    lines = [f"### ragmark monitor: {s.system} ({s.source})", ""]
    if w.report is None:
        lines.append("No new record since the last window.")
    else:
        lines += [f"Window {w.number} (history run {w.id}): {n} records.", "",
                  "| Metric | Value | Records | Missing |",
                  "|---|---:|---:|---:|"]
        for m, a in w.report.metrics.items():
            value = "—" if a.value is None else f"{a.value:.4g}"
            lines.append(f"| {m} | {value} | {a.n} | {a.missing} |")
    if w.drift:
        lines += ["", "| Drift | Reference | Newest | Change | p (Holm) | Detectable | "
                  "Verdict |", "|---|---:|---:|---:|---:|---:|---|"]
        for d in w.drift:
            lines.append(f"| {d.metric} | {_f(d.reference)} | {_f(d.newest)} | "
                         f"{_f(d.change)} | {d.p_adjusted:.3g} | {_f(d.mde)} | "
                         f"{'**drift**' if d.drifted else 'held'} |")
    if w.satisfaction:
        lines += ["", "What users are satisfied with (each metric against their feedback):",
                  "", "| Metric | Measure | Value | 95 % interval | n |",
                  "|---|---|---:|---|---:|"]
        lines += [f"| {a.metric} | {a.measure} | {_f(a.value)} | "
                  f"{_interval(a.low, a.high)} | {a.n} |" for a in w.satisfaction]
    lines += [""] + [f"Note: {x}" for x in w.notes] if w.notes else []
    return "\n".join(lines) + "\n\n"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:.3g} to {high:.3g}"


def _f(v: float | None) -> str:
    return "—" if v is None else f"{v:.4g}"


def trend_html(w: Window, s: Settings) -> str:
    """A page with the trend of every metric over the source's windows."""
    metrics = list(dict.fromkeys(m for p in w.trend for m in p.means))
    figures = []
    for m in metrics:
        pts = [(str(p.id), v[0], v[1] if v[1] is not None else v[0],
                v[2] if v[2] is not None else v[0], p.drift_in(m))
               for p in w.trend for v in [p.means.get(m)] if v is not None and v[0] is not None]
        if pts:
            figures.append(svg.trend(
                m, pts, f"{m} per window (history id), mean with its 95 % interval; "
                "an open red diamond marks a window where this metric drifted"))
    drift_rows = "".join(
        f"<tr><td>{escape(d.metric)}</td><td>{_f(d.reference)}</td><td>{_f(d.newest)}</td>"
        f"<td>{_f(d.change)}</td><td>{d.p_adjusted:.3g}</td><td>{_f(d.mde)}</td>"
        f"<td>{'drift' if d.drifted else 'held'}</td></tr>" for d in w.drift)
    table = ("<table><thead><tr><th>metric</th><th>reference</th><th>newest</th>"
             "<th>change</th><th>p (Holm)</th><th>detectable</th><th>verdict</th></tr>"
             f"</thead><tbody>{drift_rows}</tbody></table>") if w.drift else ""
    notes = "".join(f"<li>{escape(n)}</li>" for n in w.notes)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>ragmark monitor: {escape(s.system)}</title>"
            "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em}"
            "</style></head><body>"
            f"<h1>ragmark monitor: {escape(s.system)}</h1>"
            f"<p>Source {escape(str(s.source))}; {len(w.trend)} windows.</p>"
            f'<section id="trend"><h2>Trend</h2>{"".join(figures)}</section>'
            f'<section id="drift"><h2>Drift</h2>{table}</section>'
            f"<ul>{notes}</ul></body></html>\n")


def write(w: Window, s: Settings, path: str | Path) -> Path:
    """The window written as its suffix says (.json, .md, .html)."""
    p = Path(path)
    kind = FORMATS.get(p.suffix)
    text = (json.dumps(window_json(w, s), indent=2) + "\n" if kind == "json" else
            window_markdown(w, s) if kind == "markdown" else trend_html(w, s))
    if kind == "markdown":
        from ragmark.report.json_writer import write_markdown

        return write_markdown(text, p)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p

"""One self-contained HTML file from results files: inline CSS, inline SVG plots, a little
inline JavaScript (sorting and filtering only), no request of any kind.

The page is built from the results JSON (what the ``json`` writer writes; a ``run`` or
``compare`` with ``--include-details`` gives the question view), so ``ragmark report``
renders any file afterwards exactly as ``--format html`` does at run time. Everything is
readable with JavaScript off: tables and plots are in the HTML, a question expands with
``<details>``. A missing value is shown as missing (never as 0), and every mean says over
how many questions it was taken.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np

from ragmark.analysis.rank_against import ranking_html
from ragmark.metrics.names import aggregates
from ragmark.passage_labels import label_from_json
from ragmark.report import svg
from ragmark.report.html_checks import failures, history
from ragmark.report.html_common import View, breakable, num, numbers
from ragmark.report.html_curves import curves
from ragmark.report.html_questions import CSS, JS, questions
from ragmark.report.html_shapes import shapes
from ragmark.report.round_robin import pairwise_html
from ragmark.results.codec import compare_from_json, run_from_json
from ragmark.results.comparison import Comparison
from ragmark.stats import ComparisonRow, bootstrap_ci

BOOTSTRAP = 2000

def views(data: Mapping[str, Any]) -> tuple[Comparison | None, list[View]]:
    """The configs of a run or compare results file, read through the results model (and
    a compare's comparison)."""
    if data.get("envelope", {}).get("kind") == "compare":
        c = compare_from_json(data, "the results file")
        blocks = data.get("configs", {})
        return c, [View(name, r, c.intervals.get(name, {}),
                        isinstance(blocks.get(name, {}).get("queries"), list))
                   for name, r in c.reports.items()]
    report = run_from_json(data, "the results file")
    name = str(report.config.get("name", "run"))
    return None, [View(name, report, {}, isinstance(data.get("queries"), list))]


def _covered(counts: Mapping[str, Any]) -> str:
    n, missing = counts.get("n"), counts.get("missing", 0)
    if n is None:
        return ""
    return f"n={n}" + (f", {missing} missing" if missing else "")


def paired_difference(a: Mapping[str, Mapping[str, float | None]],
                      b: Mapping[str, Mapping[str, float | None]], metric: str,
                      seed: int = 0) -> tuple[float, float, float, int] | None:
    """Mean of config a minus baseline b over the questions both have, and its percentile
    bootstrap 95% interval (:func:`ragmark.stats.bootstrap_ci` of the differences):
    ``(low, mean, high, n)``; None without a common question."""
    d = [float(x) - float(y) for q, qa in a.items()  # type: ignore[arg-type]
         if q in b and (x := qa.get(metric)) is not None and (y := b[q].get(metric)) is not None]
    iv = bootstrap_ci(d, 0.95, BOOTSTRAP, seed)
    return None if iv is None else (iv.low, iv.mean, iv.high, iv.n)


def _header(data: Mapping[str, Any], vs: Sequence[View]) -> str:
    env = data.get("envelope", {})
    ds = data.get("dataset") or data.get("run", {}).get("dataset", {})
    executor = data.get("executor") or data.get("run", {}).get("executor") or {}
    models = sorted({str(m) for v in vs for m in _models(v, data)})
    rows = [("dataset", f"{ds.get('name', '?')} · {ds.get('queries', '?')} questions · "
                        f"hash {str(env.get('dataset_hash', ''))[:12]}"),
            ("configs", ", ".join(v.name for v in vs)),
            ("ragmark", str(env.get("ragmark", "?"))),
            ("date", str(env.get("created_at", "?"))),
            ("git commit", str(env.get("git_commit") or "not recorded")),
            ("executor", _executor(executor)),
            ("LLM", ", ".join(models) or "none")]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in rows)
    notes = [n for v in vs for n in v.notes] + list(data.get("notes", []))
    warn = [f"data loaded with warnings: {w}" for w in ds.get("warnings", [])]
    shown = list(dict.fromkeys(warn + notes))
    note_html = "" if not shown else (
        '<section id="notes"><h2>Notes</h2><ul>'
        + "".join(f"<li>{escape(n)}</li>" for n in shown) + "</ul></section>")
    return f'<dl class="facts">{items}</dl>{note_html}'


def _executor(e: Mapping[str, Any]) -> str:
    if not e:
        return "not recorded"
    if e.get("name") == "ray":
        return (f"ray at {e.get('address')}: {e.get('nodes')} nodes, {e.get('workers')} "
                "workers took part")
    return str(e.get("name"))


def _models(v: View, data: Mapping[str, Any]) -> list[str]:
    """LLM model names (never URLs or keys) the results mention."""
    out = []
    for block in [v.llm, *[b for b in v.llm.values() if isinstance(b, Mapping)]]:
        if isinstance(block.get("model"), str):
            out.append(block["model"])
    cfg = data.get("config") or {}
    if isinstance(cfg.get("llm"), Mapping) and cfg["llm"].get("model"):
        out.append(str(cfg["llm"]["model"]))
    return out


def _metric_table(c: Comparison | None, vs: Sequence[View], metrics: Sequence[str]) -> str:
    rows_by = _rows(c)
    base = None if c is None else c.baseline
    head = "".join(f'<th scope="col">{breakable(m)}</th>' for m in metrics)
    body = []
    for v in vs:
        cells = []
        for m in metrics:
            iv = v.intervals.get(m)
            text = num(v.metrics.get(m))
            if iv is not None:
                text += f' <span class="iv">[{iv.low:.3f}, {iv.high:.3f}]</span>'
            row = rows_by.get((v.name, m))
            if row is not None and row.relative_change is not None:
                mark = "*" if row.significant else ""
                n, own = row.n, (v.counts.get(m) or {}).get("n")
                base_n = next(((x.counts.get(m) or {}).get("n") for x in vs if x.name == base),
                              None)
                paired = "" if n == own == base_n else (
                    f" on the {n} question{'s' if n != 1 else ''} both have")
                text += (f' <span class="chg">{row.relative_change * 100:+.1f}%'
                         f"{mark}{paired}</span>")
            cov = _covered(v.counts.get(m, {}))
            mean = v.metrics.get(m)
            cells.append(f'<td data-v="{"" if mean is None else mean}">{text}<br>'
                         f"<small>{escape(cov)}</small></td>")
        label = escape(v.name) + (" <small>(baseline)</small>" if v.name == base else "")
        body.append(f'<tr><th scope="row">{label}</th>{"".join(cells)}</tr>')
    legend = ["Mean over the questions with a value (n)"]
    if any(v.intervals.get(m) for v in vs for m in metrics):
        legend.append("[95% bootstrap interval; Wilson's where every value is 0 or 1]")
    if any(r.relative_change is not None for r in rows_by.values()):
        legend.append("change against the baseline, * where significant after Holm's "
                      "correction")
    return (f'<div class="wide"><table class="metrics"><thead><tr><th scope="col">config</th>'
            f'{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            f'<p class="legend">{"; ".join(legend)}.</p>')


def _rows(c: Comparison | None) -> dict[tuple[str, str], ComparisonRow]:
    """A comparison's tests by (config, metric)."""
    return {} if c is None else {(r.config, r.metric): r for r in c.rows}


def _forests(c: Comparison | None, vs: Sequence[View], metrics: Sequence[str]) -> str:
    base = next((v for v in vs if c is not None and v.name == c.baseline), None)
    if base is None or len(vs) < 2:
        return ""
    rows_by = _rows(c)
    out = ['<section id="differences"><h2>Differences to the baseline</h2>']
    for m in metrics:
        rows, table = [], []
        for v in vs:
            if v is base:
                continue
            got = paired_difference(v.per_query, base.per_query, m)
            if got is None:
                table.append(f"<tr><td>{escape(v.name)}</td><td colspan=4>no question "
                             "with a value in both</td></tr>")
                continue
            low, mean, high, n = got
            rows.append((v.name, low, mean, high))
            r = rows_by.get((v.name, m))
            p = None if r is None else r.p_adjusted
            table.append(f"<tr><td>{escape(v.name)}</td><td>{mean:+.4f}</td>"
                         f"<td>[{low:+.4f}, {high:+.4f}]</td><td>{n}</td>"
                         f"<td>{'—' if p is None else f'{p:.4f}'}"
                         f"{' *' if r is not None and r.significant else ''}</td></tr>")
        plot = svg.forest(f"{m}: difference to {base.name}", rows,
                          f"{m}: mean difference of each config to {base.name} over the "
                          "questions both have, with its 95% bootstrap interval",
                          numbers(vs)) if rows else ""
        out.append(f'<div class="pair">{plot}<table><thead><tr><th>config</th>'
                   "<th>mean difference</th><th>95% interval</th><th>questions</th>"
                   f"<th>p (Holm)</th></tr></thead><tbody>{''.join(table)}</tbody></table>"
                   "</div>")
    return "".join(out) + "</section>"


def _distributions(vs: Sequence[View], metrics: Sequence[str]) -> str:
    out = ['<section id="distributions"><h2>Per-question values</h2>']
    for m in metrics:
        series, rows = [], []
        for v in vs:
            vals = [float(x) for q in v.per_query.values() if (x := q.get(m)) is not None]
            missing = sum(1 for q in v.per_query.values() if q.get(m) is None)
            series.append((v.name, vals))
            if vals:
                a = np.array(vals)
                rows.append(f"<tr><td>{escape(v.name)}</td><td>{len(vals)}</td>"
                            f"<td>{missing}</td><td>{a.mean():.4f}</td><td>{a.min():.4f}"
                            f"</td><td>{np.median(a):.4f}</td><td>{a.max():.4f}</td></tr>")
            else:
                rows.append(f"<tr><td>{escape(v.name)}</td><td>0</td><td>{missing}</td>"
                            "<td colspan=4>no value</td></tr>")
        hi = max([1.0] + [x for _, vals in series for x in vals])
        lo = min([0.0] + [x for _, vals in series for x in vals])
        plot = svg.strips(f"{m} per question", series,
                          f"{m}: each dot one question's value, one row per config "
                          "(missing values are not drawn)", lo, hi, numbers(vs))
        out.append(f'<div class="pair">{plot}<table><thead><tr><th>config</th><th>n</th>'
                   "<th>missing</th><th>mean</th><th>min</th><th>median</th><th>max</th>"
                   f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")
    return "".join(out) + "</section>"


def _costs(vs: Sequence[View], pairwise: Mapping[str, Any] | None = None) -> str:
    rows = []
    for v in vs:
        t = v.timings
        total = v.llm.get("total") or (v.llm if "calls" in v.llm else {})
        tokens = int(total.get("prompt_tokens", 0)) + int(total.get("completion_tokens", 0))
        cost = total.get("estimated_cost")
        rows.append(
            f"<tr><td>{escape(v.name)}</td><td>{num(t.get('index_s'), 2)}</td>"
            f"<td>{num(t.get('latency_p50_ms'), 1)}</td>"
            f"<td>{num(t.get('latency_p95_ms'), 1)}</td>"
            f"<td>{num(t.get('questions_per_s'), 0)}</td>"
            f"<td>{total.get('calls', 0)}</td><td>{total.get('cache_hits', 0)}</td>"
            f"<td>{tokens}</td><td>{'—' if cost is None else f'{cost:.4f}'}</td>"
            f"<td>{num(t.get('total_s'), 2)}</td></tr>")
    judged = (pairwise or {}).get("llm") or {}
    if judged.get("calls") or judged.get("cache_hits"):  # the matches', not a config's
        tokens = int(judged.get("prompt_tokens", 0)) + int(judged.get("completion_tokens", 0))
        cost = judged.get("estimated_cost")
        rows.append(
            "<tr><td>the pairwise judge (every match)</td><td>—</td><td>—</td><td>—</td>"
            f"<td>—</td><td>{judged.get('calls', 0)}</td><td>{judged.get('cache_hits', 0)}"
            f"</td><td>{tokens}</td><td>{'—' if cost is None else f'{cost:.4f}'}</td>"
            "<td>—</td></tr>")
    return ('<section id="costs"><h2>Latency and cost</h2><table><thead><tr><th>config</th>'
            "<th>index s</th><th>latency p50 ms</th><th>latency p95 ms</th>"
            "<th>questions/s</th><th>LLM calls</th><th>cached</th><th>tokens</th>"
            "<th>estimated cost</th><th>total s</th></tr></thead><tbody>"
            f"{''.join(rows)}</tbody></table></section>")


def _label_body(data: Mapping[str, Any]) -> list[str]:
    """A label file (read through its model): every metric at every k per config, and
    answer presence@k."""
    run = label_from_json(data, "the label file")
    k_max = run.top_k
    names = list(data.get("metric_names", []))
    vs = [View(n) for n in run.configs]
    out = [_header(data, vs), '<section id="summary"><h2>Metrics at every k</h2>']
    series = []
    for name, c in run.configs.items():
        head = "".join(f"<th>@{k}</th>" for k in range(1, k_max + 1))
        rows = []
        for m in names:
            cells = []
            for k in range(1, k_max + 1):
                a = c.metrics.get(f"{m}@{k}")
                cov = _covered(a.to_json() if a is not None else {})
                cells.append(f"<td>{num(None if a is None else a.value)}<br>"
                             f"<small>{escape(cov)}</small></td>")
            rows.append(f"<tr><th scope=\"row\">{escape(m)}</th>{''.join(cells)}</tr>")
        out.append(f"<h3>{escape(name)}</h3><table><thead><tr><th>metric</th>{head}</tr>"
                   f"</thead><tbody>{''.join(rows)}</tbody></table>")
        presence = [c.metrics.get(f"answer_presence@{k}") for k in range(1, k_max + 1)]
        series.append((name, [None if a is None else a.value for a in presence]))
    out.append(svg.curves("answer presence against k", series,
                          "answer presence@k (share of questions with a passage labelled "
                          "relevant in the top k), one line per config; the tables above "
                          "give the values", "answer presence@k"))
    return out + ["</section>"]


def body(data: Mapping[str, Any]) -> str:
    """The page content of one results file (run, compare or label)."""
    kind = data.get("envelope", {}).get("kind", "run")
    if kind == "label":
        cfgs = ", ".join(data.get("configs", {}))
        return (f"<h1>{escape(f'ragmark label: {cfgs}')}</h1>"
                + "".join(_label_body(data)))
    comparison, vs = views(data)
    shown = [] if comparison is None else list(comparison.metrics)
    if not shown:
        shown = [m for m in (vs[0].metrics if vs else {}) if m not in aggregates()]
    all_metrics = list(vs[0].metrics) if vs else []
    ds = data.get("dataset") or data.get("run", {}).get("dataset", {})
    heading = f"ragmark {kind}: {', '.join(v.name for v in vs)} on {ds.get('name', '?')}"
    return "".join([f"<h1>{escape(heading)}</h1>", _header(data, vs),
                    '<section id="summary"><h2>Metrics</h2>',
                    _metric_table(comparison, vs, all_metrics), "</section>",
                    _forests(comparison, vs, shown), _pairwise(data, vs), _ranking(data),
                    _costs(vs, data.get("pairwise")),
                    curves(vs),
                    shapes(vs, shown), _distributions(vs, shown),
                    questions(vs, shown), failures(data, vs),
                    history(comparison.gated if comparison is not None else
                            vs[0].report.gated if vs and vs[0].report else None)])


def _pairwise(data: Mapping[str, Any], vs: Sequence[View]) -> str:
    return pairwise_html(data["pairwise"], numbers(vs)) if data.get("pairwise") else ""


def _ranking(data: Mapping[str, Any]) -> str:
    return ranking_html(data["ranking_agreement"]) if data.get("ranking_agreement") else ""


def render(*files: Mapping[str, Any], title: str | None = None) -> str:
    """One HTML page for one or more results files (their JSON form), in order."""
    if not files:
        raise ValueError("render needs at least one results file")
    parts = [body(d) for d in files]
    if len(parts) > 1:
        parts = [f'<article class="file">{p}</article><hr>' for p in parts]
    first = files[0].get("envelope", {}).get("kind", "run")
    heading = title or f"ragmark {first} report"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(heading)}</title><style>{CSS}</style></head><body>"
            + "".join(parts) + f"<script>{JS}</script></body></html>\n")

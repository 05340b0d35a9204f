"""JSON writer: the report as a file a program can read."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ragmark.compare import Comparison
from ragmark.relevance import Matcher
from ragmark.results import envelope
from ragmark.results.model import RunReport
from ragmark.stats import Interval
from ragmark.types import Sample, Score
from ragmark.versions import versions


def _num(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) else v


def score_json(s: Score) -> Any:
    if s.value is None:
        out: dict[str, Any] = {"value": None, "reason": s.reason}
        out.update(dict(s.details))
        return out
    if s.details:
        return {"value": s.value, **dict(s.details)}
    return s.value


def ground_truth_json(sample: Sample) -> dict[str, Any]:
    """A question's ground truth: ``kind``, ``targets`` (name -> grade, named as in
    ``retrieved[].targets``), the ``passages`` of a context set, and the expected
    answer and keywords when the set has them."""
    truth = sample.truth
    out: dict[str, Any] = {"kind": truth.kind, "targets": Matcher(truth).target_grades()}
    if truth.passages:
        out["passages"] = list(truth.passages)
    if sample.expected_answer is not None:
        out["expected_answer"] = sample.expected_answer
    if sample.expected_keywords is not None:
        out["expected_keywords"] = list(sample.expected_keywords)
    return out


def per_query_json(report: RunReport) -> dict[str, dict[str, float | None]]:
    """question id -> metric -> value (None where missing)."""
    return {q.id: {k: s.value for k, s in q.metrics.items()} for q in report.queries}


def queries_json(report: RunReport) -> list[dict[str, Any]]:
    """Every question in full: ground truth, retrieved items with their match, answer,
    contexts, metrics with missing reasons (``--include-details``)."""
    return [
        {
            "id": q.id,
            "question": q.question,
            **({"ground_truth": ground_truth_json(q.sample)} if q.sample else {}),
            "retrieved": [
                {"rank": r.rank, "id": r.id, "doc_id": r.doc_id, "score": r.score,
                 "grade": r.grade, "targets": list(r.targets), "rule": r.rule}
                for r in q.retrieved
            ],
            "answer": q.answer,
            "contexts": q.contexts,
            "metrics": {k: score_json(s) for k, s in q.metrics.items()},
        }
        for q in report.queries
    ]


def report_json(report: RunReport, include_details: bool = False) -> dict[str, Any]:
    """``envelope``, ``metrics`` (name -> mean), ``counts`` (name -> queries covered /
    missing and why), ``per_query`` (question id -> metric -> value), ``config``,
    ``dataset``, ``timings``, ``notes``; with details a ``queries`` list."""
    out: dict[str, Any] = {
        "envelope": envelope("run", str(report.dataset.get("hash", "")), report.config),
        "metrics": {k: _num(a.value) for k, a in report.metrics.items()},
        "counts": {k: a.to_json() for k, a in report.metrics.items()},
        "per_query": per_query_json(report),
        "config": report.config,
        "dataset": report.dataset,
        "timings": {k: round(v, 4) for k, v in report.timings.items()},
        "notes": report.notes,
        "versions": versions(),
    }
    if report.executor:
        out["executor"] = report.executor
    if report.llm:
        out["llm"] = report.llm
    if report.corrected:
        out["corrected"] = report.corrected
    out.update(depth_json(report))
    if include_details:
        out["queries"] = queries_json(report)
    return out


def depth_json(report: RunReport) -> dict[str, Any]:
    """``short_metrics`` (metric -> the shorter ranking depth it was computed on),
    ``at_depth`` (a metric asked for without a cutoff -> its name at the ranking's depth)
    and
    ``short_rankings`` (cutoff -> questions with fewer items), when there are any; and
    ``empty_rankings`` (the questions that retrieved nothing, why, and each retrieval
    metric's mean over all questions and over those that retrieved something) whenever
    retrieval metrics were computed."""
    out: dict[str, Any] = {}
    if report.empty is not None:
        out["empty_rankings"] = report.empty.to_json()
    if report.short_metrics:
        out["short_metrics"] = dict(report.short_metrics)
    if report.at_depth:
        out["at_depth"] = dict(report.at_depth)
    if report.short_rankings:
        out["short_rankings"] = {str(k): n for k, n in report.short_rankings.items()}
    return out


def write_json(data: Any, path: str | Path) -> Path:
    """Write JSON atomically (temp file + rename), creating parent folders. The file gets
    the permissions of any other file written (0666 less the umask), not a temp file's
    0600."""
    import uuid

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.parent / f".{p.name}.{uuid.uuid4().hex}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False, allow_nan=False)
            f.write("\n")
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def comparison_json(c: Comparison, include_details: bool = False) -> dict[str, Any]:
    """``configs`` (name -> metrics, counts, intervals, per_query, timings, config),
    ``comparisons`` (each config against the baseline, per compared metric), ``run``
    (versions, dataset and its hash, statistics settings, seed)."""
    from ragmark.compare import change_sentence

    configs = {}
    for name, r in c.reports.items():
        configs[name] = {
            "metrics": {k: _num(a.value) for k, a in r.metrics.items()},
            "counts": {k: a.to_json() for k, a in r.metrics.items()},
            "intervals": {k: interval_json(iv) for k, iv in c.intervals[name].items()},
            "per_query": per_query_json(r),
            "timings": {k: round(v, 4) for k, v in r.timings.items()},
            "config": r.config,
            "notes": r.notes,
            "llm": r.llm,
            **({"corrected": r.corrected} if r.corrected else {}),
            **depth_json(r),
            **({"queries": queries_json(r)} if include_details else {}),
        }
    first = next(iter(c.reports.values()))
    st = c.settings
    return {
        "envelope": envelope("compare", c.dataset_hash,
                             {name: r.config for name, r in c.reports.items()}),
        "configs": configs,
        "comparisons": [
            {"config": row.config, "baseline": c.baseline, "metric": row.metric,
             "value": row.value_mean, "baseline_value": row.baseline_mean,
             "relative_change": row.relative_change, "p_value": row.p_value,
             "p_adjusted": row.p_adjusted, "significant": row.significant, "n": row.n,
             "test": row.method, "family": row.family, "family_size": row.family_size,
             "summary": change_sentence(row, c.baseline)}
            for row in c.rows
        ],
        "run": {
            "versions": versions(),
            "dataset": first.dataset,
            "dataset_hash": c.dataset_hash,
            "baseline": c.baseline,
            "compared_metrics": c.metrics,
            "statistics": {"test": st.test, "alpha": st.alpha, "confidence": st.confidence,
                           "n_resamples": st.n_resamples, "correction": st.correction,
                           "adjustment": "none" if st.correction == "none" else "holm"},
            "seed": st.seed,
            **({"executor": c.executor} if c.executor else {}),
        },
    }


def interval_json(iv: Interval | None) -> dict[str, Any] | None:
    if iv is None:
        return None
    out: dict[str, Any] = {"low": iv.low, "high": iv.high, "n": iv.n,
                           "confidence": iv.confidence}
    if iv.note:
        out["note"] = iv.note
    return out

"""JSON writer: results as files a program can read (a run's JSON is
:func:`ragmark.results.codec.run_to_json`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragmark.compare import Comparison
from ragmark.results import envelope
from ragmark.results.codec import depth_json, per_query_json, queries_json
from ragmark.results.codec import num as _num
from ragmark.stats import Interval
from ragmark.versions import versions


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

"""A run's report as JSON and back: :func:`run_to_json` writes what a results file holds
and :func:`run_from_json` reads it into the same :class:`RunReport`; the two round-trip
exactly (JSON -> report -> JSON gives the same JSON; tests/unit/report/
test_results_roundtrip.py checks it on generated reports)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ragmark.data.files import Where
from ragmark.errors import DataError
from ragmark.matching import Matcher
from ragmark.results import envelope
from ragmark.results.comparison import Comparison, StatSettings, change_sentence
from ragmark.results.model import (
    Aggregate,
    EmptyRankings,
    HopSummary,
    RunReport,
)
from ragmark.results.reading import per_query_of, query_of
from ragmark.stats import ComparisonRow, Interval
from ragmark.types import Sample, Score
from ragmark.versions import versions


def num(v: float | None) -> float | None:
    """A mean as JSON holds it: NaN as null."""
    return None if v is None or math.isnan(v) else v


def score_json(s: Score) -> Any:
    """A question's metric: a number, or ``{"value", "reason"?, details...}``."""
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
    answer, keywords, nuggets and tool calls when the set has them."""
    truth = sample.truth
    out: dict[str, Any] = {"kind": truth.kind, "targets": Matcher(truth).target_grades()}
    if truth.passages:
        out["passages"] = list(truth.passages)
    if sample.expected_answer is not None:
        out["expected_answer"] = sample.expected_answer
    if sample.expected_keywords is not None:
        out["expected_keywords"] = list(sample.expected_keywords)
    if sample.nuggets is not None:
        out["nuggets"] = [{"text": n.text, "importance": n.importance} for n in sample.nuggets]
    if not sample.answerable:
        out["answerable"] = False
    if sample.expected_calls is not None:
        out |= sample.expected_calls.to_json()
    return out


def per_query_json(report: RunReport) -> dict[str, dict[str, float | None]]:
    """question id -> metric -> value (None where missing)."""
    return {q.id: {k: s.value for k, s in q.metrics.items()} for q in report.queries}


def queries_json(report: RunReport) -> list[dict[str, Any]]:
    """Every question in full: ground truth, retrieved items with their match, answer,
    contexts, metrics with missing reasons (``--include-details``)."""
    out = []
    answers = {q.id: q.answer for q in report.queries}
    for q in report.queries:
        truth = ground_truth_json(q.sample) if q.sample else q.ground_truth
        out.append({
            "id": q.id,
            "question": q.question,
            **({"ground_truth": truth} if truth is not None else {}),
            "retrieved": [
                {"rank": r.rank, "id": r.id, "doc_id": r.doc_id, "score": r.score,
                 "grade": r.grade, "targets": list(r.targets), "rule": r.rule}
                for r in q.retrieved
            ],
            "answer": q.answer,
            "contexts": q.contexts,
            "metrics": {k: score_json(s) for k, s in q.metrics.items()},
            **({"hops": [h.to_json() for h in q.hops]} if q.hops else {}),
            **({"conversation": _with_answers(talk, answers)} if (talk := q.turn) else {}),
            **({"trajectory": q.trajectory} if q.trajectory is not None else {}),
            **({"recorded": dict(q.recorded)} if q.recorded else {}),
        })
    return out


def _with_answers(talk: dict[str, Any], answers: Mapping[str, str | None]
                  ) -> dict[str, Any]:
    """A turn's place in its conversation, each earlier turn with the answer this run got
    for it (a pipeline's), else the one the set logged."""
    history = [{**t, "answer": answers.get(f"{talk['id']}#{n}") or t.get("answer")}
               for n, t in enumerate(talk.get("history") or [], start=1)
               if isinstance(t, Mapping)]
    return {**talk, "history": history}


def depth_json(report: RunReport) -> dict[str, Any]:
    """``short_metrics`` (metric -> the shorter ranking depth it was computed on),
    ``at_depth`` (a metric asked for without a cutoff -> its name at the ranking's
    depth) and ``short_rankings`` (cutoff -> questions with fewer items), when there are
    any; and ``empty_rankings`` (the questions that retrieved nothing, why, and each
    retrieval metric's mean over all questions and over those that retrieved something)
    whenever retrieval metrics were computed."""
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


def shapes_json(report: RunReport) -> dict[str, Any]:
    """What a run's shape adds, when it has it: ``hops`` (retrieval by step),
    ``risk_coverage`` (answers with a confidence), ``conversations`` (turns)."""
    out: dict[str, Any] = {}
    if report.hops:
        out["hops"] = [h.to_json() for h in report.hops]
    if report.risk_coverage is not None:
        out["risk_coverage"] = report.risk_coverage
    if report.conversations is not None:
        out["conversations"] = report.conversations
    return out


def run_to_json(report: RunReport, include_details: bool = False) -> dict[str, Any]:
    """``envelope``, ``metrics`` (name -> mean), ``counts`` (name -> queries covered /
    missing and why), ``per_query`` (question id -> metric -> value), ``config``,
    ``dataset``, ``timings``, ``notes``; with details a ``queries`` list. A report read
    from a file keeps its envelope and versions; a new one gets today's."""
    out: dict[str, Any] = {
        "envelope": report.envelope or envelope(
            "run", str(report.dataset.get("hash", "")), report.config),
        "metrics": {k: num(a.value) for k, a in report.metrics.items()},
        "counts": {k: a.to_json() for k, a in report.metrics.items()},
        "per_query": per_query_json(report),
        "config": report.config,
        "dataset": report.dataset,
        "timings": {k: round(v, 4) for k, v in report.timings.items()},
        "notes": report.notes,
        "versions": report.versions or versions(),
    }
    if report.executor:
        out["executor"] = report.executor
    if report.llm:
        out["llm"] = report.llm
    if report.corrected:
        out["corrected"] = report.corrected
    out.update(depth_json(report))
    out.update(shapes_json(report))
    if include_details:
        out["queries"] = queries_json(report)
    if report.gated:
        out.update(report.gated)
    return out


def run_from_json(data: Mapping[str, Any], file: str = "results", item: str | None = None
                  ) -> RunReport:
    """The report a run's results file (``run_to_json``'s JSON) holds. Without
    ``queries`` (written without details) each question has its values only, a missing
    one without its reason; with them, everything but the loaded evaluation item
    (``sample``: its ground truth comes back as the JSON it was written as). A file of an
    older ragmark may lack blocks: ``counts`` then come from the per-question values. A
    malformed question is a DataError naming ``file``, the question (or ``item``, the
    block of ``per_query``) and the field."""
    if not isinstance(data, Mapping) or not {"per_query", "counts", "queries"} & set(data):
        raise DataError("not a run's results as ragmark writes them: no per_query, counts "
                        "or queries", file=file)
    try:
        per_query = data.get("per_query") or {}
        means = data.get("metrics") or {}
        counts = data["counts"] if "counts" in data else _counts(per_query, means)
        metrics = {k: _aggregate(means.get(k), c) for k, c in counts.items()}
        if isinstance(data.get("queries"), list):
            queries = [query_of(file, i, q) for i, q in enumerate(data["queries"])]
        else:
            queries = per_query_of(per_query, Where(file, item=item))
        return RunReport(
            config=dict(data.get("config") or {}), dataset=dict(data.get("dataset") or {}),
            metrics=metrics, queries=queries, timings=dict(data.get("timings") or {}),
            notes=list(data.get("notes") or []), llm=dict(data.get("llm") or {}),
            corrected=dict(data.get("corrected") or {}),
            executor=dict(data.get("executor") or {}),
            short_metrics=dict(data.get("short_metrics") or {}),
            short_rankings={int(k): n for k, n in (data.get("short_rankings") or {}).items()},
            at_depth=dict(data.get("at_depth") or {}),
            empty=_empty(data.get("empty_rankings")),
            hops=tuple(HopSummary(**h) for h in data.get("hops") or ()),
            risk_coverage=dict(data["risk_coverage"]) if data.get("risk_coverage") else None,
            conversations=dict(data["conversations"]) if data.get("conversations") else None,
            envelope=dict(data["envelope"]) if "envelope" in data else None,
            versions=dict(data["versions"]) if "versions" in data else None,
            gated=_gated(data))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise DataError(f"not a run's results as ragmark writes them ({type(e).__name__}: "
                        f"{e})", file=file) from None


def _counts(per_query: Mapping[str, Mapping[str, float | None]],
            means: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Each metric's questions with a value and without, from the per-question values
    (a file written before ``counts`` existed)."""
    names = list(dict.fromkeys([*means, *(m for v in per_query.values() for m in v)]))
    return {m: {"n": sum(1 for v in per_query.values() if v.get(m) is not None),
                "missing": sum(1 for v in per_query.values() if m in v and v[m] is None)}
            for m in names}


def _aggregate(value: float | None, c: Mapping[str, Any]) -> Aggregate:
    return Aggregate(value, int(c["n"]), int(c["missing"]), dict(c.get("reasons") or {}))


def _empty(block: Any) -> EmptyRankings | None:
    """The ``empty_rankings`` block (a file of an older ragmark may give only the
    questions and the cause)."""
    if block is None:
        return None
    means = block.get("means") or {}
    cause = block.get("cause")
    return EmptyRankings(
        ids=tuple(str(q) for q in block["questions"]),
        cause=cause if isinstance(cause, str) else "unknown",
        of=block.get("of", len(block["questions"])),
        over_all={m: Aggregate(v["over_all"], v["n_all"], 0, {}) for m, v in means.items()},
        over_retrieved={m: Aggregate(v["over_retrieved"], v["n_retrieved"], 0, {})
                        for m, v in means.items()},
        like_pytrec_eval={m: Aggregate(v["like_pytrec_eval"], v["n_like_pytrec_eval"], 0, {})
                          for m, v in means.items() if "n_like_pytrec_eval" in v} or None)


def compare_to_json(c: Comparison, include_details: bool = False) -> dict[str, Any]:
    """``configs`` (name -> metrics, counts, intervals, per_query, timings, config),
    ``comparisons`` (each config against the baseline, per compared metric), ``run``
    (versions, dataset and its hash, statistics settings, seed)."""
    configs = {}
    for name, r in c.reports.items():
        configs[name] = {
            "metrics": {k: num(a.value) for k, a in r.metrics.items()},
            "counts": {k: a.to_json() for k, a in r.metrics.items()},
            "intervals": {k: interval_json(iv) for k, iv in c.intervals[name].items()},
            "per_query": per_query_json(r),
            "timings": {k: round(v, 4) for k, v in r.timings.items()},
            "config": r.config,
            "notes": r.notes,
            "llm": r.llm,
            **({"corrected": r.corrected} if r.corrected else {}),
            **depth_json(r),
            **shapes_json(r),
            **({"queries": queries_json(r)} if include_details else {}),
        }
    first = next(iter(c.reports.values()))
    st = c.settings
    return {
        "envelope": c.envelope or envelope(
            "compare", c.dataset_hash, {name: r.config for name, r in c.reports.items()}),
        "configs": configs,
        "comparisons": [
            {"config": row.config, "baseline": c.baseline, "metric": row.metric,
             "value": row.value_mean, "baseline_value": row.baseline_mean,
             "relative_change": row.relative_change, "p_value": row.p_value,
             "p_adjusted": row.p_adjusted, "significant": row.significant, "n": row.n,
             "test": row.method, "family": row.family, "family_size": row.family_size,
             **({} if row.judge_noise is None else {"judge_noise": row.judge_noise}),
             "summary": change_sentence(row, c.baseline)}
            for row in c.rows
        ],
        "run": {
            "versions": c.versions or versions(),
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
        **(c.gated or {}),
        **({"pairwise": c.pairwise} if c.pairwise is not None else {}),
        **({"ranking_agreement": c.ranking} if c.ranking is not None else {}),
    }


def interval_json(iv: Interval | None) -> dict[str, Any] | None:
    if iv is None:
        return None
    out: dict[str, Any] = {"low": iv.low, "high": iv.high, "n": iv.n,
                           "confidence": iv.confidence}
    if iv.note:
        out["note"] = iv.note
    return out


def compare_from_json(data: Mapping[str, Any], file: str = "results") -> Comparison:
    """The comparison a compare's results file (``compare_to_json``'s JSON) holds. Each
    config's report has the dataset block the file records once (``run.dataset``). A
    file of an older ragmark may lack blocks: the statistics' settings are then the
    defaults, and a config without a ``config`` block is named by its key."""
    try:
        run = data.get("run") or {}
        st = {**(run.get("statistics") or {}), "seed": run.get("seed", 0)}
        settings = StatSettings(**{k: st[k] for k in ("test", "alpha", "confidence",
                                                      "n_resamples", "seed", "correction")
                                   if k in st})
        blocks = data["configs"]
        reports = {name: _config_report(name, block, run.get("dataset") or {}, file)
                   for name, block in blocks.items()}
        intervals = {name: {m: _interval(iv, (block.get("metrics") or {}).get(m))
                            for m, iv in (block.get("intervals") or {}).items()}
                     for name, block in blocks.items()}
        rows = [ComparisonRow(r["config"], r["metric"], r["baseline_value"], r["value"],
                              r["relative_change"], r["p_value"], r["p_adjusted"],
                              r["significant"], r["n"], r["test"], r["family"],
                              r["family_size"], r.get("judge_noise"))
                for r in data.get("comparisons") or []]
        return Comparison(reports, run.get("baseline") or next(iter(blocks), ""),
                          list(run.get("compared_metrics") or []), intervals, rows,
                          settings, run.get("dataset_hash", ""),
                          dict(run.get("executor") or {}),
                          envelope=dict(data["envelope"]) if "envelope" in data else None,
                          versions=dict(run["versions"]) if "versions" in run else None,
                          gated=_gated(data),
                          pairwise=dict(data["pairwise"]) if "pairwise" in data else None,
                          ranking=(dict(data["ranking_agreement"])
                                   if "ranking_agreement" in data else None))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise DataError(f"not a compare's results as ragmark writes them "
                        f"({type(e).__name__}: {e})", file=file) from None


def _gated(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The regression gates' blocks of a results file, as recorded."""
    got = {k: data[k] for k in ("gates", "trend") if k in data}
    return got or None


def _config_report(name: str, block: Mapping[str, Any], dataset: Mapping[str, Any],
                   file: str) -> RunReport:
    return run_from_json({**block, "config": block.get("config") or {"name": name},
                          "dataset": dataset}, file, f"configs.{name}")


def _interval(iv: Mapping[str, Any] | None, mean: float | None) -> Interval | None:
    if iv is None:
        return None
    return Interval(iv["low"], iv["high"], math.nan if mean is None else mean, iv["n"],
                    iv["confidence"], iv.get("note", ""))

"""A judge asked several times (``--judge-repeats N``, issue 63, item 5): each question's
value is the mean of its repeats, and each judge metric's own noise is measured beside
the spread between questions.

For a metric, over the questions with a value in two or more repeats: the within-question
standard deviation (the square root of the mean of each question's sample variance over
its repeats: the judge's own noise on one question), the between-question standard
deviation (of the questions' means: what the metric measures), the questions whose hard
verdict (at the metric's ``verdict_at``) flips between repeats, with a Wilson interval,
and the judge's noise in the run's mean: ``within_sd / sqrt(repeats * questions)``, the
standard error a mean of that many judged values has from the judge alone."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmark.aio import run_sync
from ragmark.case import Case
from ragmark.llm import LLMSettings
from ragmark.metrics.names import verdict_at
from ragmark.progress import Progress
from ragmark.running.judging import judge_async
from ragmark.running.task import Task
from ragmark.stats import wilson_interval
from ragmark.types import Score

DEFAULT_TEMPERATURE = 0.7
"""The judge's temperature when it is asked several times and none is given: at 0 a
server answers the same every time, and the repeats would measure nothing."""


def combined(repeats: Sequence[Score]) -> Score:
    """One question's value from its repeats: the mean of those with a value (the first's
    details, each repeat's value and hard value beside); missing as the first is when
    none has one."""
    valued = [s for s in repeats if s.value is not None]
    if not valued:
        return repeats[0]
    values = [float(s.value) for s in valued]  # type: ignore[arg-type]
    hards = [float(s.hard) for s in valued]  # type: ignore[arg-type]
    mean = float(np.mean(values))
    return Score(mean, details={**valued[0].details,
                                "repeats": [None if s.value is None else round(s.value, 6)
                                            for s in repeats],
                                "hard_value": float(np.mean(hards)),
                                "hard_repeats": [s.hard for s in repeats]})


def noise(metric: str, repeats: Sequence[Sequence[Score]]) -> dict[str, Any]:
    """The judge's own noise on ``metric`` from each question's repeats (a list of
    Scores a question), as the module says."""
    rows = [[float(s.value) for s in q if s.value is not None] for q in repeats]
    hard = [[float(s.hard) for s in q if s.value is not None  # type: ignore[arg-type]
             ] for q in repeats]
    twice = [i for i, r in enumerate(rows) if len(r) >= 2]
    n_rep = max((len(q) for q in repeats), default=0)
    if not twice:
        return {"metric": metric, "repeats": n_rep, "questions": 0,
                "reason": "no question got a value in two repeats"}
    within = math.sqrt(float(np.mean([np.var(rows[i], ddof=1) for i in twice])))
    means = [float(np.mean(rows[i])) for i in twice]
    between = float(np.std(means, ddof=1)) if len(means) >= 2 else None
    at = verdict_at(metric)
    flipped = sum(len({h >= at for h in hard[i]}) > 1 for i in twice)
    iv = wilson_interval(flipped, len(twice))
    return {"metric": metric, "repeats": n_rep, "questions": len(twice),
            "within_sd": round(within, 6),
            "between_sd": None if between is None else round(between, 6),
            "flipped": flipped, "flip_share": flipped / len(twice),
            "flip_interval": None if iv is None else [iv.low, iv.high],
            "mean_se": round(within / math.sqrt(n_rep * len(twice)), 6)}


def combine(per_repeat: Sequence[Sequence[Mapping[str, Score]]], names: Sequence[str]
            ) -> tuple[list[dict[str, Score]], dict[str, dict[str, Any]]]:
    """Each question's scores combined over the repeats (``per_repeat``: each repeat's
    scores, a dict a question), and each metric's noise."""
    questions = len(per_repeat[0])
    by_q = [{n: [rep[q][n] for rep in per_repeat] for n in names} for q in range(questions)]
    scores = [{n: combined(q[n]) for n in names} for q in by_q]
    return scores, {n: noise(n, [q[n] for q in by_q]) for n in names}


def noise_notes(report: Mapping[str, Mapping[str, Any]], temperature: float) -> list[str]:
    """The run's notes on its judges' noise: a line a metric."""
    out = []
    for n, r in report.items():
        if not r.get("questions"):
            continue
        between = r["between_sd"]
        iv = r["flip_interval"]
        out.append(
            f"judge noise of {n} ({r['repeats']} repeats at temperature {temperature:g}, "
            f"{r['questions']} question{'s' * (r['questions'] != 1)}): within a question "
            f"s.d. {r['within_sd']:.3f}"
            + ("" if between is None else f" against {between:.3f} between questions")
            + f"; the hard verdict flipped on {r['flipped']} ({r['flip_share']:.0%}"
            + ("" if iv is None else f", 95% CI {iv[0]:.0%}-{iv[1]:.0%}") + "); the mean "
            f"carries ±{1.96 * r['mean_se']:.3f} of the judge's own noise")
    return out


def asked_repeatedly(cases: Sequence[Case], names: Sequence[str],
                     llm: LLMSettings | None, task: Task, prog: Progress, guidance: Any
                     ) -> tuple[list[dict[str, Score]], list[str], dict[str, Any]]:
    """Every case judged on ``llm``, ``task.judge_repeats`` times (each repeat its own
    seed, at ``task.judge_temperature``): the scores (each the mean of its repeats), the
    notes and the LLM accounting (summed over the repeats, with the noise measured)."""
    repeats = task.judge_repeats
    heat = None if repeats == 1 else (task.judge_temperature or DEFAULT_TEMPERATURE)
    who = "" if llm is None or not task.jurors else f" by {llm.model}"
    runs = []
    for r in range(repeats):
        what = "" if repeats == 1 else f", repeat {r + 1} of {repeats}"
        with prog.task(f"judging ({', '.join(names)}){who}{what}",
                       len(cases) * len(names)) as adv:
            runs.append(run_sync(judge_async(
                cases, names, None if llm is None else llm.repeat(r, heat) if repeats > 1
                else llm, require=task.require_llm, advance=adv, guidance=guidance)))
    got, notes, summary = runs[0]
    if repeats == 1:
        return got, notes, summary
    got, measured = combine([g for g, _, _ in runs], names)
    return got, [*notes, *noise_notes(measured, heat or 0.0)], {
        **repeated_summary([s for _, _, s in runs]), "judge_repeats": repeats,
        "judge_temperature": heat, "judge_noise": measured}


def repeated_summary(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The LLM accounting of judges asked several times (repeats, jurors): the first's,
    with the counts (calls, tokens, cost, ...) summed."""
    out = dict(summaries[0])
    for key, value in out.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and key not in (
                "context_window",):
            got = [s.get(key) for s in summaries]
            out[key] = None if any(g is None for g in got) else sum(got)  # type: ignore[misc]
    return out

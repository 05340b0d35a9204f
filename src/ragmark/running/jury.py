"""A jury (issue 63, item 6): several judge models, or endpoints, asked the same judge
questions (``--judge-llm MODEL[@URL]``, repeated). Each question's value is the mean of
the jurors' values (their mean probability where the values are weighted), its hard
value the mean of their hard verdicts (a majority at the metric's verdict threshold);
a juror that gave no value is left out of the mean with its reason kept, and a question
no juror valued is missing with every juror's reason, never 0. Beside it, per metric,
how far the jurors agree beyond chance: Krippendorff's alpha on their values (interval
level) and on their hard verdicts (nominal), with bootstrap intervals over the
questions, and each juror's mean."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmark.llm import LLMSettings
from ragmark.metrics.names import verdict_at
from ragmark.running.repeats import repeated_summary
from ragmark.stats.reliability import krippendorff_alpha
from ragmark.types import Score

Asked = tuple[list[dict[str, Score]], list[str], dict[str, Any]]
"""One juror's scores (a dict a question), notes and LLM accounting."""


def label_of(settings: LLMSettings) -> str:
    """How a juror is named in the results: its model."""
    return settings.model


def verdict(votes: Sequence[tuple[str, Score]]) -> Score:
    """One question's value from its jurors' scores (``(label, score)``), as the module
    says."""
    valued = [(j, s) for j, s in votes if s.value is not None]
    if not valued:
        return Score.missing("no juror gave a value: " + "; ".join(
            f"{j}: {s.reason}" for j, s in votes))
    details: dict[str, Any] = {
        "jurors": {j: None if s.value is None else round(s.value, 6) for j, s in votes},
        "hard_value": float(np.mean([float(s.hard) for _, s in valued])),  # type: ignore[arg-type]
    }
    left = {j: s.reason for j, s in votes if s.value is None}
    if left:
        details["jurors_missing"] = left
    return Score(float(np.mean([float(s.value) for _, s in valued])),  # type: ignore[arg-type]
                 details=details)


def agreement(metric: str, labels: Sequence[str], rows: Sequence[Sequence[Score]]
              ) -> dict[str, Any]:
    """The jurors' agreement on ``metric`` over the questions (``rows``: each question's
    scores, one a juror in ``labels``' order) and each juror's mean."""
    values = [[s.value for s in row] for row in rows]
    at = verdict_at(metric)
    hard = [[None if s.hard is None else float(s.hard >= at) for s in row] for row in rows]
    means = {j: (float(np.mean(v)) if (v := [float(row[i]) for row in values  # type: ignore[arg-type]
                                             if row[i] is not None]) else None)
             for i, j in enumerate(labels)}
    return {"jurors": list(labels), "questions": len(rows), "means": means,
            "alpha_values": krippendorff_alpha(values, "interval"),
            "alpha_verdicts": krippendorff_alpha(hard, "nominal")}


def jury_verdicts(asked: Sequence[tuple[str, Asked]], names: Sequence[str]) -> Asked:
    """The jury's scores, notes and accounting from each juror's (``(label, asked)``)."""
    labels = [j for j, _ in asked]
    questions = len(asked[0][1][0])
    scores = [{n: verdict([(j, got[0][q][n]) for j, got in asked]) for n in names}
              for q in range(questions)]
    agreed = {n: agreement(n, labels, [[got[0][q][n] for _, got in asked]
                                       for q in range(questions)]) for n in names}
    notes = [f"{j}: {note}" for j, got in asked for note in got[1]]
    notes += [_note(n, a) for n, a in agreed.items()]
    summary = {**repeated_summary([got[2] for _, got in asked]),
               "model": ", ".join(labels),
               "jurors": {j: got[2] for j, got in asked}, "jury": agreed}
    summary.pop("judge_noise", None)  # each juror's own is under its name
    return scores, notes, summary


def _alpha(a: dict[str, Any]) -> str:
    if a.get("value") is None:
        return f"undefined ({a.get('reason', 'no pairable values')})"
    iv = "" if a.get("ci_low") is None else f" [{a['ci_low']:.2f}, {a['ci_high']:.2f}]"
    return f"{a['value']:.2f}{iv}"


def _note(metric: str, a: dict[str, Any]) -> str:
    means = ", ".join(f"{j} {'—' if m is None else f'{m:.3f}'}" for j, m in a["means"].items())
    n = a["questions"]
    return (f"jury of {len(a['jurors'])} on {metric} ({n} question{'s' * (n != 1)}): "
            f"Krippendorff's alpha {_alpha(a['alpha_values'])} on the values, "
            f"{_alpha(a['alpha_verdicts'])} on the verdicts; juror means: {means}")

"""Human labels on a subset of a run's questions, carried into its judge metrics as
corrected estimates (:mod:`ragmark.stats.ppi`).

The labels are a review CSV (``ragmark review export`` wrote it, people filled in the
``human`` column). A label counts for a question of a run only when the run produced
the very answer and contexts the person saw (the row's ``answer`` and ``contexts``
cells): a label of another answer says nothing about this one. Rows without a human
label, for a question the run does not have, of another answer, or where the run's
judge has no value are left out and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmark.analysis.review import cell_error, join_contexts, parse_value, review_rows
from ragmark.errors import ConfigError, DataError
from ragmark.results.model import RunReport
from ragmark.stats.ppi import ppi_mean


@dataclass(frozen=True, slots=True)
class HumanLabel:
    """One person's label of one answer for one judge metric (1 = yes, 0 = no, or a
    score in [0, 1])."""

    id: str
    metric: str
    answer: str
    contexts: str
    value: float
    answer_b: str | None = None
    """A preference (metric ``pairwise:CRITERION``): the second answer; ``answer`` is
    A's and ``value`` A's score (1 A better, 0 B, 0.5 a tie)."""


@dataclass(frozen=True, slots=True)
class HumanLabels:
    path: str
    labels: tuple[HumanLabel, ...]

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(lab.metric for lab in self.labels))


def read_human_labels(path: str | Path) -> HumanLabels:
    """The labelled rows of a review CSV; DataError (file, line, column) for a bad row,
    and when no row has a human label. (A queue of the label store, ``store:QUEUE``:
    :func:`ragmark.annotate.export.human_labels`.)"""
    if not Path(path).is_file():
        raise ConfigError(f"--human-labels {path}: no such file (a review CSV, or "
                          "store:QUEUE for a queue of `ragmark annotate`)")
    labels: list[HumanLabel] = []
    for row_no, start, cells in review_rows(path, ("id", "metric", "answer", "contexts",
                                                   "human")):
        try:
            value = parse_value(cells["human"])
        except ValueError as e:
            raise cell_error(path, row_no, start, cells, "human", e) from None
        if value is None:  # not labelled (yet): left out
            continue
        if not cells["id"].strip() or not cells["metric"].strip():
            raise DataError(f"row {row_no}: a labelled row needs its id and metric",
                            file=str(path), line=start, field="id")
        labels.append(HumanLabel(cells["id"].strip(), cells["metric"].strip(),
                                 cells["answer"], cells["contexts"], value))
    if not labels:
        raise DataError("no row has a human label (the 'human' column is empty); fill it "
                        "in with yes/no or a score between 0 and 1", file=str(path),
                        field="human")
    return HumanLabels(str(path), tuple(labels))


def corrected(report: RunReport, human: HumanLabels) -> dict[str, dict[str, Any]]:
    """Per judge metric the labels cover: the PPI++ estimate of its true mean (or why
    there is none), the labels used and those left out, by reason."""
    by_id = {q.id: q for q in report.queries}
    out: dict[str, dict[str, Any]] = {}
    for metric in human.metrics:
        if metric not in report.metrics:
            continue
        left_out: Counter[str] = Counter()
        labelled: dict[str, float] = {}
        for lab in human.labels:
            if lab.metric != metric:
                continue
            q = by_id.get(lab.id)
            if q is None:
                left_out["the run has no such question"] += 1
            elif (q.answer or "") != lab.answer or join_contexts(q.contexts) != lab.contexts:
                left_out["the run's answer or contexts differ from the labelled ones"] += 1
            elif not q.metrics[metric].ok:
                left_out["the judge has no value for it in this run"] += 1
            else:
                labelled[lab.id] = lab.value
        f_lab = [float(by_id[i].metrics[metric].value) for i in labelled]  # type: ignore[arg-type]
        f_rest = [float(q.metrics[metric].value) for q in report.queries  # type: ignore[arg-type]
                  if q.id not in labelled and q.metrics[metric].ok]
        entry: dict[str, Any] = {"file": human.path, "labels_left_out": dict(left_out)}
        if len(labelled) < 2:
            entry.update(estimate=None, reason=f"{len(labelled)} usable human label(s); "
                         "a corrected estimate needs at least 2")
        else:
            entry.update(ppi_mean(f_rest, f_lab, list(labelled.values())).to_json())
        out[metric] = entry
    return out


def corrected_lines(corr: dict[str, dict[str, Any]]) -> Sequence[str]:
    """One console line per corrected metric."""
    lines = []
    for metric, c in corr.items():
        if c.get("estimate") is None:
            lines.append(f"{metric}: no corrected estimate ({c['reason']})")
            continue
        lines.append(
            f"{metric}: judge mean {c['judge_mean']:.3f}; corrected (PPI++, "
            f"{c['n_labelled']} human labels, {c['n_unlabelled']} more judged) "
            f"{c['estimate']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]; the labels "
            f"alone {c['human_mean']:.3f}" + (f" ({c['note']})" if c.get("note") else ""))
    return lines

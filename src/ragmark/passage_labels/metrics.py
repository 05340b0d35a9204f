"""Metrics at every cutoff k of one query's LLM relevance labels (seed 003). Pure.

The input is the labels of a query's top K retrieved passages, best first: 1.0 (the
judge said an answer can be derived from the passage), 0.0 (it said no), or missing
(the judge gave no usable answer). At cutoff k, with R_k passages labelled relevant and
F_k labels failed among ranks 1..k, and R_K relevant in the whole labelled top K:

- ``judged_precision@k`` = R_k / (k − F_k): precision by the judge's labels (seed 003's
  Precision@k). A rank holding no passage (the retriever returned fewer than k) counts
  as not relevant, as in trec_eval; a failed label is left out.
- ``relative_recall@k`` = R_k / R_K (seed 003's Recall@k): recall relative to the
  relevant passages the judge found in the labelled top K, not to the dataset's
  targets; missing when the judge found none there.
- ``accuracy@k`` = R_k / (k − F_k), equal to judged_precision@k. Seed 003 defines accuracy as
  TP / k because every labelled passage is a retrieved one (there are no true
  negatives to count); it is kept under that name so its tables can be reproduced. How
  far the judge agrees with the ground truth is ``agreement@k``.
- ``num_relevant@k`` = R_k.
- ``answer_presence@k`` = 1 when R_k ≥ 1, else 0.
- ``agreement@k`` = the share of the labelled passages in ranks 1..k whose label equals
  their ground-truth relevance (grade > 0); only when the dataset has ground truth.

A failed label is excluded: the values are those of the labelled passages only. When
every passage in ranks 1..k failed, all values at k are missing (never 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragmark.metrics.labels import SPECS
from ragmark.metrics.names import read_name
from ragmark.stats import kappa_of_table
from ragmark.types import Score

METRICS = tuple(spec.name for spec in SPECS)
"""Metric names, in the order they are reported; each is reported as ``name@k``. The
first two are not the retrieval metrics ``precision@k`` and ``recall@k`` (which count
the dataset's targets) and are named for what they compute (:mod:`ragmark.metrics.labels`
declares them for the catalogue)."""

RENAMED = {"precision": "judged_precision", "recall": "relative_recall"}
"""The names older label runs gave these metrics: read back under the new names
(:func:`current_name`; the history store's migration 6 renames them in place)."""

LABELS = {spec.name: spec.label for spec in SPECS}

NO_TRUTH = "the dataset has no ground truth for this query"
ALL_FAILED = "every label in the top {k} failed"
NONE_RELEVANT = "no passage judged relevant in the labelled top {K}"


def per_k_metrics(
    labels: Sequence[Score], top_k: int, truth: Sequence[bool] | None = None
) -> dict[str, Score]:
    """``name@k`` -> value for every metric and every k from 1 to ``top_k``.

    ``labels`` holds at most ``top_k`` labels, best first (fewer when fewer passages
    were retrieved); ``truth`` (same length) the ground-truth relevance of each passage,
    or None when the query has none. Example: labels [0, 1, missing, 1], top_k 4 gives
    judged_precision@2 = 1/2, judged_precision@4 = 2/3, relative_recall@2 = 1/2,
    answer_presence@1 = 0.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    if len(labels) > top_k:
        raise ValueError(f"{len(labels)} labels for a top {top_k}")
    if truth is not None and len(truth) != len(labels):
        raise ValueError(f"{len(truth)} ground-truth values for {len(labels)} labels")
    total = sum(1 for s in labels if s.value == 1.0)
    columns: dict[str, list[Score]] = {m: [] for m in METRICS}
    relevant = failed = agree = labelled = 0
    for k in range(1, top_k + 1):
        if k <= len(labels):
            s = labels[k - 1]
            if s.value is None:
                failed += 1
            else:
                labelled += 1
                relevant += s.value == 1.0
                if truth is not None:
                    agree += (s.value == 1.0) == truth[k - 1]
        if failed and not labelled:
            for m in METRICS:
                columns[m].append(Score.missing(ALL_FAILED.format(k=k)))
            continue
        prec = Score(relevant / (k - failed))
        columns["judged_precision"].append(prec)
        columns["accuracy"].append(prec)
        columns["relative_recall"].append(Score(relevant / total) if total else
                                          Score.missing(NONE_RELEVANT.format(K=top_k)))
        columns["num_relevant"].append(Score(float(relevant)))
        columns["answer_presence"].append(Score(1.0 if relevant else 0.0))
        if truth is None:
            columns["agreement"].append(Score.missing(NO_TRUTH))
        elif labelled:
            columns["agreement"].append(Score(agree / labelled))
        else:
            columns["agreement"].append(Score.missing("no passage retrieved in the top k"))
    return {f"{m}@{k}": columns[m][k - 1] for m in METRICS for k in range(1, top_k + 1)}


def current_name(key: str) -> str:
    """A label metric's key as label runs write it now: ``precision@3`` (an older label
    file's) is ``judged_precision@3``; any other key as it is."""
    m = read_name(key)
    return str(replace(m, name=RENAMED[m.name])) if m.k is not None and m.name in RENAMED \
        else key


@dataclass(frozen=True, slots=True)
class Agreement:
    """How far the judge's labels agree with the dataset's ground truth (grade > 0).

    ``tp``: judge YES, relevant in the ground truth; ``fp``: YES, not relevant;
    ``fn``: NO, relevant; ``tn``: NO, not relevant. ``rate`` = (tp + tn) / n; ``kappa``
    is Cohen's kappa (None when chance agreement is 1, e.g. one class only).
    """

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def rate(self) -> float | None:
        return (self.tp + self.tn) / self.n if self.n else None

    @property
    def kappa(self) -> float | None:
        return kappa_of_table([[self.tp, self.fp], [self.fn, self.tn]]).value

    @classmethod
    def of(cls, pairs: Sequence[tuple[bool, bool]]) -> Agreement:
        """From (judge says relevant, ground truth says relevant) pairs."""
        tp = sum(1 for j, t in pairs if j and t)
        fp = sum(1 for j, t in pairs if j and not t)
        fn = sum(1 for j, t in pairs if not j and t)
        return cls(tp, fp, fn, len(pairs) - tp - fp - fn)

    def to_json(self) -> dict[str, float | int | None]:
        return {"n": self.n, "agreement": self.rate, "kappa": self.kappa, "tp": self.tp,
                "fp": self.fp, "fn": self.fn, "tn": self.tn}

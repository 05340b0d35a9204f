"""The label metrics: what ``ragmark label`` computes from an LLM's relevance label of
each passage in a question's top K (seed 003), declared here for the catalogue; their
formulas are :func:`ragmark.passage_labels.metrics.per_k_metrics`.

They are the catalogue's kind ``label``: their names are known to the gates, the run
history, ``ragmark metrics`` and the reports, but ``run`` and ``compare`` do not compute
them (:func:`ragmark.metrics.names.computable` says so). Two are named for what they
compute where the retrieval metric of the seed's name counts something else:
``judged_precision@k`` (seed 003's Precision@k) counts the passages the judge labelled
relevant, not the dataset's targets; ``relative_recall@k`` (seed 003's Recall@k) is
recall relative to the relevant passages in the labelled top K.
"""

from __future__ import annotations

from ragmark.types import Cutoff, Kind, MetricSpec

_JUDGED = ("llm", "contexts")

SPECS = (
    MetricSpec("judged_precision", Kind.LABEL, Cutoff.REQUIRED,
               "passages labelled relevant in the top k / (k - failed labels)",
               "Judged precision", _JUDGED),
    MetricSpec("relative_recall", Kind.LABEL, Cutoff.REQUIRED,
               "passages labelled relevant in the top k / those in the labelled top K",
               "Relative recall", _JUDGED),
    MetricSpec("accuracy", Kind.LABEL, Cutoff.REQUIRED,
               "passages labelled relevant in the top k / (k - failed labels) (seed 003's "
               "TP / k; equal to judged_precision)", "Accuracy", _JUDGED),
    MetricSpec("num_relevant", Kind.LABEL, Cutoff.REQUIRED,
               "passages labelled relevant in the top k", "Relevant", _JUDGED,
               bounded=False),
    MetricSpec("answer_presence", Kind.LABEL, Cutoff.REQUIRED,
               "1 when a passage in the top k is labelled relevant, else 0",
               "Answer presence", _JUDGED),
    MetricSpec("agreement", Kind.LABEL, Cutoff.REQUIRED,
               "share of the labelled passages in the top k whose label equals their "
               "ground-truth relevance (grade > 0)", "Agreement", (*_JUDGED, "ground_truth")),
)

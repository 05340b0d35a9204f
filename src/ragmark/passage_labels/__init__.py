"""LLM relevance labels for each config's top K (seed 003) and the metrics at every k:
precision, recall, accuracy, number relevant, answer presence, and agreement with the
dataset's ground truth."""

from __future__ import annotations

from ragmark.passage_labels.metrics import METRICS, Agreement, per_k_metrics
from ragmark.passage_labels.report import curve, label_from_json, label_json, label_markdown
from ragmark.passage_labels.tops import (
    ConfigLabels,
    LabelRun,
    TopK,
    check_template,
    estimate,
    label,
    label_pairs,
    top_k_passages,
)

__all__ = [
    "METRICS",
    "Agreement",
    "ConfigLabels",
    "LabelRun",
    "TopK",
    "check_template",
    "curve",
    "estimate",
    "label",
    "label_from_json",
    "label_json",
    "label_markdown",
    "label_pairs",
    "per_k_metrics",
    "top_k_passages",
]

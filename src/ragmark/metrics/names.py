"""Metric names: the one place where a metric string is parsed.

Every metric has one canonical string form (``ndcg@10``, ``recall@5``, ``mrr``,
``groundedness``). ``parse_metric`` accepts the canonical form, a few well-known
aliases (``P@10``, ``success@5``, ``recip_rank``, ``Rprec``) and any letter case, and
returns a :class:`MetricName` whose ``str()`` is canonical. An unknown name raises
:class:`~ragmark.errors.UnknownComponentError` listing the known ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragmark.errors import UnknownComponentError


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """What a metric family is: its kind, whether it takes a cutoff, one line on it."""

    name: str
    kind: str  # "retrieval" | "answer"
    cutoff: str  # "required" | "optional" | "none"
    summary: str


SPECS: dict[str, MetricSpec] = {
    s.name: s
    for s in (
        MetricSpec("precision", "retrieval", "required", "relevant items in the top k / k"),
        MetricSpec("recall", "retrieval", "required", "distinct targets found in the top k / all"),
        MetricSpec("hit", "retrieval", "required", "1 if any relevant item is in the top k"),
        MetricSpec("mrr", "retrieval", "optional", "1 / rank of the first relevant item"),
        MetricSpec("ndcg", "retrieval", "optional", "normalised DCG, linear gain (trec_eval)"),
        MetricSpec("map", "retrieval", "optional", "average precision over all targets"),
        MetricSpec("r_precision", "retrieval", "none", "precision at R = number of targets"),
        MetricSpec("bpref", "retrieval", "none",
                   "relevant ranked above judged non-relevant (trec_eval bpref)"),
        MetricSpec("judged", "retrieval", "required",
                   "items in the top k with a qrels judgment / k"),
        MetricSpec("keyword_coverage", "answer", "none", "share of expected keywords in answer"),
        MetricSpec("context_overlap", "answer", "none", "share of answer tokens in gold context"),
        MetricSpec("groundedness", "answer", "none", "share of content tokens in retrieved text"),
        MetricSpec("combined_score", "answer", "none", "a*coverage + (1-a)*overlap"),
        MetricSpec("exact_match", "answer", "none", "normalised answer == expected answer"),
        MetricSpec("token_f1", "answer", "none", "token F1 of answer against expected answer"),
        MetricSpec("answer_similarity", "answer", "none",
                   "cosine of answer and expected answer embeddings (MiniLM)"),
    )
}

ALIASES = {
    "p": "precision",
    "r": "recall",
    "success": "hit",
    "recip_rank": "mrr",
    "rprec": "r_precision",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "recall_k": "recall",
}

_PATTERN = re.compile(r"^\s*([a-z_][a-z0-9_]*?)(?:(?:@|_|\.)(\d+))?\s*$")


@dataclass(frozen=True, slots=True, order=True)
class MetricName:
    """A parsed metric: family name and optional cutoff. ``str()`` gives the canonical form."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def spec(self) -> MetricSpec:
        return SPECS[self.name]

    @property
    def kind(self) -> str:
        return SPECS[self.name].kind


def known_metrics() -> str:
    """The known metric names, for error messages and ``--help``."""
    parts = []
    for s in SPECS.values():
        suffix = {"required": "@k", "optional": "[@k]", "none": ""}[s.cutoff]
        parts.append(s.name + suffix)
    return ", ".join(parts)


def parse_metric(text: str | MetricName) -> MetricName:
    """Parse ``"ndcg@10"`` (or an alias) into a :class:`MetricName`.

    >>> str(parse_metric("P@5")), str(parse_metric("recip_rank")), str(parse_metric("NDCG_cut_10"))
    ('precision@5', 'mrr', 'ndcg@10')
    """
    if isinstance(text, MetricName):
        return text
    if not isinstance(text, str):
        raise UnknownComponentError(f"a metric name must be a string, got {text!r}")
    m = _PATTERN.match(text.lower())
    if m is None:
        raise UnknownComponentError(f"unknown metric {text!r}; known: {known_metrics()}")
    base, k_text = m.group(1), m.group(2)
    base = ALIASES.get(base, base)
    spec = SPECS.get(base)
    if spec is None:
        raise UnknownComponentError(f"unknown metric {text!r}; known: {known_metrics()}")
    k = int(k_text) if k_text is not None else None
    if spec.cutoff == "required" and k is None:
        raise UnknownComponentError(f"metric {text!r} needs a cutoff, e.g. '{base}@10'")
    if spec.cutoff == "none" and k is not None:
        raise UnknownComponentError(f"metric {text!r} takes no cutoff; use '{base}'")
    if k is not None and k < 1:
        raise UnknownComponentError(f"metric {text!r}: the cutoff must be at least 1")
    return MetricName(base, k)


def parse_metrics(texts: Iterable[str | MetricName] | str) -> list[MetricName]:
    """Parse a list (or a comma-separated string) of metric names; duplicates dropped."""
    if isinstance(texts, str):
        texts = [t for t in texts.split(",") if t.strip()]
    seen: dict[MetricName, None] = {}
    for t in texts:
        seen.setdefault(parse_metric(t), None)
    return list(seen)

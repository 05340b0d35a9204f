"""Metric names: the one place where a metric string is parsed.

Every metric has one canonical string form (``ndcg@10``, ``recall@5``, ``mrr``,
``groundedness``). ``parse_metric`` accepts the canonical form, a few well-known
aliases (``P@10``, ``success@5``, ``recip_rank``, ``Rprec``) and any letter case, and
returns a :class:`MetricName` whose ``str()`` is canonical. An unknown name raises
:class:`~ragmark.errors.UnknownComponentError` listing the known ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ragmark.errors import UnknownComponentError
from ragmark.metrics import answer as am
from ragmark.metrics import retrieval as ret

NEEDS = ("ground_truth", "qrels", "keywords", "gold_context", "expected_answer", "answer",
         "contexts", "llm", "embeddings")
"""What a metric can need from a question or a run: a ground truth (any kind), judged
documents (qrels), expected keywords, a gold context, an expected answer, an answer, the
retrieved contexts, an LLM endpoint, an embedding model."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric of the catalogue: canonical ``name``, ``kind`` (retrieval, answer,
    judge), ``cutoff`` rule (required, optional, none), a one-line ``summary`` (its
    formula), the console ``label`` (the name when empty), what it ``needs`` (see
    :data:`NEEDS`), the cutoffs it is computed at by ``default`` (``None`` for no cutoff;
    empty: only when asked for), and ``compute``, what computes it: for a retrieval
    metric ``compute(graded, k) -> per-query values`` (:mod:`ragmark.metrics.retrieval`),
    for an answer metric ``compute(case) -> Score`` (an
    :class:`~ragmark.metrics.answer.AnswerCase`; a plugin gives
    ``compute(sample, answer, contexts)``, which :func:`register` adapts); judge metrics
    are asked of a model (:mod:`ragmark.running.judging`)."""

    name: str
    kind: str  # "retrieval" | "answer" | "judge"
    cutoff: str  # "required" | "optional" | "none"
    summary: str
    label: str = ""
    needs: tuple[str, ...] = ()
    default: tuple[int | None, ...] = ()
    compute: Callable[..., Any] | None = field(default=None, compare=False)

    def title(self, k: int | None = None) -> str:
        """The console label, with the cutoff: ``nDCG@10``."""
        base = self.label or self.name
        return base if k is None else f"{base}@{k}"


def _spec(name: str, kind: str, cutoff: str, summary: str, label: str = "",
          needs: tuple[str, ...] = (), default: tuple[int | None, ...] = (),
          compute: Callable[..., Any] | None = None) -> MetricSpec:
    return MetricSpec(name, kind, cutoff, summary, label, needs, default, compute)


_RET = ("ground_truth",)


def _judge(name: str) -> Callable[..., Any]:
    """A judge metric's compute, ``compute(client, case, counts)``: the function ``name``
    of :mod:`ragmark.judges.metrics`, imported on the first judge call (reading metric
    names stays light)."""

    def compute(client: Any, case: Any, counts: Any) -> Any:
        from ragmark.judges import metrics as judges

        return getattr(judges, name)(client, case, counts)

    compute.__name__ = name
    return compute


_JUDGE_SPECS = (
    _spec("faithfulness", "judge", "none", "claims of the answer supported by the contexts "
          "/ claims", "Faithfulness", ("answer", "contexts", "llm"),
          compute=_judge("faithfulness_of")),
    _spec("answer_relevance", "judge", "none", "(rating 1-5 of how directly the answer "
          "addresses the question - 1) / 4", "Answer relevance", ("answer", "llm"),
          compute=_judge("answer_relevance_of")),
    _spec("context_relevance", "judge", "none", "retrieved passages that help answer the "
          "question / passages", "Context relevance", ("contexts", "llm"),
          compute=_judge("context_relevance_of")),
    _spec("answer_correctness", "judge", "none", "1 / 0.5 / 0 for a correct / partially "
          "correct / incorrect answer against the expected answer", "Answer correctness",
          ("answer", "expected_answer", "llm"),
          compute=_judge("answer_correctness_of")),
    _spec("context_recall", "judge", "none", "statements of the expected answer the "
          "contexts support / statements", "Context recall",
          ("contexts", "expected_answer", "llm"),
          compute=_judge("context_recall_of")),
    _spec("context_entity_recall", "judge", "none", "named entities of the expected answer "
          "the contexts mention / entities", "Context entity recall",
          ("contexts", "expected_answer", "llm"),
          compute=_judge("context_entity_recall_of")),
    _spec("context_precision", "judge", "none", "sum over ranks of precision@k for each "
          "context useful for the expected answer / useful contexts", "Context precision",
          ("contexts", "expected_answer", "llm"),
          compute=_judge("context_precision_of")),
    _spec("citation_correctness", "judge", "none", "[n]-citing sentences their cited "
          "contexts support / citing sentences", "Citation correctness",
          ("answer", "contexts", "llm"),
          compute=_judge("citation_correctness_of")),
)
_BUILTIN_SPECS = (
    _spec("recall", "retrieval", "required", "distinct targets found in the top k / all",
          "Recall", _RET, (3, 5, 10), compute=ret.recall),
    _spec("precision", "retrieval", "required", "relevant items in the top k / k",
          "Precision", _RET, (5,), compute=ret.precision),
    _spec("hit", "retrieval", "required", "1 if any relevant item is in the top k", "Hit",
          _RET, (5,), compute=ret.hit),
    _spec("mrr", "retrieval", "optional", "1 / rank of the first relevant item", "MRR", _RET,
          (None,), compute=ret.mrr),
    _spec("ndcg", "retrieval", "optional", "normalised DCG, linear gain (trec_eval)", "nDCG",
          _RET, (10,), compute=ret.ndcg),
    _spec("map", "retrieval", "optional", "average precision over all targets", "MAP", _RET,
          (None,), compute=ret.average_precision),
    _spec("r_precision", "retrieval", "optional", "precision at R = number of targets",
          "R-Precision", _RET, compute=ret.r_precision),
    _spec("bpref", "retrieval", "optional",
          "relevant ranked above judged non-relevant (trec_eval bpref)", "", ("qrels",),
          compute=ret.bpref),
    _spec("judged", "retrieval", "required", "items in the top k with a qrels judgment / k",
          "", ("qrels",), (10,), compute=ret.judged),
    _spec("keyword_coverage", "answer", "none", "share of expected keywords in answer", "",
          ("keywords", "answer"), (None,), compute=am.coverage_of),
    _spec("context_overlap", "answer", "none", "share of answer tokens in gold context", "",
          ("gold_context", "answer"), (None,), compute=am.overlap_of),
    _spec("combined_score", "answer", "none", "a*coverage + (1-a)*overlap", "",
          ("keywords", "gold_context", "answer"), (None,), compute=am.combined_of),
    _spec("groundedness", "answer", "none", "share of content tokens in retrieved text",
          "Groundedness (avg)", ("answer", "contexts"), (None,), compute=am.groundedness_of),
    _spec("exact_match", "answer", "none", "normalised answer == expected answer", "",
          ("expected_answer", "answer"), (None,), compute=am.exact_match_of),
    _spec("token_f1", "answer", "none", "token F1 of answer against expected answer", "",
          ("expected_answer", "answer"), (None,), compute=am.token_f1_of),
    _spec("answer_similarity", "answer", "none",
          "cosine of answer and expected answer embeddings (MiniLM)", "Answer similarity",
          ("expected_answer", "answer", "embeddings")),
    *_JUDGE_SPECS,
)

SPECS: dict[str, MetricSpec] = {s.name: s for s in _BUILTIN_SPECS}
"""The metric catalogue, in the order the defaults are computed and reported; plugins
(the ``ragmark.metric`` entry-point group) join it on first use (:func:`catalogue`)."""
_plugins_loaded = False


def catalogue() -> dict[str, MetricSpec]:
    """Every metric, the built-ins and those plugins add through the ``ragmark.metric``
    entry-point group (each a :class:`MetricSpec` of kind ``answer`` with ``compute``,
    or a callable returning one); loaded once, on first use, never at import."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group="ragmark.metric"):
            try:
                spec = ep.load()
                spec = spec() if not isinstance(spec, MetricSpec) else spec
            except Exception as e:  # a broken plugin must not break every command
                raise UnknownComponentError(
                    f"metric plugin {ep.name!r} ({ep.value}) cannot be loaded: {e}") from None
            register(spec)
    return SPECS


def register(spec: MetricSpec) -> None:
    """Add a metric to the catalogue: a plugin's answer metric, whose
    ``compute(sample, answer, contexts)`` is adapted to the catalogue's
    ``compute(case)``."""
    if spec.kind != "answer" or spec.compute is None:
        raise UnknownComponentError(f"metric plugin {spec.name!r}: only answer metrics "
                                    "with a compute(sample, answer, contexts) function can "
                                    "be added")
    given = spec.compute
    if spec.name in SPECS and _PLUGINS.get(spec.name) is not given:
        raise UnknownComponentError(f"metric {spec.name!r} is already in the catalogue")
    _PLUGINS[spec.name] = given

    def compute(case: am.AnswerCase) -> Any:
        return given(case.sample, case.answer, case.contexts)

    SPECS[spec.name] = replace(spec, compute=compute)


_PLUGINS: dict[str, Callable[..., Any]] = {}
"""A plugin metric's own compute function, by name (registering it again is a no-op)."""


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
        return catalogue()[self.name]

    @property
    def kind(self) -> str:
        return self.spec.kind


def known_metrics() -> str:
    """The known metric names, for error messages and ``--help``."""
    parts = []
    for s in catalogue().values():
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
    spec = catalogue().get(base)
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

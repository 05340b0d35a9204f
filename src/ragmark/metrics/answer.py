"""Answer metrics that need no model (pure), each returning a :class:`~ragmark.types.Score`.

A metric that cannot be computed returns ``Score.missing(reason)``, never 0. The answer
is checked first ("empty answer" for an empty or whitespace-only answer), then the
reference. Tokens come from :func:`ragmark.text.tokenize`; repeated answer tokens count
each time they occur.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from types import MappingProxyType

from ragmark.case import Case, reading
from ragmark.text import STOPWORDS, normalise, tokenize
from ragmark.types import Aggregate, Cutoff, Kind, MetricSpec, RunView, Score, spec

__all__ = [
    "combined_score",
    "context_overlap",
    "exact_match",
    "groundedness",
    "keyword_coverage",
    "token_f1",
]

EMPTY_ANSWER = "empty answer"
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")


def _score(value: float, **details: object) -> Score:
    if details:
        return Score(float(value), None, MappingProxyType(details))
    return Score(float(value))


def _join(context: str | Sequence[str]) -> str:
    return context if isinstance(context, str) else "\n".join(context)


def keyword_coverage(answer: str, keywords: Sequence[str]) -> Score:
    """Share of the expected keywords found in the answer (case-insensitive substring,
    white space collapsed on both sides; blank keywords are ignored).

    coverage = |{k in keywords : normalise(k) in normalise(answer)}| / |keywords|

    Example: answer "A retriever and a generator", keywords ["retriever", "generator",
    "reranker"] -> 2/3 = 0.667; details list the ``found`` and ``missing`` keywords.
    """
    if not answer.strip():
        return Score.missing(EMPTY_ANSWER)
    wanted = [k for k in keywords if k.strip()]
    if not wanted:
        return Score.missing("no expected keywords")
    text = normalise(answer)
    found = tuple(k for k in wanted if normalise(k) in text)
    missing = tuple(k for k in wanted if normalise(k) not in text)
    return _score(len(found) / len(wanted), found=found, missing=missing)


def context_overlap(answer: str, gold_context: str | Sequence[str]) -> Score:
    """Share of the answer's tokens (stop-words kept) that occur in the gold context.

    overlap = |{i : answer_tokens[i] in set(context_tokens)}| / |answer_tokens|;
    a list of contexts is joined first.

    Example: answer "BM25 ranks the chunks", context "BM25 ranks documents" -> tokens
    bm25, ranks, the, chunks; 2 of 4 are in the context -> 0.5.
    """
    if not answer.strip():
        return Score.missing(EMPTY_ANSWER)
    context = _join(gold_context)
    if not context.strip():
        return Score.missing("no gold context")
    tokens = tokenize(answer)
    if not tokens:
        return Score.missing("answer has no word tokens")
    vocab = set(tokenize(context))
    return _score(sum(t in vocab for t in tokens) / len(tokens))


def groundedness(
    answer: str, retrieved_context: str | Sequence[str], threshold: float = 0.10
) -> Score:
    """Share of the answer's content tokens (stop-words removed) found in the retrieved
    context; ``details["ungrounded"]`` is ``value < threshold``.

    groundedness = |{i : content_tokens[i] in set(context_tokens)}| / |content_tokens|

    Example: answer "The reranker reorders passages", context "a reranker reorders the
    candidates" -> content tokens reranker, reorders, passages; 2 of 3 -> 0.667,
    ungrounded False.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"groundedness threshold must be in [0, 1], got {threshold}")
    if not answer.strip():
        return Score.missing(EMPTY_ANSWER)
    tokens = [t for t in tokenize(answer) if t not in STOPWORDS]
    if not tokens:
        return Score.missing("answer has no content words")
    context = _join(retrieved_context)
    if not context.strip():
        return Score.missing("no retrieved context")
    vocab = set(tokenize(context))
    value = sum(t in vocab for t in tokens) / len(tokens)
    return _score(value, ungrounded=value < threshold)


def combined_score(coverage: Score, overlap: Score, alpha: float = 0.5) -> Score:
    """alpha * coverage + (1 - alpha) * overlap, alpha in [0, 1] (default 0.5).

    Missing when either input is missing; the reason names which and why.

    Example: coverage 1.0, overlap 0.5, alpha 0.5 -> 0.75.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"combined_score alpha must be in [0, 1], got {alpha}")
    problems = [
        f"{name} missing: {s.reason}"
        for name, s in (("coverage", coverage), ("overlap", overlap))
        if s.value is None
    ]
    if coverage.value is None or overlap.value is None:
        return Score.missing("; ".join(problems))
    return _score(alpha * coverage.value + (1.0 - alpha) * overlap.value)


def squad_normalise(s: str) -> str:
    """SQuAD answer normalisation: lower-case, drop ASCII punctuation, drop the articles
    a/an/the, collapse white space (as in the official SQuAD evaluation script).

    >>> squad_normalise("The  BM25-model, an index!")
    'bm25model index'
    """
    s = s.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES_RE.sub(" ", s).split())


def _missing_pair(answer: str, expected: str | None) -> Score | None:
    if not answer.strip():
        return Score.missing(EMPTY_ANSWER)
    if expected is None or not expected.strip():
        return Score.missing("no expected answer")
    return None


def exact_match(answer: str, expected: str | None) -> Score:
    """1.0 when the answer equals the expected answer after :func:`squad_normalise`,
    else 0.0.

    Example: "The Retriever." vs "retriever" -> 1.0.
    """
    missing = _missing_pair(answer, expected)
    if missing is not None or expected is None:
        return missing or Score.missing("no expected answer")
    return _score(float(squad_normalise(answer) == squad_normalise(expected)))


def token_f1(answer: str, expected: str | None) -> Score:
    """SQuAD token F1 between answer and expected answer (:func:`squad_normalise`,
    split on spaces, tokens counted with multiplicity).

    p = common / |answer tokens|, r = common / |expected tokens|, F1 = 2pr / (p + r);
    0 when nothing is in common; when either side normalises to no token, 1.0 if both
    do, else 0.0 (SQuAD 2.0 rule).

    Example: "dense passage retrieval" vs "dense retrieval" -> p = 2/3, r = 1, F1 = 0.8.
    """
    missing = _missing_pair(answer, expected)
    if missing is not None or expected is None:
        return missing or Score.missing("no expected answer")
    pred = squad_normalise(answer).split()
    gold = squad_normalise(expected).split()
    if not pred or not gold:
        return _score(float(pred == gold))
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return _score(0.0)
    p, r = common / len(pred), common / len(gold)
    return _score(2 * p * r / (p + r))


def coverage_of(c: Case) -> Score:
    """keyword_coverage of a case (missing without expected keywords)."""
    keywords = c.sample.expected_keywords
    return keyword_coverage(c.answer, keywords) if keywords else Score.missing(
        "no expected keywords")


def overlap_of(c: Case) -> Score:
    """context_overlap of a case (missing without a gold context)."""
    return context_overlap(c.answer, list(c.gold)) if c.gold else Score.missing(
        "no gold context")


def combined_of(c: Case) -> Score:
    """combined_score of a case, from its coverage and overlap."""
    return combined_score(coverage_of(c), overlap_of(c), c.params.alpha)


def groundedness_of(c: Case) -> Score:
    return groundedness(c.answer, list(c.contexts), c.params.grounded_threshold)


def exact_match_of(c: Case) -> Score:
    return exact_match(c.answer, c.sample.expected_answer)


def token_f1_of(c: Case) -> Score:
    return token_f1(c.answer, c.sample.expected_answer)


def grounded_ratio_of(run: RunView) -> Aggregate | None:
    """The share of answers whose groundedness is at or above the threshold, over the
    questions with a groundedness value (their reasons kept for the others); None when
    the run has no groundedness."""
    got = [q["groundedness"] for q in run.scores if "groundedness" in q]
    if not got:
        return None
    return Aggregate.of([Score(0.0 if g.details.get("ungrounded") else 1.0) if g.ok else g
                         for g in got])


SPECS: tuple[MetricSpec, ...] = (
    spec("keyword_coverage", "answer", "none", "share of expected keywords in answer", "",
         ("keywords", "answer"), (None,), compute=coverage_of),
    spec("context_overlap", "answer", "none", "share of answer tokens in gold context", "",
         ("gold_context", "answer"), (None,), compute=overlap_of),
    reading(spec("combined_score", "answer", "none", "a*coverage + (1-a)*overlap", "",
                 ("keywords", "gold_context", "answer"), (None,), compute=combined_of),
            "alpha"),
    reading(spec("groundedness", "answer", "none", "share of content tokens in retrieved "
                 "text", "Groundedness (avg)", ("answer", "contexts"), (None,),
                 compute=groundedness_of), "grounded_threshold"),
    spec("exact_match", "answer", "none", "normalised answer == expected answer", "",
         ("expected_answer", "answer"), (None,), compute=exact_match_of),
    spec("token_f1", "answer", "none", "token F1 of answer against expected answer", "",
         ("expected_answer", "answer"), (None,), compute=token_f1_of),
    spec("answer_similarity", "answer", "none",
         "cosine of answer and expected answer embeddings (MiniLM)", "Answer similarity",
         ("expected_answer", "answer", "embeddings")),
    reading(MetricSpec("grounded_ratio", Kind.AGGREGATE, Cutoff.NONE, "share of answers "
                       "with groundedness at or above the config's grounded_threshold "
                       "(computed with groundedness)", "Grounded ratio",
                       ("answer", "contexts"), of="groundedness",
                       compute=grounded_ratio_of), "grounded_threshold"),
)
"""The answer metrics of the catalogue, in the order they are reported: a new one is its
function above (``f(case) -> Score``) and its line here."""

"""Reference-free measures of a system in production: what a log or a trace recorded of
each question (latency, tokens, cost, the user's feedback) and two flags read from the
output itself (nothing retrieved; the answer is a refusal). They need no ground truth, so
they run on every logged record; each is an answer metric (``f(case) -> Score``) and
missing, with the reason, when the source did not record it (never 0).

A rate is the mean of a 0/1 flag: ``empty_retrieval`` averages to the share of questions
that retrieved nothing, ``refusal`` to the share of answers that decline.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ragmark.case import Case, reading
from ragmark.types import MetricSpec, Score, lower_better, spec

FACTS = {
    "retrieval_latency_s": ("seconds spent retrieving (the retriever and reranker "
                            "spans, else the --search-tool calls)"),
    "generation_latency_s": "seconds spent generating (the LLM spans)",
    "tokens": "tokens the LLM calls used (prompt and completion)",
    "cost_usd": "the LLM calls' cost as recorded, in US dollars",
    "feedback": "the user's feedback (a thumb as 1 or 0, a score as given)",
}
"""What a log or a trace can record of a question beyond its answer and contexts (the
answer's latency is :attr:`ragmark.data.logged.Output.latency_s`)."""


REFUSALS = (
    r"\bi (?:do not|don't|cannot|can't|could not|couldn't) (?:know|find|answer|say|help)",
    r"\b(?:i am|i'm) (?:not (?:sure|able)|unable)",
    r"\bno (?:relevant )?(?:information|answer|context)\b.{0,40}\b(?:found|available|"
    r"provided|given)",
    r"\b(?:the )?(?:provided |given )?(?:context|documents?|sources?) (?:does|do) not "
    r"(?:contain|mention|say|provide)",
    r"\bunable to (?:answer|find|determine)",
    r"\binsufficient (?:information|context)",
)
"""What counts as a refusal by default (lower-cased, anywhere in the answer), besides an
empty answer: "I don't know", "I cannot answer", "I'm not sure", "no information was
found", "the context does not mention", "unable to answer", "insufficient information"."""
_REFUSAL = re.compile("|".join(REFUSALS))


def is_refusal(answer: str, patterns: Sequence[str] = ()) -> bool:
    """True when the answer is empty or declines to answer: one of :data:`REFUSALS`, or
    of ``patterns`` (regular expressions, searched case-insensitively; a config's
    ``refusal_patterns``).

    >>> is_refusal("I don't know."), is_refusal(""), is_refusal("BM25 ranks by term weight")
    (True, True, False)
    >>> is_refusal("Not in my sources.", [r"not in my sources"])
    True
    """
    if not answer.strip() or _REFUSAL.search(answer.lower()) is not None:
        return True
    return any(_compiled(p).search(answer) for p in patterns)


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def refused(c: Case) -> bool:
    """Whether the case's answer is a refusal: the refusal judge's verdict when it gave
    one (``facts["refused"]``, ``refusal_judge = true``), else :func:`is_refusal`."""
    verdict = c.facts.get("refused")
    if verdict is not None:
        return bool(verdict)
    return is_refusal(c.answer, c.params.refusal_patterns)


def refusal_of(c: Case) -> Score:
    """1 when the answer declines (or is empty), else 0."""
    return Score(1.0 if refused(c) else 0.0)


def empty_retrieval_of(c: Case) -> Score:
    """1 when the system retrieved nothing for the question, else 0."""
    return Score(0.0 if c.contexts else 1.0)


def _recorded(key: str, what: str) -> Callable[[Case], Score]:
    def compute(c: Case) -> Score:
        v = c.facts.get(key)
        return Score(float(v)) if v is not None else Score.missing(f"not recorded ({what})")
    return compute


_MEASURES = (
    spec("latency_s", "answer", "none", "seconds the answer took, as measured or logged",
         "Latency (s)", ("logged",), compute=_recorded("latency_s", "the answer's latency")),
    *(spec(key, "answer", "none", what, "", ("logged",), compute=_recorded(key, what))
      for key, what in FACTS.items()),
)
SPECS: tuple[MetricSpec, ...] = (
    *lower_better((
        spec("empty_retrieval", "answer", "none", "1 when nothing was retrieved (mean: the "
             "rate)", "Empty retrieval", ("contexts",), compute=empty_retrieval_of),
        reading(spec("refusal", "answer", "none", "1 when the answer declines or is empty "
                     "(mean: the rate)", "Refusal", ("answer",), compute=refusal_of),
                "refusal_patterns"))),
    # seconds, tokens, dollars: lower is better, on their own scale; feedback as given
    *(replace(s, bounded=False) if s.name == "feedback" else s for s in lower_better(
        _MEASURES, frozenset(m.name for m in _MEASURES) - {"feedback"}, bounded=False)),
)
"""The production measures, in the order they are reported; none is a default of
``ragmark run`` (ask for them with ``--metrics``); ``ragmark monitor`` computes them on
every record."""

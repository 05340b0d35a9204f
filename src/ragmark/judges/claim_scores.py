"""The claim-level metrics of RAGChecker (Ru et al., 2024, "RAGChecker: A Fine-grained
Framework for Diagnosing Retrieval-Augmented Generation"), computed from claims and
entailment verdicts, and the per-question blame RAGChecker does not give.

Notation: the answer's claims ``a_j``, the expected answer's claims ``e_i``, the
retrieved chunks ``c_k``; a verdict is entailment or not (neutral and contradiction
count as not, as in RAGChecker). A chunk is *relevant* when it entails some ``e_i``; an
answer claim is *correct* when the expected answer entails it, *faithful* when some
chunk does.

- ``claim_precision``   = correct a_j / a_j
- ``claim_recall``      = e_i the answer entails / e_i
- ``claim_f1``          = 2PR / (P + R), 0 when P or R is 0
- ``claim_context_recall``    = e_i some chunk entails / e_i
- ``claim_context_precision`` = relevant chunks / chunks
- ``context_utilization``     = e_i entailed by some chunk and by the answer / e_i
  entailed by some chunk
- ``noise_sensitivity_relevant``   = incorrect a_j some relevant chunk entails / a_j
- ``noise_sensitivity_irrelevant`` = incorrect a_j an irrelevant chunk entails and no
  relevant one does / a_j
- ``hallucination``   = incorrect a_j no chunk entails / a_j
- ``self_knowledge``  = correct a_j no chunk entails / a_j
- ``claim_faithfulness`` = faithful a_j / a_j

Where RAGChecker writes 0 for a value that is not defined (no claims, no chunk, no
expected claim in any chunk), the metric is missing here with the reason. Checked in
the tests against RAGChecker's own example file (its claims, verdicts and values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmark.types import Score

METRICS = ("claim_precision", "claim_recall", "claim_f1", "claim_context_recall",
           "claim_context_precision", "context_utilization", "noise_sensitivity_relevant",
           "noise_sensitivity_irrelevant", "hallucination", "self_knowledge",
           "claim_faithfulness")
"""The claim-level metrics, in RAGChecker's order (overall, retriever, generator)."""

NEEDS: dict[str, tuple[str, ...]] = {
    "claim_precision": ("answer_claims", "answer_in_expected"),
    "claim_recall": ("expected_claims", "expected_in_answer"),
    "claim_f1": ("answer_claims", "answer_in_expected", "expected_claims",
                 "expected_in_answer"),
    "claim_context_recall": ("expected_claims", "expected_by_chunk"),
    "claim_context_precision": ("expected_claims", "expected_by_chunk"),
    "context_utilization": ("expected_claims", "expected_by_chunk", "expected_in_answer"),
    "noise_sensitivity_relevant": ("answer_claims", "expected_claims", "answer_by_chunk",
                                   "expected_by_chunk", "answer_in_expected"),
    "noise_sensitivity_irrelevant": ("answer_claims", "expected_claims", "answer_by_chunk",
                                     "expected_by_chunk", "answer_in_expected"),
    "hallucination": ("answer_claims", "answer_by_chunk", "answer_in_expected"),
    "self_knowledge": ("answer_claims", "answer_by_chunk", "answer_in_expected"),
    "claim_faithfulness": ("answer_claims", "answer_by_chunk"),
}
"""The pieces of a :class:`Checked` each metric reads."""

BLAME = {
    "retrieval_missed": "retrieval missed the evidence",
    "generator_ignored": "the generator ignored retrieved evidence",
    "generator_unsupported": "the generator added unsupported claims",
    "generator_noise": "the generator repeated wrong claims of retrieved passages",
    "fine": "fine",
}
"""The blame labels, worst-first in the order the pipeline runs: a question gets the
first that applies (all that apply are listed with their claims)."""


@dataclass(frozen=True)
class Checked:
    """One question's claims and verdicts (``True`` = entailment). A piece is None when
    it is not known, with the reason in ``why[piece]``."""

    answer_claims: list[str] | None
    expected_claims: list[str] | None
    n_chunks: int
    answer_by_chunk: list[list[bool]] | None = None
    """[j][k]: chunk k entails answer claim j (RAGChecker's retrieved2response)."""
    expected_by_chunk: list[list[bool]] | None = None
    """[i][k]: chunk k entails expected claim i (retrieved2answer)."""
    answer_in_expected: list[bool] | None = None
    """[j]: the expected answer entails answer claim j (answer2response)."""
    expected_in_answer: list[bool] | None = None
    """[i]: the answer entails expected claim i (response2answer)."""
    why: dict[str, str] = field(default_factory=dict)
    raw: dict[str, str | None] = field(default_factory=dict)
    """The judge's last output for a piece a judge failure left unknown."""

    def lack(self, pieces: Sequence[str]) -> str | None:
        """The first of ``pieces`` that is not known, or None when all are."""
        return next((p for p in pieces if getattr(self, p) is None), None)


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags)


def _any_rows(matrix: Sequence[Sequence[bool]]) -> list[bool]:
    return [any(row) for row in matrix]


def _relevant(c: Checked) -> list[bool]:
    """[k]: chunk k entails some expected claim."""
    assert c.expected_by_chunk is not None
    return [any(row[k] for row in c.expected_by_chunk) for k in range(c.n_chunks)]


def _undefined(name: str, c: Checked) -> str | None:
    """Why ``name`` has no value although its pieces are known (0 / 0)."""
    answer = "answer_claims" in NEEDS[name]
    expected = "expected_claims" in NEEDS[name]
    if answer and not c.answer_claims:
        return "the judge found no claims in the answer"
    if expected and not c.expected_claims:
        return "the judge found no claims in the expected answer"
    chunks = any(p.endswith("_by_chunk") for p in NEEDS[name])
    if chunks and c.n_chunks == 0:
        return "no retrieved context"
    return None


def _values(c: Checked) -> dict[str, Any]:
    """Every metric whose pieces are known and defined: value and the claims behind it."""
    out: dict[str, Any] = {}
    a, e = c.answer_claims or [], c.expected_claims or []
    if c.answer_in_expected is not None and a:
        out["claim_precision"] = (_share(c.answer_in_expected), {
            "incorrect": [x for x, ok in zip(a, c.answer_in_expected, strict=True) if not ok]})
    if c.expected_in_answer is not None and e:
        out["claim_recall"] = (_share(c.expected_in_answer), {
            "missed": [x for x, ok in zip(e, c.expected_in_answer, strict=True) if not ok]})
    if "claim_precision" in out and "claim_recall" in out:
        p, r = out["claim_precision"][0], out["claim_recall"][0]
        out["claim_f1"] = (2 * p * r / (p + r) if p > 0 and r > 0 else 0.0, {})
    if c.expected_by_chunk is not None and e and c.n_chunks:
        recalled = _any_rows(c.expected_by_chunk)
        relevant = _relevant(c)
        out["claim_context_recall"] = (_share(recalled), {
            "not_retrieved": [x for x, ok in zip(e, recalled, strict=True) if not ok]})
        out["claim_context_precision"] = (_share(relevant), {
            "irrelevant_passages": [k + 1 for k, ok in enumerate(relevant) if not ok]})
        if c.expected_in_answer is not None and any(recalled):
            used = [r and u for r, u in zip(recalled, c.expected_in_answer, strict=True)]
            out["context_utilization"] = (sum(used) / sum(recalled), {
                "unused": [x for x, r, u in zip(e, recalled, used, strict=True)
                           if r and not u]})
    if c.answer_by_chunk is not None and a and c.n_chunks:
        faithful = _any_rows(c.answer_by_chunk)
        out["claim_faithfulness"] = (_share(faithful), {
            "unsupported": [x for x, ok in zip(a, faithful, strict=True) if not ok]})
        if c.answer_in_expected is not None:
            wrong = [not ok for ok in c.answer_in_expected]
            out["hallucination"] = (_share([w and not f for w, f in zip(
                wrong, faithful, strict=True)]), {"hallucinated": [
                    x for x, w, f in zip(a, wrong, faithful, strict=True) if w and not f]})
            out["self_knowledge"] = (_share([not w and not f for w, f in zip(
                wrong, faithful, strict=True)]), {})
            if c.expected_by_chunk is not None and e:
                relevant = _relevant(c)
                rel = [any(row[k] and relevant[k] for k in range(c.n_chunks))
                       for row in c.answer_by_chunk]
                irr = [any(row[k] and not relevant[k] for k in range(c.n_chunks)) and not r
                       for row, r in zip(c.answer_by_chunk, rel, strict=True)]
                out["noise_sensitivity_relevant"] = (_share([
                    x and w for x, w in zip(rel, wrong, strict=True)]), {})
                out["noise_sensitivity_irrelevant"] = (_share([
                    x and w for x, w in zip(irr, wrong, strict=True)]), {})
    return out


def blame(c: Checked) -> dict[str, Any] | None:
    """Where the question went wrong, with the claims behind it: ``label`` (a key of
    :data:`BLAME`, the first that applies), ``says``, and ``problems`` (every label that
    applies, each with its claims). None when the verdicts needed are not all known.

    - retrieval_missed: expected claims no chunk entails and the answer lacks;
    - generator_ignored: expected claims some chunk entails but the answer lacks;
    - generator_unsupported: answer claims neither the chunks nor the expected answer
      entail (hallucination);
    - generator_noise: answer claims the expected answer does not entail, taken from
      a retrieved chunk (noise sensitivity)."""
    if c.lack(("answer_claims", "expected_claims", "answer_by_chunk", "expected_by_chunk",
               "answer_in_expected", "expected_in_answer")) is not None:
        return None
    assert c.answer_claims is not None and c.expected_claims is not None
    assert c.expected_by_chunk is not None and c.expected_in_answer is not None
    assert c.answer_by_chunk is not None and c.answer_in_expected is not None
    recalled = _any_rows(c.expected_by_chunk)
    faithful = _any_rows(c.answer_by_chunk)
    found: dict[str, list[str]] = {
        "retrieval_missed": _not_shared(c.expected_claims, recalled, False,
                                        c.expected_in_answer),
        "generator_ignored": _not_shared(c.expected_claims, recalled, True,
                                         c.expected_in_answer),
        "generator_unsupported": _not_shared(c.answer_claims, faithful, False,
                                             c.answer_in_expected),
        "generator_noise": _not_shared(c.answer_claims, faithful, True,
                                       c.answer_in_expected),
    }
    problems: list[dict[str, Any]] = [{"label": k, "says": BLAME[k], "claims": v}
                                      for k, v in found.items() if v]
    label = str(problems[0]["label"]) if problems else "fine"
    return {"label": label, "says": BLAME[label], "problems": problems}


def _not_shared(claims: Sequence[str], in_chunks: Sequence[bool], chunked: bool,
                shared: Sequence[bool]) -> list[str]:
    """The claims the other side does not hold (``shared`` false) whose support in the
    retrieved chunks (``in_chunks``) is ``chunked``."""
    return [x for x, r, s in zip(claims, in_chunks, shared, strict=True)
            if r == chunked and not s]


def claim_scores(c: Checked, calls: int | None = None) -> dict[str, Score]:
    """Every claim-level metric of one question: a value with the claims behind it (and
    the question's blame), or missing with the reason."""
    values = _values(c)
    told = blame(c)
    extra: dict[str, Any] = {"blame": told} if told is not None else {}
    if calls is not None:
        extra["calls"] = calls
    out: dict[str, Score] = {}
    for name in METRICS:
        if name in values:
            value, details = values[name]
            out[name] = Score(float(value), details={**details, **extra})
            continue
        piece = c.lack(NEEDS[name])
        if piece is not None:
            why = c.why.get(piece, f"{piece} not known")
            raw = {"raw": c.raw[piece]} if piece in c.raw else {}
            out[name] = Score.missing(why, **extra, **raw)
            continue
        # pieces known, value undefined (0 / 0); context_utilization with no expected
        # claim in any chunk is the one case _undefined does not name
        why = _undefined(name, c) or ("no claim of the expected answer is in the "
                                      "retrieved contexts")
        out[name] = Score.missing(why, **extra)
    return out

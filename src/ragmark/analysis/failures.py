"""The failing questions of a results file, each with a one-line diagnosis.

Five kinds of failure, checked per question:

- ``empty_ranking``: the question retrieved nothing at all (BM25: no query term is in
  the index; an external system: no contexts), with the cause the run recorded;
- ``no_hit``: no relevant item in the top k (questions without a relevant target in
  the ground truth are not checked);
- ``ungrounded``: the answer's groundedness is below the run's threshold (0.10 unless
  the file records another);
- ``low_faithfulness``: the judge's faithfulness is below a threshold (default 0.5:
  fewer than half the answer's claims are supported by the retrieved context);
- ``judge_failure``: a judge metric is missing because the judge gave no usable answer;
- ``unknown_ids``: nothing relevant retrieved, and the run's note says none of its
  retrieved ids is a corpus document or a judged id: the ids are of another kind (chunk
  or node ids against a set judged by document or file), not a retrieval miss;
- ``pairwise_loss``: a compare's pairwise judge (``--pairwise``) preferred the
  baseline's answer to this config's, by a criterion;
- ``claim_blame``: the claim-level diagnostics (``--metrics claims``) blame a part of the
  pipeline, with the claims behind it: retrieval missed the evidence, the generator
  ignored retrieved evidence, added unsupported claims, or repeated wrong claims of
  retrieved passages.

The diagnosis follows where the question went wrong: nothing relevant retrieved at all
points at chunking and embeddings; a relevant item below the top k points at ranking
(scoring, a reranker); an answer that is ungrounded or unfaithful although relevant
context was retrieved points at generation (prompt, context formatting).
"""

from __future__ import annotations

import re
from typing import Any

from ragmark.analysis.agent_failures import AGENT_KINDS, EXPECTING, NO_TRAJECTORY, agent_failures
from ragmark.analysis.blame import BLAME_ADVICE, claim_blame, quoted
from ragmark.analysis.failure_model import (  # noqa: F401 (the failures' names)
    KINDS,
    NOT_APPLICABLE,
    UNKNOWN_IDS,
    Failure,
    FailureReport,
)
from ragmark.analysis.inspection import Results, first_relevant
from ragmark.metrics.names import judge_metrics
from ragmark.results.model import QueryRecord
from ragmark.running.tournament import losses

DEFAULT_K = 10
FAITHFULNESS_BELOW = 0.5

_RETRIEVAL = {
    "ranking": "a ranking problem: tune the retriever's scoring or add a reranker",
    "retrieval": "a retrieval problem: check chunk boundaries and size, the embedding "
                 "model, and the question's wording against the documents",
}
_AT = re.compile(r"^(hit|recall)@(\d+)$")


class _Retrieval:
    """What the file tells of a question's retrieval: whether it has relevant targets,
    the rank of its first relevant item, and whether one is in the top ``depth``."""

    def __init__(self, results: Results, q: QueryRecord) -> None:
        self.q = q
        self.detailed = results.detailed
        self.has_targets: bool | None = None  # None: the file does not say
        self.first: int | None = None
        self.searched = True  # whether ``first is None`` means "nothing relevant at all"
        m = q.metrics
        scored = [x for n, x in m.items() if _AT.match(n) or n.startswith("mrr")]
        targets = (q.ground_truth or {}).get("targets")
        if isinstance(targets, dict):
            self.has_targets = bool(targets)
        elif scored:
            self.has_targets = any(x.value is not None for x in scored)
        if results.detailed:
            self.first = first_relevant(q)
        elif (rr := next((x for n, x in m.items() if n == "mrr" or n.startswith("mrr@")),
                         None)) is not None and rr.value is not None:
            mrr = rr.value  # 1 / rank of the first relevant item, 0 without one (in the top k)
            self.first = round(1 / mrr) if mrr > 0 else None
        else:
            self.searched = False

    def hit(self, depth: int | None) -> bool | None:
        """A relevant item in the top ``depth``; None when the file does not tell."""
        if not self.has_targets or depth is None:
            return None
        for name in (f"hit@{depth}", f"recall@{depth}"):
            got = self.q.metrics.get(name)
            if got is not None and got.value is not None and not self.detailed:
                return got.value > 0
        if self.first is not None:
            return self.first <= depth
        return False if self.searched else None


def _checkable_at(results: Results, depth: int) -> bool:
    names = {n for q in results.queries for n in q.metrics}
    return results.detailed or bool({f"hit@{depth}", f"recall@{depth}"} & names) or any(
        n == "mrr" or n.startswith("mrr@") for n in names)


def find_failures(results: Results, k: int = DEFAULT_K,
                  faithfulness_below: float = FAITHFULNESS_BELOW) -> FailureReport:
    """The failures of every question of ``results``, in file order."""
    top_k = results.settings.get("top_k")
    depth = min(k, top_k) if isinstance(top_k, int) and top_k > 0 else k
    rep = FailureReport(k, depth, faithfulness_below, results.grounded_threshold,
                        len(results.queries))
    if not _checkable_at(results, depth):
        rep.unchecked["no_hit"] = (f"the file has no hit@{depth}, recall@{depth} or mrr per "
                                   "question")
    if not results.detailed:
        rep.unchecked["judge_failure"] = ("a comparison file does not record why a value "
                                          "is missing")
    elif not any(n in q.metrics for q in results.queries for n in judge_metrics()):
        rep.unchecked["judge_failure"] = "no judge metric in the file"
    if not any(claim_blame(q) is not None for q in results.queries):
        rep.unchecked["claim_blame"] = ("no claim diagnostics in the file (judge them with "
                                        "--metrics claims)" if results.detailed else
                                        "a comparison file does not record the claims")
    if not any("faithfulness" in q.metrics for q in results.queries):
        rep.unchecked["low_faithfulness"] = ("no faithfulness in the file (judge it with "
                                             "--judge-metrics faithfulness)")
    if not any("groundedness" in q.metrics for q in results.queries):
        rep.unchecked["ungrounded"] = ("no groundedness in the file (run without "
                                       "--skip-generation)")
    empty = _empty_rankings(results, rep)
    top_n = results.settings.get("top_n")
    foreign_ids = any(UNKNOWN_IDS in n for n in results.report.notes)
    if not foreign_ids:
        rep.unchecked["unknown_ids"] = "every run's retrieved ids include judged ones"
    for q in results.queries:
        nothing = empty is not None and q.id in empty
        if empty is not None:
            rep.checked["empty_ranking"] += 1
            if nothing:
                rep.failures.append(_empty_ranking(q, empty[q.id]))
        ret = _Retrieval(results, q)
        hit = None if nothing else ret.hit(depth)  # said once, as an empty ranking
        if "no_hit" not in rep.unchecked and hit is not None:
            rep.checked["no_hit"] += 1
            if foreign_ids:
                rep.checked["unknown_ids"] += 1
            if not hit:
                rep.failures.append(_foreign_ids(q) if foreign_ids else _no_hit(q, ret))
        given = len(q.contexts) if q.contexts else top_n if isinstance(top_n, int) else None
        g = q.metrics.get("groundedness")
        if g is not None and g.value is not None:
            rep.checked["ungrounded"] += 1
            flag = g.details.get("ungrounded")
            if flag is True or (flag is None and g.value < rep.grounded_threshold):
                rep.failures.append(_ungrounded(q, g.value, rep.grounded_threshold,
                                                ret, given))
        f = q.metrics.get("faithfulness")
        if f is not None and f.value is not None:
            rep.checked["low_faithfulness"] += 1
            if f.value < faithfulness_below:
                rep.failures.append(_unfaithful(q, f.value, f.details, ret, given))
        judged = [n for n in judge_metrics() if n in q.metrics]
        if results.detailed and judged:
            rep.checked["judge_failure"] += 1
            broken = [n for n in judged
                      if q.metrics[n].value is None and "raw" in q.metrics[n].details]
            if broken:
                rep.failures.append(_judge_failed(q, broken, results.path))
        _claims(q, rep)
        _agent(q, rep)
    if not rep.checked["no_hit"] and "no_hit" not in rep.unchecked:
        rep.unchecked["no_hit"] = "no question has a relevant target in its ground truth"
    return _pairwise_losses(results, _agent_unchecked(rep))


def _claims(q: QueryRecord, rep: FailureReport) -> None:
    """The claim diagnostics' blame of the question, when it has them."""
    told = claim_blame(q)
    if told is not None:
        rep.checked["claim_blame"] += 1
        if told.get("label") != "fine":
            rep.failures.append(_blamed(q, told))


def _empty_rankings(results: Results, rep: FailureReport) -> dict[str, str] | None:
    """The questions that retrieved nothing (id -> why); None, with the reason in
    ``rep``, when that cannot be told or is no failure (an agent's set)."""
    empty = results.empty
    if empty is None and results.detailed:  # an older file: its rankings tell
        empty = {q.id: "the file does not record why" for q in results.queries
                 if not q.retrieved and any(m.value is not None for m in q.metrics.values())}
    if empty is None:
        rep.unchecked["empty_ranking"] = ("the file does not record empty rankings (a "
                                          "comparison written by an older ragmark)")
    elif results.report.dataset.get("format") == "agent":  # nothing to retrieve: no failure
        rep.unchecked["empty_ranking"] = ("an agent's set: its questions expect tool calls, "
                                          "no passage to retrieve")
        return None
    return empty


def _agent_unchecked(rep: FailureReport) -> FailureReport:
    """Why an agent's kinds were not checked: no trajectory, or no expected call."""
    for kind in AGENT_KINDS:
        if not rep.checked[kind]:
            rep.unchecked[kind] = NO_TRAJECTORY if not rep.checked["loop"] else (
                "no question expects tool calls (expected_tool_calls)")
    return rep


def _agent(q: QueryRecord, rep: FailureReport) -> None:
    """The question's agent failures (:mod:`ragmark.analysis.agent_failures`)."""
    got = agent_failures(q)
    if got is None:
        return
    found, expected = got
    for kind in AGENT_KINDS:
        rep.checked[kind] += expected or kind not in EXPECTING
    rep.failures += [Failure(q.id, kind, fact, "agent", advice) for kind, fact, advice in found]


def _pairwise_losses(results: Results, rep: FailureReport) -> FailureReport:
    """The questions the config lost to the baseline by the pairwise judge, each with
    the criteria and the judge's reasons (:func:`ragmark.running.tournament.losses`)."""
    p, base = results.pairwise, results.baseline
    if p is None or base is None or results.config == base:
        rep.unchecked["pairwise_loss"] = NOT_APPLICABLE if p is None else (
            "the config is the baseline (inspect another with --config-name)")
        return rep
    rep.checked["pairwise_loss"], lost = losses(p, results.config, base)
    for qid, why in lost.items():
        said = "; ".join(f"{c}: {r}" if r else c for c, r in why)
        rep.failures.append(Failure(
            qid, "pairwise_loss", f"the judge preferred {base}'s answer "
            f"({', '.join(c for c, _ in why)})", "generation", f"compare the two answers "
            f"(ragmark inspect FILE {qid} --config-name {base}); the judge said: {said}"))
    at = {q.id: i for i, q in enumerate(results.queries)}
    rep.failures.sort(key=lambda f: at.get(f.query, len(at)))  # file order, kinds kept
    return rep


def _empty_ranking(q: QueryRecord, cause: str) -> Failure:
    if cause == "no query term in the index":
        advice = ("the question shares no term with the indexed text: check its wording "
                  "and the tokenizer (stemming, stop-words), or use a dense or hybrid "
                  "retriever, which finds passages by meaning")
    else:
        advice = "the system returned no contexts: check its retriever and what it logs"
    return Failure(q.id, "empty_ranking", f"retrieved nothing ({cause})", "retrieval",
                   advice)


def _foreign_ids(q: QueryRecord) -> Failure:
    return Failure(q.id, "unknown_ids", "no retrieved id is a corpus document or a judged "
                   "id (the run's ids are of another kind)", "retrieval",
                   "name each context by the document the ground truth judges: a log's "
                   "'doc_id', or for traces --trace-attribute document_id=KEY (LlamaIndex: "
                   "file_name); a retrieval miss cannot be told until then")


def _no_hit(q: QueryRecord, ret: _Retrieval) -> Failure:
    if ret.first is not None:
        return Failure(q.id, "no_hit", f"first relevant item at rank {ret.first}", "ranking",
                       _RETRIEVAL["ranking"])
    missed = ""
    targets = (q.ground_truth or {}).get("targets")
    if isinstance(targets, dict) and targets:
        names = list(targets)
        missed = "; missed " + ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
    where = (f"in all {len(q.retrieved)} retrieved" if ret.detailed
             else "retrieved at all")
    return Failure(q.id, "no_hit", f"nothing relevant {where}{missed}", "retrieval",
                   _RETRIEVAL["retrieval"])


def _after_retrieval(ret: _Retrieval, given: int | None, advice: str) -> tuple[str, str]:
    """(cause, diagnosis) of an answer problem, given what reached the generator."""
    hit = ret.hit(given)
    if hit:
        rank = "" if ret.first is None else f" (rank {ret.first})"
        return "generation", (f"a relevant item{rank} was among the {given} contexts given "
                              f"to the generator: a generation problem; {advice}")
    if hit is False and ret.first is not None:
        return "ranking", (f"the first relevant item (rank {ret.first}) was not among the "
                           f"{given} contexts given to the generator: fix the ranking first, "
                           "or pass more contexts")
    if hit is False:
        return "retrieval", ("nothing relevant was retrieved, so the answer had nothing to "
                             "rest on: fix retrieval first")
    return "unknown", ("no ground truth tells whether relevant context was retrieved; "
                       f"possible hallucination or paraphrase: {advice}")


def _ungrounded(q: QueryRecord, value: float, threshold: float, ret: _Retrieval,
                given: int | None) -> Failure:
    cause, why = _after_retrieval(
        ret, given, "check the prompt and how the contexts are passed to the generator")
    return Failure(q.id, "ungrounded", f"groundedness {value:.3f}, below {threshold:g}",
                   cause, why)


def _unfaithful(q: QueryRecord, value: float, details: Any, ret: _Retrieval,
                given: int | None) -> Failure:
    claims, bad = details.get("claims"), details.get("unsupported")
    fact = f"faithfulness {value:.3f}"
    if isinstance(claims, list) and isinstance(bad, list):
        fact += f": {len(bad)} of {len(claims)} claims unsupported by the retrieved context"
    cause, why = _after_retrieval(
        ret, given, "the answer states what the context does not; ask the generator to "
                    "answer only from the context")
    return Failure(q.id, "low_faithfulness", fact, cause, why)


def _judge_failed(q: QueryRecord, names: list[str], path: str) -> Failure:
    reasons = [str(q.metrics[n].reason) for n in names]
    fact = "; ".join(r if r.startswith(n) else f"{n}: {r}"
                     for n, r in zip(names, reasons, strict=True))
    return Failure(q.id, "judge_failure", fact, "judge",
                   "the judge gave no usable verdict: check the judge model and endpoint "
                   f"(the raw output is kept: ragmark inspect {path} {q.id} --json)")


def _blamed(q: QueryRecord, told: dict[str, Any]) -> Failure:
    problems = [p for p in told.get("problems", []) if isinstance(p, dict)]
    first = next((p for p in problems if p.get("label") == told["label"]), None)
    claims = list(first.get("claims", [])) if first else []
    cause, advice = BLAME_ADVICE.get(str(told["label"]), ("unknown", "{claims}"))
    also = [str(p.get("says")) for p in problems if p is not first]
    fact = str(told.get("says", told["label"])) + (
        f" ({len(claims)} claim{'s' if len(claims) != 1 else ''})" if claims else "") + (
        f"; also: {'; '.join(also)}" if also else "")
    return Failure(q.id, "claim_blame", fact, cause, advice.format(claims=quoted(claims)))


def failures_json(results: Results, rep: FailureReport) -> dict[str, Any]:
    """The failure report for ``ragmark inspect --failures --json``."""
    return {
        "file": results.path,
        "source": results.describe(),
        "questions": rep.n_queries,
        "k": rep.k,
        "checked_depth": rep.depth,
        "thresholds": {"groundedness": rep.grounded_threshold,
                       "faithfulness": rep.faithfulness_below},
        "summary": {
            kind: {"label": rep.label(kind), "failures": rep.count(kind),
                   "occurrences": rep.occurrences(kind),
                   "checked": rep.checked[kind], "causes": rep.causes(kind),
                   **({"not_checked": rep.unchecked[kind]} if kind in rep.unchecked else {})}
            for kind in rep.kinds()
        },
        "failures": [{"id": f.query, "kind": f.kind, "fact": f.fact, "cause": f.cause,
                      "diagnosis": f.diagnosis} for f in rep.failures],
        "notes": list(results.notes),
    }

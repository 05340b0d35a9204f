"""The stages every source's output goes through: match the rankings against the ground
truth (with the retrieval metrics, in shards on the active executor), score the answers,
judge them on the driver's LLM client. Each returns new values; the runner's reduce
(:func:`ragmark.running.runner._score`) builds the records from them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ragmark.aio import run_sync
from ragmark.case import Case, earlier_turns, params_of
from ragmark.config import RunConfig
from ragmark.executors import active
from ragmark.generation.base import GenerationFailed
from ragmark.llm import LLMSettings
from ragmark.matching import (
    CONTAINS,
    GradedItem,
    Matcher,
    grade_ranking,
    to_graded,
    unmatchable,
)
from ragmark.metrics import answer as am
from ragmark.metrics.abstention import UNANSWERABLE
from ragmark.metrics.evaluate import compute_all
from ragmark.metrics.names import MetricName
from ragmark.metrics.similarity import answer_similarity
from ragmark.pipelines.base import RECORDED, Produced, StageReport
from ragmark.progress import Progress
from ragmark.results.model import HopRecord
from ragmark.running.judging import refusals_async
from ragmark.running.jury import jury_verdicts, label_of
from ragmark.running.repeats import asked_repeatedly
from ragmark.running.task import Task
from ragmark.types import Document, GroundTruth, Sample, Score

SKIPPED = "generation skipped"
"""The reason of answer metrics in a run told not to generate (--skip-generation)."""

def unknown_ids_note(corpus_ids: set[str], samples: Sequence[Sample],
                     made: Sequence[Produced]) -> str | None:
    """A note when the questions are judged by document id and not one retrieved document
    id is a corpus document or a ground-truth id (node UUIDs against a set judged by
    file): every retrieval metric is then 0, which is the ids' kind, not the retrieval."""
    if not any(s.truth.kind == "ids" for s in samples):
        return None
    got = {c.doc_id for p in made for c in p.chunks}
    known = corpus_ids | {t for s in samples for t in s.truth.doc_grades}
    if not got or got & known:
        return None
    shown = ", ".join(sorted(got)[:3]) + (", ..." if len(got) > 3 else "")
    return (f"none of the {len(got)} retrieved document ids ({shown}) is a corpus document "
            "or a ground-truth id, so every retrieval metric is 0: are they ids of another "
            "kind (chunk or node ids where the set names files)? For traces, "
            "--trace-attribute document_id=KEY reads the document's id from that key of the "
            "documents' metadata")


def _gold_context(sample: Sample, docs: Mapping[str, Document]) -> list[str]:
    t = sample.truth
    if t.passages:
        return list(t.passages)
    if t.sections:
        out = []
        for d, s in t.sections:
            doc = docs.get(d)
            if doc is not None and 0 <= s < len(doc.sections):
                out.append(doc.sections[s])
        return out
    return [docs[d].text for d, g in t.doc_grades.items() if g > 0 and d in docs]


SIMILARITY = "answer_similarity"


def _answer_scores(case: Case, metrics: Sequence[MetricName]) -> dict[str, Score]:
    """Each answer metric that computes itself (the catalogue's ``compute``; the
    embedding and judge metrics are computed for every question at once elsewhere)."""
    out = {}
    for m in metrics:
        if not case.sample.answerable and m.name in REFERENCED:
            out[str(m)] = Score.missing(UNANSWERABLE)  # nothing to compare it with
        elif m.spec.compute is not None:
            out[str(m)] = m.spec.compute(case, **m.settings())
    return out


REFERENCED = frozenset(s.name for s in am.SPECS)
"""The answer metrics that judge an answer against a reference or the gold context:
missing on a question marked unanswerable (the abstention metrics count it instead)."""



MATCH_SHARD = 512
"""Questions matched (and their retrieval metrics computed) per work item."""


@dataclass(frozen=True)
class Matched:
    """Matching, columnar over questions: each judged ranking, each question's relevant
    targets with their grades, and each retrieval metric's per-question values (NaN:
    no relevant target)."""

    rankings: list[list[GradedItem]]
    target_grades: list[dict[str, int]]
    values: dict[str, NDArray[np.float64]]
    hops: list[tuple[HopRecord, ...]]


def judge_hops(truth: GroundTruth, p: Produced, unit: str, grades: Mapping[str, int],
               rule: str = CONTAINS) -> tuple[HopRecord, ...]:
    """Each retrieval step of a question judged on its own ranking: recall (relevant
    targets it retrieved / relevant targets), hit, reciprocal rank of its first relevant
    item, and the relevant targets no earlier step had retrieved. () without steps."""
    relevant = {t for t, g in grades.items() if g > 0}
    if not relevant:  # nothing to find: each step's measures are missing, none graded
        return tuple(HopRecord(name, size, None, None, None) for name, size in p.hops)
    out: list[HopRecord] = []
    seen: set[str] = set()
    start = 0
    for name, size in p.hops:
        chunks = p.chunks[start : start + size]
        start += size
        ranked = grade_ranking(truth, chunks, [float(size - i) for i in range(size)], unit,
                               Matcher(truth, rule=rule))
        got: set[str] = set()
        first: int | None = None
        for it in ranked:
            hit = relevant.intersection(it.match.targets) if it.match else set()
            if hit and first is None:
                first = it.rank
            got |= hit
        new = tuple(sorted(got - seen))
        seen |= got
        out.append(HopRecord(name, size, len(got) / len(relevant), float(bool(got)),
                             0.0 if first is None else 1.0 / first, new))
    return tuple(out)


def match_shard(shared: tuple[str, Sequence[MetricName], str],
                item: tuple[Sequence[Sample], Sequence[Produced]]) -> Matched:
    """One work item: match a shard of questions' rankings against their ground truth
    (by the config's context match rule) and compute their retrieval metrics (each
    question's values depend on it alone)."""
    unit, names, rule = shared
    samples, produced = item
    rankings: list[list[GradedItem]] = []
    grades: list[dict[str, int]] = []
    hops: list[tuple[HopRecord, ...]] = []
    for s, p in zip(samples, produced, strict=True):
        matcher = Matcher(s.truth, rule=rule)
        rankings.append(grade_ranking(s.truth, p.chunks, p.scores, unit, matcher))
        grades.append(matcher.target_grades())
        hops.append(judge_hops(s.truth, p, unit, grades[-1], rule) if p.hops else ())
    values = compute_all(to_graded([s.id for s in samples], grades, rankings,
                                   [s.truth for s in samples]), names)
    return Matched(rankings, grades, values, hops)


def match_stage(samples: Sequence[Sample], produced: Sequence[Produced], unit: str,
                names: Sequence[MetricName], prog: Progress, rule: str = CONTAINS) -> Matched:
    """:func:`match_shard` over every question, in shards on the active executor."""
    items = [(samples[a : a + MATCH_SHARD], produced[a : a + MATCH_SHARD])
             for a in range(0, len(samples), MATCH_SHARD)]
    with prog.task("matching against the ground truth", len(samples)) as advance:
        parts = active().map(match_shard, (unit, list(names), rule), items,
                             on_done=lambda i, r: advance(len(items[i][0])))
    return Matched([r for m in parts for r in m.rankings],
                   [g for m in parts for g in m.target_grades],
                   {str(n): np.concatenate([m.values[str(n)] for m in parts]) for n in names},
                   [h for m in parts for h in m.hops])


def _no_answer(p: Produced, failed: Score | None) -> str | None:
    """Why a question has no answer to read (its failure, its generation's, generation
    skipped); None when it has one."""
    if failed is not None:
        return failed.reason
    if isinstance(p.answer, GenerationFailed):
        return p.answer.reason if p.answer.reason.startswith(RECORDED) else (
            f"generation failed: {p.answer.reason}")
    return SKIPPED if p.answer is None else None


def cases_of(samples: Sequence[Sample], produced: Sequence[Produced],
             failed: Mapping[int, Score], cfg: RunConfig, docs: Mapping[str, Document]
             ) -> list[Case]:
    """Each question's :class:`~ragmark.case.Case`, made once: what its source made of
    it, with its conversation's earlier turns, the data's language, its gold contexts
    and the config's metric parameters."""
    params = params_of(cfg)
    why = [_no_answer(p, failed.get(qi)) for qi, p in enumerate(produced)]
    answers = [str(p.answer) if w is None else None for p, w in zip(produced, why, strict=True)]
    turns = earlier_turns(samples, answers)
    return [Case(s, a or "", tuple(p.contexts), w, t, cfg.language,
                 tuple(_gold_context(s, docs)), params, p.given)
            for s, p, a, w, t in zip(samples, produced, answers, why, turns, strict=True)]


def answer_stage(samples: Sequence[Sample], produced: Sequence[Produced],
                 failed: Mapping[int, Score], names: Sequence[MetricName], cfg: RunConfig,
                 docs: Mapping[str, Document]) -> tuple[list[Case], list[dict[str, Score]]]:
    """Each question's case and its answer metrics (missing with the reason when the
    question failed, generation failed or was skipped)."""
    cases = cases_of(samples, produced, failed, cfg, docs)
    scores: list[dict[str, Score]] = []
    for qi, (case, p) in enumerate(zip(cases, produced, strict=True)):
        if qi in failed:
            scores.append({str(m): failed[qi] for m in names})
        elif isinstance(p.answer, GenerationFailed):
            # the metrics that do not read the answer (contexts, logged facts) stand
            without = [m for m in names if "answer" not in m.spec.needs
                       and m.spec.compute is not None]
            scores.append({str(m): Score.missing(str(case.no_answer)) for m in names}
                          | _answer_scores(case, without))
        elif p.answer is None:
            scores.append({str(m): Score.missing(SKIPPED) for m in names})
        else:
            scores.append(_answer_scores(case, names))
    if any(m.name == SIMILARITY for m in names):  # one batch of embeddings for all
        todo = [qi for qi, sc in enumerate(scores) if SIMILARITY not in sc]
        got = answer_similarity([cases[qi].answer_or_none for qi in todo],
                                [samples[qi].expected_answer for qi in todo])
        for qi, score in zip(todo, got, strict=True):
            scores[qi][SIMILARITY] = score
    return cases, scores


def refusal_stage(samples: Sequence[Sample], produced: Sequence[Produced],
                  failed: Mapping[int, Score], *, prog: Progress, llm: LLMSettings | None,
                  language: str | None = None) -> tuple[list[Produced], StageReport]:
    """The refusal judge (``refusal_judge = true``) on every answer: its verdict goes
    with the question's facts as ``refused`` (1 or 0), which the refusal and abstention
    metrics then read instead of the phrases."""

    todo = [qi for qi, p in enumerate(produced)
            if qi not in failed and isinstance(p.answer, str)]
    if not todo:
        return list(produced), StageReport()
    t0 = time.perf_counter()
    with prog.task("judging refusals", len(todo)) as adv:
        flags, notes, summary = run_sync(refusals_async(
            [samples[qi] for qi in todo], [str(produced[qi].answer) for qi in todo], llm,
            adv, language))
    out = list(produced)
    for qi, flag in zip(todo, flags, strict=True):
        if flag is not None:
            given = out[qi].given
            out[qi] = replace(out[qi], given=replace(
                given, facts={**given.facts, "refused": float(flag)}))
    return out, StageReport({"refusal_judge_s": time.perf_counter() - t0}, tuple(notes),
                            {"refusal": summary} if summary else {})


def judge_stage(cases: Sequence[Case],
                failed: Mapping[int, Score], judge_names: Sequence[str], *, prog: Progress,
                task: Task, cfg: RunConfig | None = None,
                ) -> tuple[list[dict[str, Score]], StageReport]:
    """Each question's judge scores (on the driver's LLM client: ``task.llm``, required
    with ``task.require_llm``); ``cfg`` gives the data's ``language`` and the aligned
    judges' guidance (its ``[judges]`` tables). ``task.judge_repeats`` > 1: every judge
    asked that many times, the judges' noise measured (:mod:`ragmark.running.repeats`);
    ``task.jurors``: a jury, every juror asked, their values combined and their
    agreement measured (:mod:`ragmark.running.jury`)."""
    ok = [qi for qi in range(len(cases)) if qi not in failed]
    scores = [{n: failed[qi] for n in judge_names} if qi in failed else {}
              for qi in range(len(cases))]
    if not judge_names or not ok:
        return scores, StageReport()
    t0 = time.perf_counter()
    asked = [cases[i] for i in ok]
    guidance = None if cfg is None else cfg.guidance()
    if task.jurors:
        got, notes, summary = jury_verdicts(
            [(label_of(j), asked_repeatedly(asked, judge_names, j, task, prog, guidance))
             for j in task.jurors], judge_names)
    else:
        got, notes, summary = asked_repeatedly(asked, judge_names, task.llm, task, prog,
                                               guidance)
    for i, sc in zip(ok, got, strict=True):
        scores[i] = sc
    return scores, StageReport({"judge_s": time.perf_counter() - t0}, tuple(notes), summary)


def retrieval_scores(s: Sample, qi: int, values: Mapping[str, NDArray[np.float64]],
                      failed: Mapping[int, Score], mean: str = "relevant",
                      unjudged: bool = False, rule: str = CONTAINS) -> dict[str, Score]:
    """A question's retrieval metrics. Without a relevant target a value is missing with
    the reason, unless ``mean`` is ``trec_eval`` and the qrels judge the question (some
    document judged, none relevant): then it is 0, as trec_eval counts it. ``unjudged``:
    the question's contexts carry no ids and none is a corpus document's text, so a
    ground truth by id cannot judge them: every value is missing with that reason."""
    none = UNANSWERABLE if not s.answerable else "no ground truth" if (
        s.truth.kind == "none") else "no relevant target in the ground truth"
    zero = mean == "trec_eval" and s.truth.kind == "ids" and bool(s.truth.doc_grades)
    short = unmatchable(s.truth, rule=rule) or (UNJUDGED if unjudged else None)
    out = {}
    for name, arr in values.items():
        v = float(arr[qi])
        out[name] = failed.get(qi) or (Score.missing(short) if short else (
            Score.missing(NEEDS_QRELS) if name.startswith(QRELS_ONLY) and s.truth.kind != "ids"
            else Score(v) if not np.isnan(v) else Score(0.0) if zero
            else Score.missing(none)))
    return out


UNJUDGED = ("contexts carry no ids and the ground truth is by id (no context's text is a "
            "corpus document's)")
QRELS_ONLY = ("bpref", "judged@")
"""Metrics that need documents judged not relevant (qrels), not passages or sections."""
NEEDS_QRELS = ("needs judged documents (qrels); this ground truth names relevant passages "
               "or sections only")



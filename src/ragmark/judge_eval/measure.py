"""Run a judge over labelled items and measure it (``ragmark judge-eval``).

Each item is judged with the metric's judge (faithfulness by default) through the
cached LLM client; its score becomes a verdict: *unsupported* when it is below the
threshold (faithfulness: 1.0, every claim supported; the others: 0.5; ``threshold``
sets another, and the report's ``rule`` says which was used). The score itself is
measured too (:mod:`ragmark.judge_eval.scores`): ROC AUC against the labels, balanced
accuracy at each threshold, and a threshold chosen by cross-validation. An item whose
judge gave no verdict (a failed call, unusable output after the re-ask) is left out of
the statistics and counted in the failure rate, never scored. With ``repeats`` > 1 the
items are judged again with other seeds (at ``temperature``, which should be above 0):
the share of items whose verdict flips between repeats and the spread of their scores
measure the judge's self-consistency; the statistics are those of the first repeat.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmark.aio import run_sync
from ragmark.analysis.review import LABEL_METRIC
from ragmark.case import Case
from ragmark.errors import ConfigError
from ragmark.judge_eval.items import Item
from ragmark.judge_eval.people import People, judge_with_people, people_report
from ragmark.judge_eval.scores import score_report
from ragmark.judges.checks import one_value
from ragmark.judges.guidance import Guidance, aligned
from ragmark.judges.prompt import JudgeCounts
from ragmark.judges.relevance import relevance_label
from ragmark.llm import LLMSettings, open_client
from ragmark.llm.accounting import llm_summary
from ragmark.metrics.names import catalogue, judge_metrics, verdict_at
from ragmark.passage_labels.tops import estimate as estimate_labels
from ragmark.running.judging import estimate as estimate_judges
from ragmark.running.judging import judge_metric
from ragmark.stats.agreement import evaluate, mcnemar
from ragmark.types import Sample, Score


def measured() -> tuple[str, ...]:
    """The judges judge-eval measures: every judge metric of the catalogue, and
    ``ragmark label``'s passage relevance label (a review CSV exported from a label file
    names it)."""
    return (*judge_metrics(), LABEL_METRIC)


def threshold_of(metric: str, given: float | None) -> float:
    """The score below which a verdict is *unsupported*: ``given`` (--threshold), else
    the metric's own (its catalogue entry's ``verdict_at``)."""
    return given if given is not None else verdict_at(metric)


def case_of(it: Item) -> Case:
    """The case a judge reads of a labelled item."""
    return Case(Sample(it.id, it.question, expected_answer=it.expected_answer), it.answer,
                tuple(it.contexts))


async def _judge_all(settings: LLMSettings, metric: str, items: Sequence[Item],
                     advance: Callable[[int], None],
                     guidance: Sequence[Guidance | None] | None = None
                     ) -> tuple[list[Score], dict[str, Any]]:
    """Each item judged through one client (``guidance``: each item's own, or none)."""
    guides = list(guidance) if guidance is not None else [None] * len(items)
    client = open_client(settings)
    counts = JudgeCounts()
    ok, why = await client.probe()
    if not ok:
        raise ConfigError(f"the judge's endpoint {settings.display_url} did not answer: {why}")

    async def one(it: Item, guidance: Guidance | None) -> Score:
        try:
            if metric == LABEL_METRIC:  # the passage's relevance to the question, YES/NO
                return await aligned(relevance_label(
                    client, it.question, "\n\n".join(it.contexts), counts=counts), guidance)
            return await judge_metric(client, metric, case_of(it), counts, guidance)
        finally:
            advance(1)

    try:
        pairs = zip(items, guides, strict=True)
        scores = list(await asyncio.gather(*(one(it, g) for it, g in pairs)))
    finally:
        await client.aclose()
    return scores, llm_summary(settings, client, counts)


@dataclass(frozen=True)
class Trial:
    """How a judge is measured: the judge ``metric``, the score ``threshold`` under
    which a verdict is "unsupported" (None: the metric's default), how many ``repeats``
    (seeds 0, 1, ...), the judge's ``temperature`` (None: the endpoint's), and the
    bootstrap's ``n_resamples`` and ``seed``."""

    metric: str = "faithfulness"
    threshold: float | None = None
    repeats: int = 1
    temperature: float | None = None
    n_resamples: int = 2000
    seed: int = 0
    align: bool = False
    """Also align the judge to the labels and measure the gain (:mod:`.align`)."""


def judge_eval(items: Sequence[Item], settings: LLMSettings, trial: Trial | None = None,
               advance: Callable[[int], None] = lambda n: None,
               people: People | None = None) -> dict[str, Any]:
    """The report of the module docstring, as a JSON-ready dict; with ``people`` (several
    people's labels of the items), their agreement and the judge's with them."""
    return _one(items, settings, trial or Trial(), advance, people)[0]


def judge_eval_aligned(items: Sequence[Item], settings: LLMSettings, trial: Trial,
                       advance: Callable[[int], None] = lambda n: None,
                       people: People | None = None) -> tuple[dict[str, Any], Guidance | None]:
    """:func:`judge_eval`'s report and, with ``trial.align``, the guidance chosen from
    every item (for ``--save-alignment``)."""
    out, _, guidance = _one(items, settings, trial, advance, people)
    return out, guidance


def compare_judges(items: Sequence[Item], judges: Sequence[LLMSettings],
                   trial: Trial | None = None,
                   advance: Callable[[int], None] = lambda n: None,
                   people: People | None = None) -> dict[str, Any]:
    """Several judges (models or endpoints) on the same items: each one's report, and
    for every pair, their agreement (Cohen's kappa with a bootstrap interval, on the
    items both judged) and McNemar's exact test of which one agrees with the labels
    more often."""
    t = trial or Trial()
    reports: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, list[bool | None]] = {}
    for s in judges:
        name = f"{s.model} at {s.display_url}" if len({j.model for j in judges}) < len(
            judges) else s.model
        reports[name], verdicts[name], _ = _one(items, s, t, advance, people)
    pairs = []
    names = list(reports)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = [k for k in range(len(items))
                    if verdicts[a][k] is not None and verdicts[b][k] is not None]
            entry: dict[str, Any] = {"first": a, "second": b, "items": len(both)}
            if len(both) >= 2:
                va = [bool(verdicts[a][k]) for k in both]
                vb = [bool(verdicts[b][k]) for k in both]
                entry["kappa"] = evaluate(va, vb, n_resamples=t.n_resamples,
                                          seed=t.seed)["kappa"]
                entry["raw_agreement"] = sum(x == y for x, y in zip(va, vb, strict=True)) / len(
                    both)
                truth = [items[k].unsupported for k in both]
                entry["paired"] = mcnemar([x == t for x, t in zip(va, truth, strict=True)],
                                          [y == t for y, t in zip(vb, truth, strict=True)])
            pairs.append(entry)
    return {"metric": t.metric, "items": len(items), "judges": reports, "pairs": pairs}


def repeat_settings(settings: LLMSettings, trial: Trial, repeat: int) -> LLMSettings:
    """The judge's settings in repeat ``repeat`` (0, 1, ...): the endpoint's seed plus
    ``repeat``, at the trial's temperature when it names one."""
    return settings.repeat(repeat, trial.temperature)


def check_trial(items: Sequence[Item], trial: Trial) -> None:
    """A ConfigError when the trial's metric is not one judge-eval measures, or needs an
    expected answer an item lacks."""
    metric = trial.metric
    if metric not in measured():
        raise ConfigError(f"--metric must be one of {', '.join(measured())}, got {metric!r}")
    if metric in catalogue() and "expected_answer" in catalogue()[metric].needs and any(
            it.expected_answer is None for it in items):
        raise ConfigError(f"{metric} needs an expected_answer for every item")


def estimate(items: Sequence[Item], settings: LLMSettings, trial: Trial) -> dict[str, Any]:
    """A dry run of one judge over ``items``: the calls not in the cache yet, over every
    repeat (each its own seed, so its own calls), the cached ones, prompt tokens and
    cost, as the other commands' dry runs count them. Nothing is called."""
    check_trial(items, trial)
    total: dict[str, Any] = {}
    for r in range(trial.repeats):
        s = repeat_settings(settings, trial, r)
        if trial.metric == LABEL_METRIC:
            got = estimate_labels([(it.question, "\n\n".join(it.contexts)) for it in items], s)
        else:
            got = estimate_judges([case_of(it) for it in items], [trial.metric], s)
        total = got if not total else {
            k: (None if total.get(k) is None or v is None else total[k] + v)
            if k in _ADDED else v for k, v in got.items()}
    return {**total, "items": len(items), "repeats": trial.repeats}


_ADDED = frozenset({"calls", "at_most", "cached", "estimated_prompt_tokens",
                    "at_most_prompt_tokens", "estimated_cost", "at_most_cost", "cut_to_fit"})
"""The counts of a dry run that the repeats add up (a cost None when one is unknown)."""


def _one(items: Sequence[Item], settings: LLMSettings, trial: Trial,
         advance: Callable[[int], None], people: People | None = None
         ) -> tuple[dict[str, Any], list[bool | None], Guidance | None]:
    """One judge's report, and its verdict per item (True = unsupported; None = no
    verdict) from the first repeat."""
    metric, threshold, repeats, temperature = (trial.metric, trial.threshold, trial.repeats,
                                               trial.temperature)
    n_resamples, seed = trial.n_resamples, trial.seed
    check_trial(items, trial)
    cut = threshold_of(metric, threshold)
    runs: list[list[Score]] = []
    llm: list[dict[str, Any]] = []
    for r in range(repeats):
        s = repeat_settings(settings, trial, r)
        scores, acct = run_sync(_judge_all(s, metric, items, advance))
        runs.append(scores)
        llm.append(acct)
    first = runs[0]
    kept = [i for i, s in enumerate(first) if s.ok]
    failures = Counter(s.reason or "unknown" for s in first if not s.ok)
    truth = [items[i].unsupported for i in kept]
    # the verdict the judge wrote, against the threshold; the scores' AUC reads the
    # probability-weighted values
    pred = [float(first[i].hard) < cut for i in kept]  # type: ignore[arg-type]
    out: dict[str, Any] = {
        "metric": metric, "threshold": cut, "items": len(items),
        "judged": len(kept), "labels": {"unsupported": sum(it.unsupported for it in items),
                                        "supported": sum(not it.unsupported for it in items)},
        "failure_rate": (len(items) - len(kept)) / len(items) if items else None,
        "failures": dict(failures.most_common()),
        "model": settings.model, "endpoint": settings.display_url,
        "temperature": temperature if temperature is not None else settings.temperature,
    }
    out["rule"] = (f"unsupported when {metric} < {cut:g} "
                   + ("(--threshold)" if threshold is not None else
                      f"(the default for {metric}; --threshold sets another)"))

    warnings = [w for w in (
        one_value(metric, [float(first[i].value) for i in kept]),  # type: ignore[arg-type]
        _one_verdict(pred)) if w]
    if warnings:
        out["warnings"] = warnings
    if len(kept) >= 2:
        out.update(evaluate(truth, pred, n_resamples=n_resamples, seed=seed))
        out["scores"] = score_report(truth, [float(first[i].value) for i in kept],  # type: ignore[arg-type]
                                     n_resamples=n_resamples, seed=seed)
    else:
        out["reason"] = f"{len(kept)} item(s) got a verdict; the statistics need at least 2"
    if repeats > 1:
        out["consistency"] = consistency(runs, cut)
    out["llm"] = llm[0] if repeats == 1 else {"repeats": llm}
    verdict: list[bool | None] = [float(sc.hard) < cut if sc.ok else None  # type: ignore[arg-type]
                                  for sc in first]
    out["per_item"] = per_item(items, first, verdict)
    if people is not None:
        out["people"] = people_report(people, n_resamples, seed)
        out["judge_with_people"] = judge_with_people(
            people, {it.id: v for it, v in zip(items, verdict, strict=True)}, n_resamples,
            seed)
    guidance = None
    if trial.align:
        from ragmark.judge_eval.align import align

        s0 = repeat_settings(settings, trial, 0)
        fitted: dict[str, int] = {}

        def judge(some: Sequence[Item], g: Sequence[Guidance]) -> list[Score]:
            scores, llm_of = run_sync(_judge_all(s0, metric, some, advance, g))
            for key in ("alignment_cut_to_fit", "alignment_examples_shortened",
                        "alignment_examples_dropped"):
                fitted[key] = fitted.get(key, 0) + int(llm_of.get(key, 0))
            return scores

        out["alignment"], guidance = align(items, metric, cut, first, judge, seed=seed,
                                           n_resamples=n_resamples)
        out["alignment"]["hash"] = guidance.hash
        if fitted.get("alignment_cut_to_fit"):
            out["alignment"]["fitted"] = fitted
    return out, verdict, guidance


def _one_verdict(pred: Sequence[bool]) -> str | None:
    """A warning when the judge gave every item (two or more) one verdict: its kappa is
    0 by construction, however few the items."""
    if len(pred) < 2 or len(set(pred)) != 1:
        return None
    which = "unsupported" if pred[0] else "supported"
    return (f"the judge called all {len(pred)} items {which}: its agreement with the labels "
            "(kappa) is 0 by construction; a different --threshold, prompt or model may "
            "separate them (see the score's ROC AUC)")


def per_item(items: Sequence[Item], scores: Sequence[Score], verdict: Sequence[bool | None]
             ) -> list[dict[str, Any]]:
    """Each item's value and label as the report writes them, so a user can check the
    statistics or set the judge against another tool's values on the same items."""
    return [{"id": it.id, "label": "unsupported" if it.unsupported else "supported",
             "value": sc.value if sc.ok else None, "unsupported_by_judge": v,
             **({"hard_value": sc.hard} if sc.ok and sc.hard != sc.value else {}),
             **({} if sc.ok else {"reason": sc.reason or "no value"})}
            for it, sc, v in zip(items, scores, verdict, strict=True)]


def consistency(runs: Sequence[Sequence[Score]], cut: float) -> dict[str, Any]:
    """Over the items with a verdict in every repeat: the share whose verdict flips
    between repeats, and the mean spread (max - min) and standard deviation of their
    scores."""
    both = [i for i in range(len(runs[0])) if all(r[i].ok for r in runs)]
    if not both:
        return {"repeats": len(runs), "items": 0, "reason": "no item got a verdict in "
                "every repeat"}
    scores = np.array([[float(r[i].value) for r in runs] for i in both])  # type: ignore[arg-type]
    verdicts = scores < cut
    flips = verdicts.any(axis=1) & ~verdicts.all(axis=1)
    return {"repeats": len(runs), "items": len(both), "flip_rate": float(flips.mean()),
            "score_spread": float((scores.max(axis=1) - scores.min(axis=1)).mean()),
            "score_std": float(scores.std(axis=1, ddof=1).mean())}

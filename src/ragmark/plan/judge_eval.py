"""The plan of ``ragmark judge-eval``: measure one judge, or several side by side,
against people's labels. :func:`plan_judge_eval` reads the items and resolves the
judges' endpoint once; :func:`execute_judge_eval` judges and writes the report,
:func:`estimate_judge_eval` counts the calls it would make. Nothing here prints."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.annotate.store import labels_path
from ragmark.config import load_configs
from ragmark.config_judges import remember
from ragmark.errors import ConfigError, DataError
from ragmark.judge_eval import read_items
from ragmark.judge_eval.measure import Trial, compare_judges, estimate, judge_eval_aligned
from ragmark.judge_eval.people import consensus
from ragmark.judge_eval.preferences import agreement, people_agreement
from ragmark.judges.pairwise import Side, position_bias
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.plan.endpoint import resolve_llm
from ragmark.plan.judge_qrels import plan_against_qrels
from ragmark.plan.paths import check_output
from ragmark.progress import Progress
from ragmark.report.json_writer import write_json
from ragmark.results import read_results
from ragmark.running.head_to_head import Pair, judge_pairs

if TYPE_CHECKING:
    from ragmark.judge_eval.items import Item
    from ragmark.judge_eval.measure import Trial
    from ragmark.judge_eval.people import People
    from ragmark.llm import LLMSettings
    from ragmark.plan.judge_qrels import QrelsPlan
    from ragmark.running.head_to_head import Pair


@dataclass(frozen=True, kw_only=True)
class JudgeEvalRequest:
    """``ragmark judge-eval``'s flags, by their names."""

    file: str | Path
    metric: str | None = None
    threshold: float | None = None
    label_map: str | None = None
    repeats: int = 1
    temperature: float | None = None
    resamples: int = 2000
    seed: int = 0
    judge_models: Sequence[str] = ()
    output: str | Path | None = None
    dry_run: bool = False
    align: bool = False
    save_alignment: str | Path | None = None
    store: str | Path | None = None
    """The label store ``store:QUEUE`` reads (None: beside ``history``)."""
    history: str | Path | None = None
    llm_flags: Mapping[str, Any] = field(default_factory=dict)
    """The ``--llm-*`` flags, over ``RAGMARK_LLM_*``."""
    against_qrels: bool = False
    """Measure the context judges against the qrels of a run's results file
    (:mod:`ragmark.plan.judge_qrels`)."""
    config: str | Path | None = None
    """A config whose judges of their own (``[judges.NAME]`` criteria) and ``[llm]``
    table the judge-eval uses."""


@dataclass(frozen=True)
class JudgeEvalPlan:
    """What a judge-eval does: the labelled ``items`` of ``file``, each judge's endpoint
    (``judges``: one, or one per ``--judge-model``), how they are measured (``trial``)
    and where the report goes (``output``, checked)."""

    file: str
    items: list[Item]
    judges: tuple[LLMSettings, ...]
    trial: Trial
    output: Path | None
    dry_run: bool = False
    people: People | None = None
    """Several people's labels of the same items (the items hold the majority's)."""
    save_alignment: Path | None = None

    @property
    def calls(self) -> int:
        """The judgements to make: items x repeats x judges, and each item once more with
        its fold's guidance when aligning."""
        return len(self.items) * (self.trial.repeats + self.trial.align) * len(self.judges)


def plan_judge_eval(req: JudgeEvalRequest) -> JudgeEvalPlan | PreferencePlan | QrelsPlan:
    """The plan of ``req``: the output path checked, the items read (a bad one is a
    DataError naming its line), the endpoint resolved (the model need not be set when
    the judges are named)."""
    if req.against_qrels:
        return _qrels_plan(req)
    _criteria(req)  # a criterion of the config, or of the run a queue was drawn from
    task = _task_of(req)
    if task.startswith("pairwise:"):
        return _preference_plan(req, task)
    if req.save_alignment is not None and not req.align:
        raise ConfigError("--save-alignment saves what --align chose: give --align too")
    if req.save_alignment is not None and len(req.judge_models) > 1:
        raise ConfigError("--save-alignment saves one judge's alignment: give one "
                          "--judge-model")
    for path, flag in ((req.output, "--output"), (req.save_alignment, "--save-alignment")):
        if path is not None and not req.dry_run:  # a dry run writes nothing
            check_output(path, flag)
    read, named = read_items(str(req.file), req.metric, req.label_map,
                             labels_path(req.history, req.store))
    items, people = consensus(read)
    models = tuple(req.judge_models)
    settings = _judge(req)
    judges = tuple(settings.model_copy(update={"model": m}) for m in models) or (settings,)
    trial = Trial(req.metric or named or "faithfulness", req.threshold, req.repeats,
                  req.temperature, req.resamples, req.seed, req.align)
    return JudgeEvalPlan(str(req.file), list(items), judges, trial,
                         None if req.output is None else Path(req.output), req.dry_run,
                         people, None if req.save_alignment is None else Path(
                             req.save_alignment))


def _refuse_label_flags(req: JudgeEvalRequest, what: str) -> None:
    """A ConfigError naming the first flag given that only measuring against people's
    yes/no labels takes."""
    for flag, given in (("--align", req.align), ("--label-map", req.label_map),
                        ("--threshold", req.threshold is not None),
                        ("--repeats", req.repeats != 1),
                        ("--judge-model", len(req.judge_models) > 1)):
        if given:
            raise ConfigError(f"{flag} does not apply to {what}")


def _qrels_plan(req: JudgeEvalRequest) -> QrelsPlan:
    _refuse_label_flags(req, "--against-qrels")
    if req.output is not None and not req.dry_run:  # a dry run writes nothing
        check_output(req.output, "--output")
    plan = plan_against_qrels(req.file, req.metric, _judge(req), output=req.output,
                              resamples=req.resamples, seed=req.seed)
    return replace(plan, dry_run=req.dry_run)


def _task_of(req: JudgeEvalRequest) -> str:
    """The metric judged: ``--metric``, else a queue's task (``store:QUEUE``)."""
    from ragmark.annotate.store import get_queue, queue_of

    queue = queue_of(req.file)
    task = get_queue(labels_path(req.history, req.store), queue).task if queue is not None \
        else None
    if req.metric and task and req.metric != task:
        raise ConfigError(f"--metric {req.metric}: queue {queue!r} labels {task}")
    return req.metric or task or ""


@dataclass(frozen=True)
class PreferencePlan:
    """``judge-eval --metric pairwise:CRITERION``: people's preferences between two
    answers (``people``: their majority per pair, and their agreement), the pairwise
    judge, asked in both orders."""

    file: str
    criterion: str
    people: Any
    pairs: list[Pair]
    judge: LLMSettings
    resamples: int
    seed: int
    output: Path | None
    dry_run: bool = False

    @property
    def calls(self) -> int:
        return 2 * len(self.pairs)


def _preference_plan(req: JudgeEvalRequest, task: str) -> PreferencePlan:
    from ragmark.annotate.store import label_rows, queue_of
    from ragmark.judge_eval.preferences import check_task, consensus, from_rows, read_preferences

    criterion = check_task(task)
    _refuse_label_flags(req, f"preferences ({task})")
    if req.output is not None and not req.dry_run:
        check_output(req.output, "--output")
    queue = queue_of(req.file)
    prefs = (from_rows(label_rows(labels_path(req.history, req.store), queue))
             if queue is not None else read_preferences(req.file))
    people = consensus(prefs)
    if criterion == "correctness" and not all(p.expected_answer for p in people.pairs):
        raise ConfigError("pairwise:correctness compares the answers with the reference "
                          "answer: give every pair its expected_answer")
    pairs = [Pair(p.id, p.question, Side(p.answer_a, p.contexts_a),
                  Side(p.answer_b, p.contexts_b), p.expected_answer) for p in people.pairs]
    return PreferencePlan(str(req.file), criterion, people, pairs, _judge(req), req.resamples,
                          req.seed, None if req.output is None else Path(req.output),
                          req.dry_run)


def _criteria(req: JudgeEvalRequest) -> None:
    """The judges of their own the request can name: its config's, and those the results
    file a queue (``store:QUEUE``) was drawn from records."""
    from ragmark.annotate.store import get_queue, queue_of

    if req.config is not None:
        load_configs(str(req.config))
    queue = queue_of(req.file)
    source = None if queue is None else Path(get_queue(
        labels_path(req.history, req.store), queue).source)
    if source is not None and source.suffix == ".json" and source.is_file():
        with contextlib.suppress(DataError):  # a set or a log records no criterion
            remember(read_results(source)[1], str(source))


def _judge(req: JudgeEvalRequest) -> LLMSettings:
    models = tuple(req.judge_models)
    configs = [] if req.config is None else load_configs(str(req.config))
    settings, _ = resolve_llm(configs, req.llm_flags, model=models[0] if models else None)
    if settings is None:
        raise ConfigError("judge-eval needs a judge: give --llm-base-url and --llm-model, "
                          f"or {SET_ENDPOINT}")
    return settings


def execute_preferences(plan: PreferencePlan, progress: Progress) -> dict[str, Any]:
    """Judge every pair in both orders; the report of the judge's agreement with the
    people's preferences (written to the plan's output)."""
    with progress.task(f"judging {len(plan.pairs):,} pairs x 2 orders", plan.calls) as adv:
        verdicts, llm = judge_pairs(plan.judge, (plan.criterion,), plan.pairs, 2, plan.seed,
                                    adv)
    vs = verdicts[plan.criterion]
    people = [p.preferred for p in plan.people.pairs]
    judged = [v.verdict for v in vs]
    report: dict[str, Any] = {
        "file": plan.file, "metric": f"pairwise:{plan.criterion}",
        "model": plan.judge.model, "endpoint": plan.judge.base_url,
        "pairs": len(plan.pairs), "split": plan.people.split,
        "people": dict(Counter(people)), "judge": dict(Counter(
            "none" if j is None else j for j in judged)),
        **agreement(people, judged, n_resamples=plan.resamples, seed=plan.seed),
        "position_bias": position_bias(vs),
        "failures": dict(Counter(str(v.failure) for v in vs if v.verdict is None)),
        "llm": llm}
    among = people_agreement(plan.people, plan.resamples, plan.seed)
    if among is not None:
        report["people_agreement"] = among
    if plan.output is not None:
        write_json(report, plan.output)
    return report


def estimate_judge_eval(plan: JudgeEvalPlan) -> dict[str, dict[str, Any]]:
    """A dry run: each judge's calls (over the repeats), tokens and cost, by its model;
    nothing is called or written."""
    return {s.model: estimate(plan.items, s, plan.trial) for s in plan.judges}


def execute_judge_eval(plan: JudgeEvalPlan, progress: Progress) -> dict[str, Any]:
    """Judge every item (per judge and repeat) and return the report; written to the
    plan's output when it has one."""
    from ragmark.report.json_writer import write_text

    n = len(plan.judges)
    with progress.task(f"judging {len(plan.items):,} items x {plan.trial.repeats} x {n} "
                       "judges" + (", then each aligned" if plan.trial.align else ""),
                       plan.calls) as advance:
        if n == 1:
            report, guidance = judge_eval_aligned(plan.items, plan.judges[0], plan.trial,
                                                  advance, plan.people)
            if guidance is not None and plan.save_alignment is not None:
                if "reason" in report["alignment"]:  # a judge that could not use it
                    report["alignment"]["not_saved"] = (
                        f"{plan.save_alignment} was not written: the alignment could not "
                        "be measured")
                else:
                    write_text(guidance.to_toml(), plan.save_alignment)
                    report["alignment"]["saved"] = str(plan.save_alignment)
        else:
            report = compare_judges(plan.items, list(plan.judges), plan.trial, advance,
                                    plan.people)
    report["file"] = plan.file
    if plan.output is not None:
        write_json(report, plan.output)
    return report

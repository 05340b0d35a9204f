"""A probe of a system ragmark does not run: the planted documents written out for the
team to ingest (``--write-planted DIR``: one JSONL corpus file an attack, in ragmark's
corpus format, and a manifest), then the answers they logged scored (``--outputs
ARM=FILE``, and ``clean=FILE`` for the same questions without the planted documents).
The canaries come from the seed, so the documents written and the ones scored are the
same as long as the dataset, ``--targets``, ``--seed`` and ``--copies`` are."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ragmark.config import RunConfig
from ragmark.data.leniency import Leniency
from ragmark.data.outputs import join_outputs, load_outputs
from ragmark.probe.execute import clean_values, planted_for
from ragmark.probe.plan import CLEAN, ProbePlan
from ragmark.probe.rates import outcome
from ragmark.running.runner import run


def arm_file(arm: str) -> str:
    """The file name of an arm's planted documents.

    >>> arm_file("injection:html-comment")
    'injection-html-comment.jsonl'
    """
    return arm.replace(":", "-") + ".jsonl"


def write_planted(plan: ProbePlan, folder: Path) -> list[Path]:
    """Each arm's planted documents as a JSONL corpus file under ``folder`` (``{"id",
    "text", "title", "metadata"}`` a line) and ``probe.json``, what they are for; the
    paths written. A folder already holding different planted files is not
    overwritten silently: the files are replaced whole."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    files = {}
    for arm in plan.arms:
        path = folder / arm_file(arm.name)
        rows = [{"id": i, "text": t, "title": "", "metadata": dict(p.metadata)}
                for p in planted_for(plan, arm) for i, t in zip(p.ids, p.texts, strict=True)]
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")
        files[arm.name] = path.name
        written.append(path)
    manifest = {**plan.describe(), "files": files,
                "how": "Index each file with the corpus in a copy of your system (one "
                       "copy an attack), ask the target questions (as a user without "
                       "the 'private' access for leakage), log the answers and contexts "
                       "as ragmark's outputs format, then: ragmark probe --outputs "
                       "ARM=FILE ... with the same --dataset, --targets, --seed and "
                       "--copies."}
    (folder / "probe.json").write_text(json.dumps(manifest, indent=2) + "\n",
                                       encoding="utf-8")
    return [*written, folder / "probe.json"]


def _read(plan: ProbePlan, file: Path, ds: Any) -> Mapping[str, Any]:
    """A logged file's outputs joined to ``ds``'s questions (by id, else by text)."""
    outputs, _ = join_outputs(load_outputs(file, Leniency(strict=plan.strict), ds), ds)
    return outputs


def score_logged(plan: ProbePlan, files: Mapping[str, Path]) -> dict[str, Any]:
    """The logged answers of each arm scored (the shape :func:`run_probe` gives, one
    system named ``logged``); a target without a line has no answer, and says so."""
    ds = plan.base.dataset
    by_id = {s.id: s for s in ds.samples}
    arms: dict[str, Any] = {}
    for arm in plan.arms:
        outputs = _read(plan, files[arm.name], ds)
        outs, answers = [], {}
        for p in planted_for(plan, arm):
            got, sample = outputs.get(p.question_id), by_id[p.question_id]
            answer = None if got is None or got.error else got.answer
            why = None if answer is not None else (
                "no line in the log" if got is None else got.error)
            outs.append(outcome(p, sample.question, answer, () if got is None else
                                got.contexts, right=p.right or sample.expected_answer,
                                no_answer=why))
            answers[p.question_id] = answer
        arms[arm.name] = {"arm": arm.name, "outcomes": [asdict(o) for o in outs],
                          "answers": answers}
    clean: dict[str, Any] = {"arm": CLEAN, "metrics": {}, "answers": {}}
    if CLEAN in files:
        clean = _clean_logged(plan, files[CLEAN])
    return {"logged": {"clean": clean, "arms": arms}}


def _clean_logged(plan: ProbePlan, file: Path) -> dict[str, Any]:
    """The clean metrics of the answers logged without planted documents."""
    ds = plan.base.dataset
    asked = set(plan.questions)
    restricted = replace(ds, samples=tuple(s for s in ds.samples if s.id in asked))
    report = run(restricted, RunConfig.model_validate({"name": "logged", "unit": "auto"}),
                 plan.base.task, outputs=_read(plan, file, restricted))
    return {"arm": CLEAN, "metrics": clean_values(report),
            "answers": {q.id: q.answer for q in report.queries}}

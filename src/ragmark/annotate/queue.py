"""What a queue offers: its items drawn from a results file (a stratified sample), who
labels what (``overlap``), and the progress. Pure: items and labels in, values out.

An item is the answer (with its question, contexts and expected answer) whose judge
verdict people give, or, from a ``ragmark label`` file, a passage whose relevance they
give. Every item needs one person's label, the first ``overlap`` two people's (for the
agreement between people); a person is offered the items they have not labelled or
skipped whose labels are still fewer than they need, in queue order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmark.analysis.inspection import results_from
from ragmark.analysis.review import ReviewRow, Sampled, ask, sample_for_review
from ragmark.annotate.store import Label
from ragmark.data import load_dataset
from ragmark.data.files import read_json
from ragmark.data.outputs import load_outputs
from ragmark.errors import ConfigError, DataError
from ragmark.metrics.names import scale_of, verdict_at
from ragmark.results import kind_of_results, read_results
from ragmark.stats.reliability import krippendorff_alpha

CHOICES = ({"key": "1", "value": 1.0, "text": "Yes"}, {"key": "2", "value": 0.0, "text": "No"})
"""The labels a person gives a yes/no task, with the number key that gives each."""
SCALE = tuple({"key": str(k), "value": (k - 1) / 4, "text": text} for k, text in enumerate(
    ("not at all", "a little", "half", "mostly", "fully"), start=1))
"""The labels of a task on a scale: keys 1 to 5, values 0, 0.25, ... 1 (the judge's
scale)."""
CLAIM_ASK = "is this claim of the answer supported by the contexts?"


PREFERENCE = ({"key": "1", "side": "first", "value": 1.0, "text": "the first is better"},
              {"key": "2", "side": "second", "value": 0.0, "text": "the second is better"},
              {"key": "3", "value": 0.5, "text": "a tie"})
"""The labels of a preference between two answers (a task ``pairwise:CRITERION``): the
key says which position is better, the label kept is A's score (1 A, 0 B, 0.5 a tie),
so the side each answer is shown on (drawn per item) does not change what is kept."""
PAIRWISE = "pairwise:"
PREFERRED_VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}
"""A preference as the label store keeps it (A's score: a win 1, a tie half)."""


def is_pairwise(task: str) -> bool:
    return task.startswith(PAIRWISE)


def choices_of(task: str) -> tuple[dict[str, Any], ...]:
    if is_pairwise(task):
        return PREFERENCE
    return SCALE if _scaled(task) else CHOICES


def level_of(task: str) -> str:
    """Krippendorff's level of the task's labels: interval on a scale, else nominal."""
    return "interval" if _scaled(task) else "nominal"
def _scaled(task: str) -> bool:
    """Whether people give ``task`` on a five-point scale (its catalogue entry says)."""
    return not is_pairwise(task) and bool(scale_of(task))


@dataclass(frozen=True)
class Drawn:
    """The items of a new queue, the task, and what was left out and why."""

    items: list[dict[str, Any]]
    task: str
    eligible: int
    left_out: dict[str, int]
    strata: dict[str, int]


def item_of(row: ReviewRow) -> dict[str, Any]:
    return {"id": row.id, "question": row.question, "answer": row.answer,
            "contexts": list(row.contexts), "expected_answer": row.expected_answer,
            "metric": row.metric, "judge": row.judge,
            **({"claim": row.claim} if row.claim else {})}


def verdict(metric: str, judge: float | None) -> str:
    if judge is None:
        return "not judged"
    if is_pairwise(metric):
        return {1.0: "judge A", 0.0: "judge B"}.get(judge, "judge tie")

    return "judge yes" if judge >= verdict_at(metric) else "judge no"


def draw(source: str | Path, task: str | None, n: int | None, seed: int,
         config: str | None = None, per_claim: bool = False) -> Drawn:
    """The items of ``source`` (a results file of ``run --include-details`` or of
    ``label``) for ``task`` (a judge metric; None: the file's first): every one, or
    ``n`` drawn stratified by the judge's verdict (each stratum in proportion, at least
    one each when ``n`` allows), kept in file order. ``per_claim``: the claims the
    faithfulness judge made of each answer, each an item with its verdict."""
    if task is not None and is_pairwise(task):  # annotate/pairs.py draws those
        raise ConfigError(f"--task {task}: a preference task is drawn by draw_pairs")
    every: Sampled
    if is_results(source):
        every = sample_for_review(source, 10**9, 0, task, config, "--task")  # all, in order
    elif per_claim:
        raise ConfigError(f"--per-claim labels the claims a judge made: {source} is not a "
                          "results file of `ragmark run --judge-metrics faithfulness`")
    elif is_outputs(source):  # logged outputs: answers no judge has seen yet
        every = logged_rows(source, task or "faithfulness")
    else:  # an evaluation set: its reference answers against its own contexts
        every = reference_rows(source, task or "faithfulness")
    rows = claims_of(source, every.rows, config) if per_claim else every.rows
    if n is not None and n < len(rows):
        rows = _stratified(rows, n, seed)
    strata = Counter(verdict(r.metric, r.judge) for r in rows)
    items = [item_of(r) for r in rows]
    if not per_claim and every.metric == "faithfulness" and is_results(source):
        spans = judged_claims(source, config)
        for it in items:
            if spans.get(str(it["id"])):
                it["claims"] = spans[str(it["id"])]
    return Drawn(items, every.metric, every.eligible, dict(every.left_out),
                 dict(sorted(strata.items())))


def judged_claims(source: str | Path, config: str | None) -> dict[str, list[dict[str, Any]]]:
    """Per question, the claims the faithfulness judge made of its answer and whether
    it found each supported (shown, and marked in the answer, once a person has
    labelled the item)."""
    _, data = read_results(source)
    out = {}
    for q in results_from(str(source), data, config).queries:
        score = q.metrics.get("faithfulness")
        details = {} if score is None else score.details
        unsupported = set(details.get("unsupported") or ())
        out[q.id] = [{"text": c, "supported": c not in unsupported}
                     for c in details.get("claims") or ()]
    return out


def is_results(source: str | Path) -> bool:
    """Whether ``source`` is a results file of ragmark (else a file of logged outputs)."""

    if Path(source).suffix.lower() != ".json":
        return False
    data = read_json(Path(source))
    try:
        kind_of_results(data, str(source))
    except DataError:
        return False
    return True


def logged_rows(source: str | Path, task: str) -> Any:
    """The answered questions of a file of logged outputs (as ``run --outputs`` reads
    it), for ``task``; without a judge's value (judge None)."""

    oset = load_outputs(source)
    rows, left = [], Counter[str]()
    for s in oset.dataset.samples:
        out = oset.outputs.get(s.id)
        if out is None or out.answer is None or not out.answer.strip():
            left["no answer"] += 1
            continue
        rows.append(ReviewRow(s.id, s.question, out.answer, tuple(
            c.text for c in out.contexts), task, None, s.expected_answer or ""))
    if not rows:
        raise ConfigError(f"{source}: no logged output has an answer to label")
    return Sampled(rows, task, len(rows), dict(left), f"logged outputs of {source}")


def is_outputs(source: str | Path) -> bool:
    """Whether ``source`` reads as logged outputs (its rows have answers), rather than
    as an evaluation set."""

    try:
        load_outputs(source)
    except (DataError, ConfigError):
        return False
    return True


def reference_rows(source: str | Path, task: str) -> Any:
    """An evaluation set's questions with a reference answer (``ragmark testset``'s, a
    team's own): the reference answer as the answer, its ground-truth passages (or
    documents) as the contexts, no judge: people check the set before it measures
    anything."""

    try:
        ds = load_dataset(source)
    except (DataError, ConfigError) as e:
        raise ConfigError(f"{source}: neither a results file, logged outputs nor an "
                          f"evaluation set ({e})") from None
    docs = ds.corpus.by_id()
    rows, left = [], Counter[str]()
    for s in ds.samples:
        contexts = list(s.truth.passages) or [docs[d].text for d, g in s.truth.doc_grades.items()
                                              if g > 0 and d in docs]
        why = ("no reference answer" if not (s.expected_answer or "").strip() else
               "no ground-truth context" if not contexts else None)
        if why is not None:
            left[why] += 1
            continue
        rows.append(ReviewRow(s.id, s.question, str(s.expected_answer), tuple(contexts),
                              task, None, str(s.expected_answer)))
    if not rows:
        raise ConfigError(f"{source}: no question has both a reference answer and a "
                          f"ground-truth context to label ({dict(left)})")
    return Sampled(rows, task, len(rows), dict(left), f"evaluation set {source}")


def claims_of(source: str | Path, rows: Sequence[ReviewRow], config: str | None
              ) -> list[ReviewRow]:
    """Each answer's claims as the faithfulness judge wrote them, one row each (id
    ``QUESTION#N``, the judge 1 where it found the claim supported, else 0)."""
    if rows and rows[0].metric != "faithfulness":
        raise ConfigError(f"--per-claim labels the claims of the faithfulness judge, not "
                          f"of {rows[0].metric}: give --task faithfulness")
    _, data = read_results(source)
    by_id = {q.id: q for q in results_from(str(source), data, config).queries}
    out = []
    for r in rows:
        details = by_id[r.id].metrics["faithfulness"].details
        unsupported = set(details.get("unsupported") or ())
        out += [ReviewRow(f"{r.id}#{k}", r.question, r.answer, r.contexts, r.metric,
                          0.0 if c in unsupported else 1.0, r.expected_answer, c)
                for k, c in enumerate(details.get("claims") or (), start=1)]
    if not out:
        raise ConfigError(f"{source}: the faithfulness judge recorded no claims (judge "
                          "with --judge-metrics faithfulness and --include-details)")
    return out


def _stratified(rows: Sequence[ReviewRow], n: int, seed: int) -> list[ReviewRow]:
    picked = stratified([verdict(r.metric, r.judge) for r in rows], n, seed)
    return [rows[i] for i in picked]


def stratified(strata: Sequence[str], n: int, seed: int) -> list[int]:
    """``n`` of the items (their indices, in order) drawn from the ``strata`` each is
    in, each stratum in proportion and at least one each when ``n`` allows."""
    if n < 1:
        raise ConfigError(f"--sample must be at least 1, got {n}")
    groups: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(strata):
        groups[g].append(i)
    names = sorted(groups)
    exact = {g: n * len(groups[g]) / len(strata) for g in names}
    take = {g: min(len(groups[g]), max(int(exact[g]), 1 if n >= len(names) else 0))
            for g in names}
    for g in sorted(names, key=lambda g: exact[g] - int(exact[g]), reverse=True):
        if sum(take.values()) >= n:
            break
        if take[g] < len(groups[g]):
            take[g] += 1
    while sum(take.values()) > n:  # the minimum of one each overshot: trim the largest
        take[max(names, key=lambda g: take[g])] -= 1
    rng = np.random.default_rng(seed)
    return sorted(i for g in names for i in
                  rng.choice(groups[g], size=take[g], replace=False).tolist())


def ask_of(task: str, per_claim: bool = False) -> str:
    if per_claim:
        return CLAIM_ASK
    if is_pairwise(task):
        from ragmark.judges.pairwise import CRITERIA

        return f"which answer is better {CRITERIA[task[len(PAIRWISE):]][0]}?"

    return (scale_of(task) if _scaled(task) else "") or ask(task)


@dataclass(frozen=True)
class View:
    """What one person sees of a queue: the item ids they may open, in order (those
    they labelled or skipped, and those still needing a label), their own labels, the
    next item for them (None: done), and the progress."""

    order: list[str]
    mine: dict[str, Label]
    next: str | None
    total: int
    labelled: int

    def to_json(self) -> dict[str, Any]:
        return {"order": self.order, "next": self.next, "total": self.total,
                "labelled": self.labelled,
                "mine": {k: {"value": v.value, "note": v.note} for k, v in self.mine.items()},
                "done": sum(1 for v in self.mine.values() if v.value is not None)}


def view(items: Sequence[Mapping[str, Any]], labels: Sequence[Label], annotator: str,
         overlap: int) -> View:
    """``annotator``'s view of a queue whose first ``overlap`` items need two people."""
    given: dict[str, set[str]] = defaultdict(set)
    for lab in labels:
        if lab.value is not None:
            given[lab.item].add(lab.annotator)
    mine = {lab.item: lab for lab in labels if lab.annotator == annotator}
    order, nxt = [], None
    for pos, it in enumerate(items):
        item_id = str(it["id"])
        need = 2 if pos < overlap else 1
        others = len(given[item_id] - {annotator})
        if item_id in mine or others < need:
            order.append(item_id)
            if nxt is None and item_id not in mine:
                nxt = item_id
    return View(order, mine, nxt, len(items), sum(1 for it in items if given[str(it["id"])]))


def status(items: Sequence[Mapping[str, Any]], labels: Sequence[Label],
           n_resamples: int = 2000, seed: int = 0, task: str = "") -> dict[str, Any]:
    """Counts of a queue: items, items with a label, labels per annotator and per label
    value, skips; and the people's agreement (Krippendorff's alpha, nominal, with its
    interval) over the items two or more people labelled, when there are some."""
    given = [lab for lab in labels if lab.value is not None]
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for lab in labels:
        per[lab.annotator]["skipped" if lab.value is None else _word(lab.value, task)] += 1
    out: dict[str, Any] = {
        "items": len(items), "labelled": len({lab.item for lab in given}),
        "annotators": {a: dict(sorted(c.items())) for a, c in sorted(per.items())}}
    by_item: dict[str, dict[str, float]] = defaultdict(dict)
    for lab in given:
        by_item[lab.item][lab.annotator] = float(lab.value)  # type: ignore[arg-type]
    names = sorted({lab.annotator for lab in given})
    units = [[by.get(a) for a in names] for by in by_item.values() if len(by) >= 2]
    if units:
        out["agreement"] = krippendorff_alpha(units, level_of(task), n_resamples=n_resamples,
                                              seed=seed)
    return out


def _word(value: float, task: str = "") -> str:
    if is_pairwise(task):
        return {1.0: "a", 0.0: "b"}.get(value, "tie")
    return next((str(c["text"]).lower() for c in choices_of(task) if c["value"] == value),
                f"{value:g}")

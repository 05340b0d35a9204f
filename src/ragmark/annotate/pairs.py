"""The items of a preference task (``--task pairwise:CRITERION``): two configs' answers
to the same questions of a compare, A the baseline and B another config, which one is
shown first drawn per pair, the compare's pairwise verdict as the judge's."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ragmark.analysis.inspection import results_from
from ragmark.annotate.queue import PAIRWISE, PREFERRED_VALUE, Drawn, stratified, verdict
from ragmark.errors import ConfigError
from ragmark.judges.pairwise import CRITERIA, one_order_first
from ragmark.results import read_results
from ragmark.running.tournament import outcomes, pairs_between


def draw_pairs(source: str | Path, task: str, n: int | None, seed: int,
               config: str | None) -> Drawn:
    """A preference task's items: the questions the baseline (A) and ``config`` (B,
    default the first other config) of a compare both answered, with the compare's
    pairwise verdict by the criterion when it has one (A's score: 1, 0.5, 0); each
    item's ``first`` (the answer shown first) drawn from the seed."""
    criterion = task[len(PAIRWISE):]
    if criterion not in CRITERIA:
        raise ConfigError(f"--task {task}: the pairwise criteria are {', '.join(CRITERIA)}")
    kind, data = read_results(source)
    if kind != "compare":
        raise ConfigError(f"--task {task} labels which of two configs' answers is better: "
                          f"{source} is not a results file of `ragmark compare "
                          "--include-details`")
    a = results_from(str(source), data)
    others = [c for c in a.configs if c != a.config]
    b_name = config or (others[0] if others else a.config)
    if b_name == a.config:
        raise ConfigError(f"--config-name {b_name}: that is the baseline (A); name another "
                          f"config of {source}: {', '.join(others)}")
    b = results_from(str(source), data, b_name)
    if not (a.detailed and b.detailed):
        raise ConfigError(f"{source}: the compare has no answers; rerun it with "
                          "--include-details")
    pairs, left = pairs_between(a.queries, b.queries)
    judged = ({} if a.pairwise is None else
              outcomes(a.pairwise, a.config, b_name, criterion))
    score = {"won": PREFERRED_VALUE["A"], "lost": PREFERRED_VALUE["B"],
             "tie": PREFERRED_VALUE["tie"]}
    items: list[dict[str, Any]] = [{"id": p.id, "question": p.question, "answer": p.a.answer,
              "answer_b": p.b.answer, "contexts": list(p.a.contexts),
              "contexts_b": list(p.b.contexts), "expected_answer": p.reference or "",
              "metric": task, "judge": score.get(judged.get(p.id) or ""),
              "first": one_order_first(p.id, seed), "a": a.config, "b": b_name}
             for p in pairs]
    if not items:
        raise ConfigError(f"{source}: no question both {a.config} and {b_name} answered")
    eligible = len(items)
    if n is not None and n < len(items):
        items = [items[i] for i in stratified(
            [verdict(task, it["judge"]) for it in items], n, seed)]
    strata = Counter(verdict(task, it["judge"]) for it in items)
    return Drawn(items, task, eligible, left, dict(sorted(strata.items())))

"""Several people's labels of the same items (``ragmark annotate --overlap``): one
label per item for the judge to be measured against, and how far the people agree with
each other beside how far the judge agrees with them, the ceiling a judge can reach on
this data.

An item labelled by several people gets the majority's label; an item they split evenly
on is left out of the judge's statistics and counted (no label would be fair to the
judge). The people's agreement is Krippendorff's alpha (nominal) over the items two or
more labelled, with a bootstrap interval, and Cohen's kappa when exactly two people
labelled; the judge's is alpha over the same items with the judge as one more coder,
and its kappa with each person on the items that person labelled.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragmark.judge_eval.items import Item
from ragmark.stats.agreement import evaluate
from ragmark.stats.reliability import krippendorff_alpha


@dataclass(frozen=True)
class People:
    """Each item's labels by person (True: unsupported), for the items several people
    labelled; ``split`` the items left out because the people split evenly."""

    labels: dict[str, dict[str, bool]]
    split: int

    @property
    def annotators(self) -> list[str]:
        return sorted({a for by in self.labels.values() for a in by})


def consensus(items: Sequence[Item]) -> tuple[list[Item], People | None]:
    """One item per id (the majority's label) and the people's labels; ``None`` when no
    id was labelled twice (the items as they are)."""
    by_id: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        by_id[it.id].append(it)
    if all(len(group) == 1 for group in by_id.values()):
        return list(items), None
    out, split = [], 0
    labels: dict[str, dict[str, bool]] = {}
    for item_id, group in by_id.items():
        labels[item_id] = {it.annotator or f"person {k + 1}": it.unsupported
                           for k, it in enumerate(group)}
        votes = Counter(it.unsupported for it in group)
        if len(group) > 1 and votes[True] == votes[False]:
            split += 1
            continue
        out.append(replace(group[0], unsupported=votes.most_common(1)[0][0]))
    return out, People(labels, split)


def _coders(people: People, extra: dict[str, bool | None] | None = None
            ) -> tuple[list[list[float | None]], int]:
    names = people.annotators
    units = [item_id for item_id, by in people.labels.items() if len(by) >= 2]
    rows = [[None if (v := people.labels[u].get(a)) is None else float(v) for a in names]
            + ([] if extra is None else [None if extra.get(u) is None else
                                         float(bool(extra[u]))])
            for u in units]
    return rows, len(units)


def people_report(people: People, n_resamples: int, seed: int) -> dict[str, Any]:
    """The people's agreement: alpha (nominal) over the items two or more labelled, and
    Cohen's kappa when two people labelled."""
    rows, units = _coders(people)
    names = people.annotators
    out: dict[str, Any] = {"annotators": names, "items": units, "split": people.split,
                           "alpha": krippendorff_alpha(rows, n_resamples=n_resamples,
                                                       seed=seed)}
    if len(names) == 2:
        both = [(by[names[0]], by[names[1]]) for by in people.labels.values()
                if len(by) == 2]
        if len(both) >= 2:
            out["kappa"] = evaluate([a for a, _ in both], [b for _, b in both],
                                    n_resamples=n_resamples, seed=seed)["kappa"]
    return out


def judge_with_people(people: People, verdicts: dict[str, bool | None], n_resamples: int,
                      seed: int) -> dict[str, Any]:
    """The judge among the people: alpha over the items two or more people labelled with
    the judge as one more coder, and its kappa with each person on their items."""
    rows, units = _coders(people, verdicts)
    judged = sum(1 for r in rows if r[-1] is not None)
    out: dict[str, Any] = {"items": units, "judged": judged, "alpha": krippendorff_alpha(
        rows, n_resamples=n_resamples, seed=seed), "kappa": {}}
    for name in people.annotators:
        pairs = [(by[name], verdicts[i]) for i, by in people.labels.items()
                 if name in by and verdicts.get(i) is not None]
        if len(pairs) >= 2:
            out["kappa"][name] = evaluate([p for p, _ in pairs], [bool(j) for _, j in pairs],
                                          n_resamples=n_resamples, seed=seed)["kappa"]
    return out

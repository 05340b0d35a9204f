"""Judges that measure nothing: one value for (nearly) every item, or values that an
exact metric contradicts. Pure.

A judge that says YES to 36 of 36 passages, or rates every answer 0.25, cannot tell the
items apart; its mean says nothing about the system. And where the answer equals the
expected answer exactly (exact_match 1.0), a correctness judge near 0 is wrong. These
checks turn such results into notes in every output; ``ragmark judge-eval`` measures a
judge properly against people's labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ragmark.types import Score

MIN_ITEMS = 8
"""Fewer values than this say too little to call a judge degenerate."""
SHARE = 0.95
"""A judge that gives one value to at least this share of its items is flagged."""
CONTRADICTS = {"answer_correctness": ("exact_match", 1.0, 0.25)}
"""Judge metric -> (exact metric, its value, the judge's value at or below which the
judge contradicts it)."""


def one_value(name: str, values: Sequence[float], what: str = "items") -> str | None:
    """A note when one value covers at least :data:`SHARE` of ``values`` (and there are
    at least :data:`MIN_ITEMS`), else None."""
    if len(values) < MIN_ITEMS:
        return None
    value, count = Counter(round(v, 6) for v in values).most_common(1)[0]
    if count < SHARE * len(values):
        return None
    return (f"{name} gave the same value ({value:g}) to {count} of {len(values)} {what}: a "
            "judge that does not tell them apart measures nothing; check it against "
            "people's labels with ragmark judge-eval")


def degenerate_notes(per_question: Sequence[Mapping[str, Score]],
                     judge_names: Sequence[str]) -> list[str]:
    """The notes of the module docstring for a run's questions (metric -> score each)."""
    notes = []
    for name in judge_names:
        values = [v for q in per_question
                  if name in q and (v := q[name].value) is not None]
        note = one_value(name, values, "questions")
        if note:
            notes.append(note)
        exact = CONTRADICTS.get(name)
        if exact is None:
            continue
        metric, target, low = exact
        both = [q for q in per_question if q.get(metric) and q[metric].value == target
                and name in q and q[name].value is not None]
        against = [q for q in both if (q[name].value or 0.0) <= low]
        if against:
            notes.append(f"{name} is at most {low:g} on {len(against)} of the {len(both)} "
                         f"questions whose {metric} is {target:g}: the judge contradicts an "
                         "exact metric there; check it with ragmark judge-eval")
    return notes

"""Each question's difficulty and discrimination over the configs that answered it
(issue 65, item 3), from their values of one metric, as classical test theory defines
them (Lord and Novick 1968; the item analysis of Crocker and Algina 1986, ch. 14):

- **difficulty**: the mean of the question's values over the configs (for a metric of
  0/1 values, the share of configs that pass it: the item's *p*-value);
- **discrimination**: the corrected item-total correlation — Pearson's r, over the
  configs, between the question's value and the config's mean over the *other*
  questions (for 0/1 values it is the point-biserial correlation). High: the strong
  configs get it and the weak ones do not. None when the question's values do not vary
  over the configs (every config passed it, or failed it): such a question separates
  nothing, and is marked so. None too with fewer than three configs (a correlation over
  two points is always +1 or -1, whatever the question) or when the configs' means over
  the other questions are all alike: the question varies, and its verdict says the
  discrimination could not be measured and why. A negative one means the weaker configs
  do better on it (worth checking its label).

Only questions every config has a value for are analysed (a config without one would
make the totals unlike); the others are counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_CONFIGS = 3
"""The fewest configs over which a discrimination (a correlation) means anything."""

Values = Mapping[str, Mapping[str, float | None]]
"""config -> question id -> value (None: missing)."""


@dataclass(frozen=True)
class Item:
    """One question's statistics over the configs."""

    id: str
    difficulty: float
    discrimination: float | None
    separates: bool
    """False when every config's value is the same (always passed, always failed)."""
    configs: int
    """How many configs valued it."""

    @property
    def verdict(self) -> str:
        if self.separates:
            if self.discrimination is not None:
                return ("separates" if self.discrimination >= 0 else
                        "separates the wrong way: the weaker configs do better on it")
            if self.configs < MIN_CONFIGS:
                return (f"varies; its discrimination needs {MIN_CONFIGS} or more configs "
                        f"(a correlation over {self.configs} is always +1 or -1)")
            return ("varies; no discrimination: the configs' means over the other "
                    "questions are alike")
        return ("every config passes it" if self.difficulty >= 1.0 else
                "every config fails it" if self.difficulty <= 0.0 else
                "every config scores it alike")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "difficulty": round(self.difficulty, 4),
                "discrimination": None if self.discrimination is None
                else round(self.discrimination, 4), "verdict": self.verdict}


def item_statistics(values: Values, order: Sequence[str]) -> tuple[list[Item], int]:
    """Each question of ``order`` that every config valued, and how many were left out
    (a value missing in some config)."""
    configs = list(values)
    kept = [q for q in order if all(values[c].get(q) is not None for c in configs)]
    if not kept or len(configs) < 2:
        return [], len(order) - len(kept)
    m = np.array([[float(values[c][q]) for q in kept] for c in configs])  # type: ignore[arg-type]
    totals = m.sum(axis=1)
    out = []
    for j, q in enumerate(kept):
        col = m[:, j]
        rest = (totals - col) / max(len(kept) - 1, 1)
        separates = bool(np.ptp(col) > 0)
        r = None
        if separates and len(configs) >= MIN_CONFIGS and np.ptp(rest) > 0:
            r = float(np.corrcoef(col, rest)[0, 1])
        out.append(Item(q, float(col.mean()), r, separates, len(configs)))
    return out, len(order) - len(kept)


def item_summary(items: Sequence[Item], left_out: int, configs: Sequence[str],
                 metric: str) -> dict[str, Any]:
    """What ``testset check --history`` reports of one metric: the configs, how many
    questions separate nothing, and every question's statistics (hardest first)."""
    flat = [i for i in items if not i.separates]
    return {"metric": metric, "configs": list(configs), "questions": len(items),
            "left_out": left_out, "separate_nothing": len(flat),
            "always_passed": sum(i.difficulty >= 1.0 for i in flat),
            "always_failed": sum(i.difficulty <= 0.0 for i in flat),
            "items": [i.to_json() for i in sorted(items, key=lambda i: (i.difficulty, i.id))]}


Table = Mapping[str, Mapping[str, Mapping[str, float | None]]]
"""config -> question id -> metric -> value (None: missing)."""


def question_over_configs(table: Table, qid: str) -> dict[str, Any]:
    """For ``ragmark inspect`` of a compare: each metric of question ``qid``, every
    config's value, and the question's difficulty, discrimination and verdict among the
    questions every config valued (:func:`item_statistics` over the compare's questions,
    in the table's order); a question some config has no value for says so."""
    order = list(next(iter(table.values()), {}))
    metrics = sorted({m for per in table.values() for m in per.get(qid, {})})
    out: dict[str, Any] = {}
    for m in metrics:
        values = {c: {q: (v or {}).get(m) for q, v in per.items()} for c, per in table.items()}
        items, _ = item_statistics(values, order)
        item = next((i for i in items if i.id == qid), None)
        got = ({"verdict": "some config has no value for it"} if item is None
               else {k: v for k, v in item.to_json().items() if k != "id"})
        out[m] = {"values": {c: values[c].get(qid) for c in table}, **got}
    return out

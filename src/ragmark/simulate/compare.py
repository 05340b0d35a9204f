"""Several systems on the same scenarios, simulator and seeds: their conversation
metrics paired by scenario against the first config (the baseline), and the gates.

Per other config and metric: the mean difference over the scenarios both have a value
for, its 95% bootstrap interval, the two-sided paired permutation test's p (exact up to
16 pairs) and the p adjusted by Holm over every row; a scenario without a value on one
side is left out of that pair (counted), never a 0. The metrics: ``goal_completion``
and ``knowledge_retention`` (judged), ``goal_reached`` (the simulated user's own verdict:
1 reached, 0 gave up or turns ran out; missing when the simulator failed).
``--fail-under [CONFIG:]METRIC=V`` fails when a config's mean is below V or it has none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ragmark.simulate.play import Played
from ragmark.stats.paired import bootstrap_ci, holm, paired_permutation_test
from ragmark.types import Score

METRICS = ("goal_completion", "knowledge_retention", "goal_reached")
PREFIX = "simulate:"
"""Before a conversation metric's name where a simulation's scenarios are read as a
run's questions (the run history, ``ragmark diff``): a run's metrics are apart."""

class Threshold(Protocol):
    """A ``--fail-under`` threshold (:class:`ragmark.analysis.gates.Threshold`)."""

    @property
    def metric(self) -> str: ...

    @property
    def value(self) -> float: ...

    def applies(self, config: str) -> bool: ...


Values = Mapping[str, Mapping[str, float | None]]
"""metric -> scenario id -> value (None: missing)."""


def values_of(played: Sequence[Played], scores: Sequence[Mapping[str, Score]]
              ) -> dict[str, dict[str, float | None]]:
    """One config's per-scenario values of :data:`METRICS`."""
    out: dict[str, dict[str, float | None]] = {m: {} for m in METRICS}
    for p, s in zip(played, scores, strict=True):
        for m in ("goal_completion", "knowledge_retention"):
            out[m][p.scenario] = s[m].value
        out["goal_reached"][p.scenario] = (None if p.outcome == "simulator_failed"
                                           else float(p.outcome == "goal_reached"))
    return out


def conversation_scores(conv: Mapping[str, Any]) -> dict[str, Score]:
    """One conversation of a simulation's report as :data:`METRICS` named with
    :data:`PREFIX`: the judged ones as the report holds them (missing with their
    reason), ``goal_reached`` from how it ended (missing when the simulator failed)."""
    def score(got: Mapping[str, Any]) -> Score:
        return (Score(float(got["value"])) if got.get("value") is not None
                else Score.missing(str(got.get("reason") or "no value")))

    out = {m: score(conv["metrics"][m]) for m in METRICS if m in conv["metrics"]}
    out["goal_reached"] = (Score.missing("the simulator failed")
                           if conv["outcome"] == "simulator_failed"
                           else Score(float(conv["outcome"] == "goal_reached")))
    return {f"{PREFIX}{m}": v for m, v in out.items()}


def _mean(values: Mapping[str, float | None]) -> float | None:
    got = [v for v in values.values() if v is not None]
    return sum(got) / len(got) if got else None


def paired_rows(configs: Mapping[str, Values], scenarios: Sequence[str]
                ) -> list[dict[str, Any]]:
    """Each other config against the first, per metric (Holm over all rows)."""
    names = list(configs)
    base = configs[names[0]]
    rows: list[dict[str, Any]] = []
    for name in names[1:]:
        for m in METRICS:
            a = [base[m].get(s) for s in scenarios]
            b = [configs[name][m].get(s) for s in scenarios]
            pairs = [(x, y) for x, y in zip(a, b, strict=True)
                     if x is not None and y is not None]
            nan = math.nan
            test = paired_permutation_test([nan if x is None else x for x in a],
                                           [nan if y is None else y for y in b])
            iv = bootstrap_ci([y - x for x, y in pairs]) if pairs else None
            rows.append({"config": name, "metric": m, "baseline": names[0],
                         "baseline_mean": _mean(base[m]), "mean": _mean(configs[name][m]),
                         "difference": test.statistic if pairs else None,
                         "interval": None if iv is None else [iv.low, iv.high],
                         "p": test.p_value if pairs else None, "pairs": len(pairs),
                         "left_out": len(scenarios) - len(pairs)})
    tested = [i for i, r in enumerate(rows) if r["p"] is not None]
    for i, p in zip(tested, holm([rows[i]["p"] for i in tested]), strict=True):
        rows[i]["p_holm"] = p
    return rows


def gate_results(configs: Mapping[str, Values], fail_under: Sequence[Threshold]
                 ) -> list[dict[str, Any]]:
    """Each ``--fail-under`` threshold on each config it names: held or failed, why."""
    out = []
    for name, values in configs.items():
        for t in fail_under:
            if not t.applies(name):
                continue
            mean = _mean(values[t.metric])
            n = sum(v is not None for v in values[t.metric].values())
            if mean is None:
                out.append({"ok": False, "text": f"{name}: {t.metric} has no value "
                                                 f"(--fail-under {t.value:g})"})
                continue
            ok = mean >= t.value
            out.append({"ok": ok, "text": f"{name}: {t.metric} = {mean:.4f} "
                                          f"{'>=' if ok else '<'} {t.value:g} (--fail-under; "
                                          f"over {n} conversation{'s' * (n != 1)})"})
    return out

"""A probe in the run history: one record of kind ``probe`` on the clean set's dataset
hash, its configs' rates as metrics named ``probe:ARM`` (the success rate) and
``probe:ARM.RATE`` (the others), each target's outcomes as their values, and the gates'
verdict. ``ragmark history`` lists it and ``history trend --metric probe:injection``
follows it; the baselines of runs and compares are never taken from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmark.history.store import ConfigResult, record
from ragmark.probe.rates import RATES, Rates
from ragmark.types import Aggregate, Score


def metric(arm: str, rate: str = "success") -> str:
    """The history's name of an arm's rate.

    >>> metric("injection:plain"), metric("leakage", "retrieved")
    ('probe:injection:plain', 'probe:leakage.retrieved')
    """
    return f"probe:{arm}" if rate == "success" else f"probe:{arm}.{rate}"


def _aggregate(r: Rates, rate: str) -> Aggregate:
    """One rate of an arm as the history keeps a metric: its value over the targets it
    covers, and why the others have none."""
    iv = r.values.get(rate)
    n = 0 if iv is None else iv.n
    missing = r.targets - n
    if rate == "success":
        reasons = dict(r.missing)
    elif missing:
        reasons = {"its planted passage was not retrieved, or no answer"
                   if rate == "success_when_retrieved" else "no value": missing}
    else:
        reasons = {}
    return Aggregate(None if iv is None else iv.mean, n, missing, reasons)


def record_probe(path: Path, rep: Any, results: Path | None) -> int:
    """Record ``rep`` (a ProbeReport) in the history at ``path``; its id."""
    configs = {}
    for name, by in rep.rates.items():
        metrics = {metric(arm, rate): _aggregate(r, rate) for arm, r in by.items()
                   for rate in RATES}
        values: dict[str, dict[str, Score]] = {}
        for o in rep.outcomes[name]:
            arm = f"{o.attack}:{o.style}" if o.style else o.attack
            got = values.setdefault(o.question_id, {})
            got[metric(arm)] = Score(float(o.success)) if o.success is not None else \
                Score.missing(o.why or "no answer")
            got[metric(arm, "retrieved")] = Score(float(o.retrieved))
        configs[name] = ConfigResult({"name": name, "probe": dict(rep.plan)}, metrics, values)
    return record(path, rep.envelope, str(rep.plan["dataset"]["name"]),
                  list(rep.questions.items()), configs,
                  None if results is None else str(results),
                  "failed" if rep.failed else "passed")

"""The regression gate: is this run significantly worse than a baseline run?

For each gated metric the questions both runs have a value for are paired; the paired
difference (now - baseline) gets a 95% bootstrap interval and a two-sided paired
randomisation test; Holm's correction runs over the gated metrics. A metric FAILS when
its adjusted p-value is below alpha, the difference is negative, and the drop is larger
than ``margin`` (a practical threshold). Noise does not fail it; a real drop does.

The minimum detectable effect says how small a drop the gate can see at this many
questions: with the paired differences' standard deviation s over n questions, a
two-sided test at alpha and power 0.8 detects about ``(z(1 - alpha/2) + z(0.8)) * s /
sqrt(n)`` (normal approximation). :func:`questions_needed` inverts it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from ragmark.analysis.diff import Side, other_nuggets
from ragmark.stats import (
    Interval,
    bootstrap_ci,
    holm,
    least_questions,
    paired_permutation_test,
    smallest_p,
)
from ragmark.stats.noise import noise_band

POWER = 0.8
CANNOT_FAIL = "this gate cannot fail"
"""How the reason of a gate too small to fail begins."""


def mde(sd: float, n: int, alpha: float = 0.05, power: float = POWER) -> float | None:
    """The smallest mean difference a two-sided paired test at ``alpha`` finds with
    probability ``power`` over ``n`` questions whose differences have s.d. ``sd``."""
    if n < 2:
        return None
    z = float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))
    return z * sd / math.sqrt(n)


def questions_needed(sd: float, effect: float, alpha: float = 0.05,
                     power: float = POWER) -> int:
    """Questions a paired gate needs to detect a mean difference of ``effect``."""
    if effect <= 0:
        raise ValueError("the effect must be positive")
    z = float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))
    return max(2, math.ceil((z * sd / effect) ** 2))


@dataclass(frozen=True)
class GateRow:
    """One gated metric against the baseline."""

    metric: str
    n: int
    baseline: float | None
    now: float | None
    delta: float | None
    low: float | None
    high: float | None
    p_value: float | None
    p_adjusted: float | None
    mde: float | None
    passed: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "n": self.n, "baseline": self.baseline,
                "now": self.now, "delta": self.delta,
                "interval": None if self.low is None else [self.low, self.high],
                "p_value": self.p_value, "p_adjusted": self.p_adjusted, "mde": self.mde,
                "verdict": "PASS" if self.passed else "FAIL", "reason": self.reason}


def regression_gate(base: Side, now: Side, metrics: Sequence[str], *, alpha: float = 0.05,
                    margin: float = 0.0, n_resamples: int = 10_000, seed: int = 0
                    ) -> list[GateRow]:
    """Each gated metric of ``now`` against ``base``, Holm-corrected over the metrics. A
    significant drop no larger than the judge's own noise
    (:func:`~ragmark.stats.noise.noise_band`, where a
    side measured it) is not a regression, and the row says so."""
    pending: list[tuple[str, tuple[int, float, float, float, Interval | None, float,
                                   float | None] | None]] = []
    unpaired: dict[str, str] = {}
    for metric in metrics:
        va, vb = base.values.get(metric, {}), now.values.get(metric, {})
        ids = [q for q in now.questions if va.get(q) is not None and vb.get(q) is not None]
        why = other_nuggets(base, now, [metric])
        if not ids or why is not None:
            unpaired[metric] = why or "no question has a value in both runs"
            pending.append((metric, None))
            continue
        x = np.array([va[q] for q in ids], dtype=np.float64)
        y = np.array([vb[q] for q in ids], dtype=np.float64)
        d = y - x
        iv = bootstrap_ci(d, 0.95, n_resamples, seed)
        test = paired_permutation_test(x, y, n_resamples, seed)
        sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
        pending.append((metric, (len(ids), float(x.mean()), float(y.mean()), float(d.mean()),
                                 iv, test.p_value, mde(sd, len(ids), alpha))))
    ps = [got[5] for _, got in pending if got is not None]
    adjusted = iter(holm(ps)) if ps else iter(())
    least = least_questions(len(ps), alpha, n_resamples)  # fewer questions cannot fail
    rows = []
    for metric, got in pending:
        if got is None:
            rows.append(GateRow(metric, 0, None, None, None, None, None, None, None, None,
                                False, unpaired[metric]))
            continue
        n, mb, mn, delta, iv, p, m = got
        p_adj = next(adjusted)
        if least is None or n < least:  # no answers could fail it: no gate at all
            floor = smallest_p(n, n_resamples)
            rows.append(GateRow(metric, n, mb, mn, delta, None if iv is None else iv.low,
                                None if iv is None else iv.high, p, p_adj, None, False,
                                f"{CANNOT_FAIL}: over {n} questions the paired test "
                                f"gives p no smaller than {floor:.4g}, "
                                + (f"{len(ps)} gated metrics x that is "
                                   f"{floor * len(ps):.4g}, " if len(ps) > 1 else "")
                                + f"not below alpha {alpha:g} after Holm; "
                                + (f"gate on at least {least} questions (`ragmark power` "
                                   "says how many catch the drop you care about)"
                                   if least is not None else "gate on fewer metrics")))
            continue
        worse = p_adj < alpha and delta < 0
        band = noise_band((base.noise, now.noise), metric, n)
        beyond = -delta > margin and (band is None or -delta > band)
        passed = not (worse and beyond)
        if passed and worse and band is not None and -delta <= band and -delta > margin:
            reason = (f"significantly worse, but the drop {-delta:.4f} is within the "
                      f"judge's own noise (±{band:.4f}, measured by its repeats)")
        elif passed and worse:
            reason = f"significantly worse, but by no more than the margin {margin:g}"
        elif passed:
            reason = "no significant drop" if delta < 0 or p_adj >= alpha else "better"
        else:
            reason = f"significantly worse (p = {p_adj:.4g} after Holm < {alpha:g})" + (
                f", beyond the margin {margin:g}" if margin else "") + (
                "" if band is None else f" and the judge's own noise (±{band:.4f})")
        rows.append(GateRow(metric, n, mb, mn, delta, None if iv is None else iv.low,
                            None if iv is None else iv.high, p, p_adj, m, passed, reason))
    return rows


def gate_lines(rows: Sequence[GateRow], baseline: str) -> list[str]:
    """One line per gated metric, for the console and the gate messages."""
    out = []
    for r in rows:
        verdict = "PASS" if r.passed else "FAIL"
        if r.delta is None:
            out.append(f"{verdict} {r.metric} vs {baseline}: {r.reason}")
            continue
        iv = "" if r.low is None else f" [{r.low:+.4f}, {r.high:+.4f}]"
        detect = "" if r.mde is None else f"; detectable at n = {r.n}: {r.mde:.4f}"
        out.append(f"{verdict} {r.metric} vs {baseline}: {r.baseline:.4f} -> {r.now:.4f} "
                   f"({r.delta:+.4f}{iv}, p = {r.p_adjusted:.4g} after Holm, n = {r.n}"
                   f"{detect}): {r.reason}")
    return out


def _verdict(r: GateRow) -> str:
    """PASS, FAIL, or FAIL with the reason of a gate too small to fail (the table's
    footnote explains only the significant drop)."""
    if r.passed:
        return "PASS"
    return f"FAIL: {r.reason}" if r.reason.startswith(CANNOT_FAIL) else "FAIL"


def gate_markdown(rows: Sequence[GateRow], baseline: str, alpha: float, margin: float) -> str:
    """The gate as a Markdown table (for a CI summary)."""
    lines = [f"### Regression gate against {baseline}", "",
             "| Metric | Questions | Baseline | Now | Difference [95% interval] | p (Holm) "
             "| Detectable | Verdict |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r.delta is None:
            lines.append(f"| {r.metric} | 0 | — | — | — | — | — | FAIL: {r.reason} |")
            continue
        iv = "" if r.low is None else f" [{r.low:+.4f}, {r.high:+.4f}]"
        lines.append(f"| {r.metric} | {r.n} | {r.baseline:.4f} | {r.now:.4f} | "
                     f"{r.delta:+.4f}{iv} | {r.p_adjusted:.4g} | "
                     f"{'—' if r.mde is None else f'{r.mde:.4f}'} | "
                     f"{_verdict(r)} |")
    lines += ["", f"A metric fails when it is significantly worse (paired randomisation "
                  f"test, Holm over the {len(rows)} gated metrics, α = {alpha:g})"
                  + (f" by more than {margin:g}" if margin else "") + ". Detectable: the "
                  "drop the gate finds with power 0.8 at this many questions."]
    return "\n".join(lines) + "\n"

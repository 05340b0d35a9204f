"""``judge-eval --align``: a judge aligned to people's labels (examples and rules from
them, :mod:`ragmark.judges.guidance`), and the gain measured honestly.

Cross-validation: the items are dealt into stratified folds (seeded); each fold's items
are judged with the guidance chosen from the other folds only — examples balanced by
label, those the unaligned judge got wrong first, and the people's notes as rules — so
no item is ever in its own prompt. The unaligned and the aligned verdicts of every item
(each held out) are compared with the labels: balanced accuracy and Cohen's kappa, and
the gain of each with a paired bootstrap interval over items (the same resamples for
both verdicts). The report says plainly when the interval of the gain holds 0 or less.
The guidance saved (``--save-alignment``) is chosen the same way from every item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ragmark.analysis.review import ask
from ragmark.judge_eval.items import Item
from ragmark.judge_eval.scores import folds_of
from ragmark.judges.guidance import Example, Guidance, choose_examples, rubric_of
from ragmark.stats.agreement import statistics
from ragmark.stats.resample import percentile_interval, resample_rows
from ragmark.types import Score

FOLDS = 5
PER_CLASS = 2
"""Examples of each label in an aligned prompt (small judges have small windows)."""


def example_of(it: Item) -> Example:
    return Example(it.question, it.answer, tuple(it.contexts), not it.unsupported, it.note,
                   it.expected_answer or "")


def guidance_from(items: Sequence[Item], wrong: Sequence[bool], metric: str,
                  per_class: int = PER_CLASS) -> Guidance:
    """The guidance ``items`` give: examples (the unaligned judge's ``wrong`` ones first)
    and the people's notes as rules."""
    return Guidance(metric, ask(metric),
                    choose_examples([example_of(it) for it in items], wrong, per_class),
                    rubric_of([it.note for it in items]))


def align(items: Sequence[Item], metric: str, cut: float,
          unaligned: Sequence[Score], judge: Callable[..., list[Score]], *,
          folds: int = FOLDS, seed: int = 0, n_resamples: int = 2000
          ) -> tuple[dict[str, Any], Guidance]:
    """The cross-validated gain of the module docstring (``unaligned``: the judge's
    scores of ``items`` without guidance; ``judge(items, guidances)`` judges each item
    with its guidance, every fold's in one call), and the guidance chosen from every
    item."""
    truth = np.array([it.unsupported for it in items])
    said = [None if not s.ok else float(s.value) < cut for s in unaligned]  # type: ignore[arg-type]
    wrong = [v is None or v != t for v, t in zip(said, truth, strict=True)]
    k = min(folds, int(truth.sum()), int((~truth).sum()))
    if k < 2:
        return {"reason": "alignment needs at least 2 items of each label (2 folds)"}, \
            guidance_from(items, wrong, metric)
    aligned: list[bool | None] = [None] * len(items)
    failed: dict[str, int] = {}
    held_out: list[int] = []  # every item once, in fold order
    guides: list[Guidance] = []  # the guidance each is judged with: its fold's
    sizes = []
    for test in folds_of(truth, k, seed):
        held = set(test.tolist())
        train = [i for i in range(len(items)) if i not in held]
        g = guidance_from([items[i] for i in train], [wrong[i] for i in train], metric)
        sizes.append(len(g.examples))
        held_out += test.tolist()
        guides += [g] * len(test)
    got = judge([items[i] for i in held_out], guides)  # all folds in one go: one client
    for i, s in zip(held_out, got, strict=True):
        aligned[i] = None if not s.ok else float(s.value) < cut  # type: ignore[arg-type]
        if not s.ok:
            why = s.reason or "no verdict"
            failed[why] = failed.get(why, 0) + 1
    report = _compare(truth, said, aligned, n_resamples, seed)
    report.update(folds=k, examples_per_prompt=sizes, per_class=PER_CLASS)
    if failed:
        n = sum(failed.values())
        report["aligned_failed"] = n
        report["aligned_reasons"] = failed
        if "reason" in report:
            worst = max(failed, key=lambda r: failed[r])
            report["reason"] += (f": the aligned judge gave no verdict on {n} of "
                                 f"{len(items)} items ({failed[worst]} of them: {worst})")
    return report, guidance_from(items, wrong, metric)


def _compare(truth: np.ndarray, said: Sequence[bool | None], aligned: Sequence[bool | None],
             n_resamples: int, seed: int) -> dict[str, Any]:
    both = [i for i in range(len(truth)) if said[i] is not None and aligned[i] is not None]
    out: dict[str, Any] = {"items": len(both), "left_out": len(truth) - len(both)}
    if len(both) < 2:
        out["reason"] = f"{len(both)} item(s) have both verdicts; the gain needs 2"
        return out
    t = truth[both]
    u = np.array([said[i] for i in both], dtype=bool)
    a = np.array([aligned[i] for i in both], dtype=bool)
    su, sa = statistics(t, u), statistics(t, a)
    gains: dict[str, list[np.ndarray]] = {"balanced_accuracy": [], "kappa": []}
    for rows in resample_rows(len(both), n_resamples, seed, 500):
        bu, ba = statistics(t[rows], u[rows]), statistics(t[rows], a[rows])
        for name in gains:
            gains[name].append(ba[name] - bu[name])
    for name in gains:
        value = float(sa[name] - su[name])
        ci = percentile_interval(np.concatenate(gains[name]), 0.95)
        out[name] = {"unaligned": _num(su[name]), "aligned": _num(sa[name]),
                     "gain": None if np.isnan(value) else value,
                     "ci_low": None if ci is None else ci[0],
                     "ci_high": None if ci is None else ci[1]}
    g = out["balanced_accuracy"]
    if g["gain"] is None or g["ci_low"] is None:
        out["verdict"] = "the gain is not defined on these items"
    elif g["ci_low"] > 0:
        out["verdict"] = (f"alignment helped: balanced accuracy {g['unaligned']:.3f} -> "
                          f"{g['aligned']:.3f} on held-out items")
    else:
        out["verdict"] = (f"alignment did not help: the gain in balanced accuracy "
                          f"{g['gain']:+.3f} [{g['ci_low']:+.3f}, {g['ci_high']:+.3f}] "
                          "holds 0 or less")
    return out


def _num(x: Any) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v

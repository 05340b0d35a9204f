"""Pairwise verdicts (which of two answers is better) as statistics: wins, ties and
losses, the win rate with a bootstrap interval, the sign test, and Bradley–Terry
strengths for three systems or more.

- The **win rate** of A over B counts a tie as half a win: (wins + ties / 2) / n, with a
  percentile bootstrap interval over the questions.
- The **sign test** (two-sided, exact): under "neither is better" each non-tied question
  is a fair coin; p = P(Binomial(wins + losses, 1/2) at least as uneven). Ties are left
  out, as the sign test does.
- **Bradley–Terry** (Bradley and Terry 1952): P(i beats j) = p_i / (p_i + p_j); the
  strengths maximise the likelihood of the win counts, found by Hunter's (2004) MM
  iteration p_i <- W_i / sum_j n_ij / (p_i + p_j) (W_i: i's wins, n_ij: comparisons of i
  and j; a tie is half a win for each). Reported as log-strengths centred on 0, as
  ``choix`` reports them (equal to ``choix.mm_pairwise`` on its examples: a test). The
  maximum exists only when every system has won and lost somewhere along a connected
  graph of comparisons; otherwise the strengths are missing with that reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmark.stats.resample import percentile_interval, resample_rows

OUTCOMES = ("A", "B", "tie")


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test of ``wins`` against ``losses`` (ties left out); 1 when
    there is no non-tied comparison.

    >>> sign_test(9, 1)
    0.021484375
    """
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def win_rate(verdicts: Sequence[str], *, n_resamples: int = 2000, seed: int = 0,
             confidence: float = 0.95) -> dict[str, Any]:
    """A's record against B over the questions' ``verdicts`` ("A", "B" or "tie"):
    wins, ties, losses, the win rate with its interval, and the sign test's p."""
    bad = [v for v in verdicts if v not in OUTCOMES]
    if bad:
        raise ValueError(f"a verdict is A, B or tie, got {bad[0]!r}")
    score = np.array([{"A": 1.0, "B": 0.0, "tie": 0.5}[v] for v in verdicts])
    wins, losses = int((score == 1).sum()), int((score == 0).sum())
    out: dict[str, Any] = {"n": len(verdicts), "wins": wins, "ties": len(verdicts) - wins
                           - losses, "losses": losses, "p_value": sign_test(wins, losses),
                           "test": "sign test (two-sided, exact; ties left out)"}
    if not verdicts:
        return {**out, "value": None, "ci_low": None, "ci_high": None,
                "reason": "no question has a verdict"}
    draws = [score[rows].mean(axis=1)
             for rows in resample_rows(len(score), n_resamples, seed, 1000)]
    ci = percentile_interval(np.concatenate(draws), confidence)
    assert ci is not None
    return {**out, "value": float(score.mean()), "ci_low": ci[0], "ci_high": ci[1]}


def win_matrix(n_items: int, pairs: Sequence[tuple[int, int, str]]) -> NDArray[np.float64]:
    """W[i, j]: how often system i beat j, from ``(i, j, verdict)`` triples (verdict "A":
    i won, "B": j won, "tie": half a win each)."""
    w = np.zeros((n_items, n_items))
    for i, j, v in pairs:
        if v == "A":
            w[i, j] += 1
        elif v == "B":
            w[j, i] += 1
        elif v == "tie":
            w[i, j] += 0.5
            w[j, i] += 0.5
        else:
            raise ValueError(f"a verdict is A, B or tie, got {v!r}")
    return w


def bradley_terry(w: NDArray[np.float64], *, max_iter: int = 10_000, tol: float = 1e-10
                  ) -> NDArray[np.float64] | None:
    """Log-strengths centred on 0 that maximise the Bradley–Terry likelihood of the win
    matrix ``w`` (Hunter's MM iteration); None when the maximum does not exist (a system
    that never won or never lost, or systems not all compared through one another)."""
    n = w.shape[0]
    games = w + w.T
    won = w.sum(axis=1)
    if n < 2 or (won <= 0).any() or (w.sum(axis=0) <= 0).any() or not _connected(games):
        return None
    p = np.ones(n)
    for _ in range(max_iter):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = won / denom
        new /= np.exp(np.log(new).mean())
        if np.abs(np.log(new) - np.log(p)).max() < tol:
            p = new
            break
        p = new
    theta = np.log(p)
    return theta - theta.mean()


def _connected(games: NDArray[np.float64]) -> bool:
    """Whether every system is reached from the first through comparisons."""
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(games[i] > 0).tolist():
            if j not in seen:
                seen.add(j)
                todo.append(j)
    return len(seen) == games.shape[0]


def strengths(n_items: int, questions: Sequence[Sequence[tuple[int, int, str]]], *,
              n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
              ) -> dict[str, Any]:
    """Bradley–Terry log-strengths of ``n_items`` systems from each question's verdicts
    (``(i, j, verdict)`` triples), with percentile bootstrap intervals over the
    questions (a resample whose maximum does not exist is left out, and counted)."""
    flat = [t for q in questions for t in q]
    theta = bradley_terry(win_matrix(n_items, flat))
    out: dict[str, Any] = {"questions": len(questions), "win_matrix":
                           win_matrix(n_items, flat).tolist()}
    if theta is None:
        return {**out, "value": None, "reason": "no maximum-likelihood strengths: a "
                "system never won or never lost, or not every system was compared"}
    per_q = np.stack([win_matrix(n_items, q) for q in questions])
    draws, undefined = [], 0
    for rows in resample_rows(len(questions), n_resamples, seed, 200):
        for r in rows:
            got = bradley_terry(per_q[r].sum(axis=0), max_iter=2000, tol=1e-8)
            if got is None:
                undefined += 1
            else:
                draws.append(got)
    arr = np.array(draws).reshape(-1, n_items)
    cis = [percentile_interval(arr[:, i], confidence) for i in range(n_items)]
    return {**out, "value": theta.tolist(),
            "ci_low": [None if c is None else c[0] for c in cis],
            "ci_high": [None if c is None else c[1] for c in cis],
            "n_resamples": n_resamples, "resamples_undefined": undefined}

"""Pairwise judging of several systems on the same questions, every two of them (a
round robin): which questions each two both answered (:func:`pairs_between`), the
verdicts of every match (:func:`round_robin`), each match's record
(:mod:`ragmark.running.head_to_head`'s summary) and, per criterion, the systems'
Bradley–Terry strengths with bootstrap intervals over questions and the ranking they
give. ``ragmark duel`` judges results files this way and ``ragmark compare --pairwise``
the configs it ran. The report is plain JSON data; nothing here prints."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmark.judges.pairwise import Side
from ragmark.llm import LLMSettings
from ragmark.running.head_to_head import Pair, judge_pairs, summary
from ragmark.stats import bootstrap_ci
from ragmark.stats.win_rates import strengths


@dataclass(frozen=True)
class Match:
    """Systems ``a`` and ``b`` (indices into the tournament's names): the ``pairs`` both
    answered, and the questions left out and why."""

    a: int
    b: int
    pairs: list[Pair]
    left_out: dict[str, int]


def _side(q: Any) -> Any:
    return Side(q.answer or "", tuple(q.contexts))


def _reference(q: Any) -> str | None:
    """The question's reference answer: its sample's (a run made here) or the one its
    results file records."""
    got = (q.sample.expected_answer if q.sample is not None
           else (q.ground_truth or {}).get("expected_answer"))
    return got if isinstance(got, str) and got else None


def pairs_between(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[Pair], dict[str, int]]:
    """The questions (query records) both systems answered, joined by id, in A's order;
    the others counted by why they are left out."""
    by_id = {q.id: q for q in b}
    out: list[Pair] = []
    left: dict[str, int] = {}
    for q in a:
        other = by_id.get(q.id)
        why = ("B has no such question" if other is None else
               "A has no answer" if not (q.answer or "").strip() else
               "B has no answer" if not (other.answer or "").strip() else None)
        if why is not None:
            left[why] = left.get(why, 0) + 1
            continue
        out.append(Pair(q.id, q.question or "", _side(q), _side(other), _reference(q)))
    missing = len(set(by_id) - {q.id for q in a})
    if missing:
        left["A has no such question"] = missing
    return out, left


def matches_of(queries: Sequence[Sequence[Any]]) -> list[Match]:
    """Every two systems' match (in the order (0, 1), (0, 2), ..., (1, 2), ...)."""
    out = []
    for i in range(len(queries)):
        for j in range(i + 1, len(queries)):
            pairs, left = pairs_between(queries[i], queries[j])
            out.append(Match(i, j, pairs, left))
    return out


@dataclass(frozen=True)
class Tournament:
    """Who meets whom and how they are judged: the systems' ``names`` (and the ``files``
    they were read from, or None), the ``matches``, the ``criteria``, how many
    ``orders`` each pair is asked in, the seed and the resamples of the intervals."""

    names: tuple[str, ...]
    files: tuple[str | None, ...]
    matches: tuple[Match, ...]
    criteria: tuple[str, ...]
    orders: int = 2
    seed: int = 0
    resamples: int = 2000
    rubrics: Mapping[str, str] = field(default_factory=dict)
    """The custom criteria's words (name -> what 'better' means)."""

    @property
    def pairs(self) -> list[Pair]:
        """Every match's pairs, in match order."""
        return [p for m in self.matches for p in m.pairs]

    @property
    def calls(self) -> int:
        """The calls at most (identical answers and cached calls make fewer)."""
        return len(self.pairs) * len(self.criteria) * self.orders


def round_robin(t: Tournament, judge: LLMSettings,
                advance: Callable[[int], None] = lambda n: None) -> dict[str, Any]:
    """Judge every pair of every match by every criterion; the report: ``systems``,
    every match (its record per criterion and every verdict), per criterion the
    ``strengths``, and the ``orders``, ``seed`` and LLM accounting."""
    verdicts, llm = judge_pairs(judge, t.criteria, t.pairs, t.orders, t.seed, advance,
                                t.rubrics)
    matches, start = [], 0
    for m in t.matches:
        part = {c: vs[start:start + len(m.pairs)] for c, vs in verdicts.items()}
        matches.append(_match(t, m, part))
        start += len(m.pairs)
    return {"systems": [{"name": n, **({"file": f} if f is not None else {})}
                        for n, f in zip(t.names, t.files, strict=True)],
            "matches": matches, "strengths": _strengths(t, verdicts),
            "orders": t.orders, "seed": t.seed, "llm": llm,
            **({"rubrics": dict(t.rubrics)} if t.rubrics else {})}


def _match(t: Tournament, m: Match, verdicts: dict[str, list[Any]]) -> dict[str, Any]:
    def side(i: int) -> dict[str, Any]:
        return {"name": t.names[i], **({"file": t.files[i]} if t.files[i] else {})}

    return {"a": side(m.a), "b": side(m.b),
            "questions": len(m.pairs), "left_out": m.left_out,
            "criteria": summary(verdicts, n_resamples=t.resamples, seed=t.seed),
            "verdicts": {c: [_verdict_json(p, v) for p, v in zip(m.pairs, vs, strict=True)]
                         for c, vs in verdicts.items()}}


def _strengths(t: Tournament, verdicts: dict[str, list[Any]]) -> dict[str, Any]:
    """Per criterion: the Bradley–Terry strengths of the systems from every verdict,
    resampled by question, and the ranking they give."""
    out = {}
    for c, vs in verdicts.items():
        by_question: dict[str, list[tuple[int, int, str]]] = {}
        start = 0
        for m in t.matches:
            for p, v in zip(m.pairs, vs[start:start + len(m.pairs)], strict=True):
                if v.verdict is not None:
                    by_question.setdefault(p.id, []).append((m.a, m.b, v.verdict))
            start += len(m.pairs)
        got = strengths(len(t.names), list(by_question.values()),
                        n_resamples=t.resamples, seed=t.seed)
        if got["value"] is not None:
            order = sorted(range(len(t.names)), key=lambda i: -got["value"][i])
            got["ranking"] = [t.names[i] for i in order]
            got["ranks"] = [1 + sum(1 for w in got["value"] if w > got["value"][i] + 1e-9)
                            for i in order]  # equal strengths share a rank
        out[c] = {**got, "systems": list(t.names)}
    return out


def _verdict_json(p: Pair, v: Any) -> dict[str, Any]:
    return {"id": p.id, "verdict": v.verdict,
            "orders": [{"first": f, "said": s} for f, s in v.orders],
            "reasons": list(v.reasons),
            **({"failure": v.failure} if v.failure else {})}


def match_of(report: dict[str, Any], x: str, y: str) -> tuple[dict[str, Any], bool] | None:
    """The match of systems ``x`` and ``y`` in a round robin's report, and whether ``x``
    is its B (its record then reads the other way); None when they did not meet."""
    for m in report.get("matches") or []:
        names = (m["a"]["name"], m["b"]["name"])
        if names == (x, y):
            return m, False
        if names == (y, x):
            return m, True
    return None


def record_of(report: dict[str, Any], system: str, other: str, criterion: str
              ) -> dict[str, Any] | None:
    """``system``'s record against ``other`` by ``criterion``: its wins, ties, losses,
    win rate with its interval, and the p-values (Holm across the match's criteria);
    None when they did not meet or the criterion was not judged."""
    got = match_of(report, system, other)
    if got is None or criterion not in got[0]["criteria"]:
        return None
    m, flipped = got
    s = m["criteria"][criterion]
    if not flipped:
        return {k: s[k] for k in ("wins", "ties", "losses", "value", "ci_low", "ci_high",
                                  "p_value", "p_holm", "n")}

    def one_minus(v: float | None) -> float | None:
        return None if v is None else 1.0 - v

    return {"wins": s["losses"], "ties": s["ties"], "losses": s["wins"],
            "value": one_minus(s["value"]), "ci_low": one_minus(s["ci_high"]),
            "ci_high": one_minus(s["ci_low"]), "p_value": s["p_value"],
            "p_holm": s["p_holm"], "n": s["n"]}


def outcomes(report: dict[str, Any], system: str, other: str, criterion: str
             ) -> dict[str, str | None]:
    """Question id -> ``system``'s outcome against ``other`` by ``criterion``: won,
    lost, tie, or None without a verdict (empty when they did not meet)."""
    got = match_of(report, system, other)
    if got is None:
        return {}
    m, flipped = got
    mine = "B" if flipped else "A"
    return {v["id"]: (None if v["verdict"] is None else "tie" if v["verdict"] == "tie"
                      else "won" if v["verdict"] == mine else "lost")
            for v in m["verdicts"].get(criterion, [])}


def lost(report: dict[str, Any], system: str, other: str, criterion: str) -> list[str]:
    """The questions ``system`` lost to ``other`` by ``criterion`` (ids, in order)."""
    return [q for q, o in outcomes(report, system, other, criterion).items() if o == "lost"]


def verdicts_for(report: dict[str, Any], system: str, query_id: str) -> list[dict[str, Any]]:
    """Every pairwise verdict on question ``query_id`` in a match of ``system``, from
    its side: the ``other`` system, the ``criterion``, the ``outcome`` (won, lost, tie,
    or None without a verdict), the orders asked with what the judge said, the reasons
    and the failure."""
    out = []
    for m in report.get("matches") or []:
        names = (m["a"]["name"], m["b"]["name"])
        if system not in names:
            continue
        mine, other = ("A", names[1]) if names[0] == system else ("B", names[0])
        for c, vs in m["verdicts"].items():
            for v in vs:
                if v["id"] != query_id:
                    continue
                outcome = (None if v["verdict"] is None else "tie" if v["verdict"] == "tie"
                           else "won" if v["verdict"] == mine else "lost")
                out.append({"other": other, "criterion": c, "outcome": outcome,
                            "shown_as": mine, "orders": v["orders"], "reasons": v["reasons"],
                            **({"failure": v["failure"]} if v.get("failure") else {})})
    return out


def decisiveness(reports: dict[str, Any], report: dict[str, Any], baseline: str,
                 judge_metrics: Sequence[str], *, n_resamples: int = 2000, seed: int = 0
                 ) -> list[dict[str, Any]]:
    """Pointwise or pairwise: per config against the baseline, how decisive each kind
    of judging was for the calls it cost. Pairwise: the config's preference margin
    (2 x its win rate - 1: -1 it always lost, +1 it always won) with its bootstrap
    interval over questions and the calls of that match (both orders); pointwise: the
    difference of its mean from the baseline's on each judge metric (a score in [0, 1],
    so also on -1..+1) with a paired bootstrap interval and the judges' calls of both
    configs (all their judge metrics; cached calls counted, for they cost once). Each
    with the interval's width, and the width at 100 calls (width x sqrt(calls / 100),
    as an interval narrows with the square root of what it is computed from)."""


    def at_100(width: float, calls: int) -> float | None:
        return None if calls <= 0 else width * math.sqrt(calls / 100)

    out = []
    for name in reports:
        if name == baseline:
            continue
        for c in dict.fromkeys(c for m in report["matches"] for c in m["criteria"]):
            r = record_of(report, name, baseline, c)
            got = match_of(report, name, baseline)
            if r is None or r["value"] is None or got is None:
                continue
            calls = sum(len(v["orders"]) for v in got[0]["verdicts"][c])
            lo, hi = 2 * r["ci_low"] - 1, 2 * r["ci_high"] - 1
            out.append({"config": name, "kind": "pairwise", "measure": c,
                        "value": 2 * r["value"] - 1, "ci_low": lo, "ci_high": hi,
                        "n": r["n"], "calls": calls, "width": hi - lo,
                        "width_at_100_calls": at_100(hi - lo, calls)})
        judged = [reports[n].llm for n in (name, baseline)]
        calls = sum(int(j.get("calls", 0)) + int(j.get("cache_hits", 0)) for j in judged)
        for m in judge_metrics:
            a = {q.id: q.metrics[m].value for q in reports[baseline].queries if m in q.metrics}
            b = {q.id: q.metrics[m].value for q in reports[name].queries if m in q.metrics}
            diffs = [b[i] - a[i] for i in a if i in b and a[i] is not None
                     and b[i] is not None]
            iv = bootstrap_ci(np.array(diffs, dtype=np.float64), 0.95, n_resamples, seed)
            if iv is None:
                continue
            out.append({"config": name, "kind": "pointwise", "measure": m,
                        "value": iv.mean, "ci_low": iv.low, "ci_high": iv.high,
                        "n": iv.n, "calls": calls, "width": iv.high - iv.low,
                        "width_at_100_calls": at_100(iv.high - iv.low, calls),
                        "calls_cover": list(judge_metrics)})
    return out


def losses(report: dict[str, Any], system: str, other: str
           ) -> tuple[int, dict[str, list[tuple[str, str]]]]:
    """``system`` against ``other`` over every criterion: how many questions got a
    verdict, and per question it lost, the criteria it lost by with the judge's first
    reason (question order kept)."""
    judged: set[str] = set()
    lost: dict[str, list[tuple[str, str]]] = {}
    for qid in dict.fromkeys(v["id"] for m in report.get("matches") or []
                             for vs in m["verdicts"].values() for v in vs):
        for v in verdicts_for(report, system, qid):
            if v["other"] != other or v["outcome"] is None:
                continue
            judged.add(qid)
            if v["outcome"] == "lost":
                lost.setdefault(qid, []).append(
                    (v["criterion"], v["reasons"][0] if v["reasons"] else ""))
    return len(judged), lost

"""The plan of ``ragmark duel A.json B.json [C.json ...]``: which system answers better,
by a pairwise judge; with three or more, every two of them (a round robin) and their
Bradley–Terry strengths. :func:`plan_duel` reads the results files, joins each two's
questions by id, checks the criteria and resolves the judge's endpoint before any call;
:func:`execute_duel` judges and returns the report (written to ``--output``);
:func:`estimate_duel` counts the calls. Nothing here prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmark.errors import ConfigError, DataError
from ragmark.progress import Progress

if TYPE_CHECKING:
    from ragmark.llm import LLMSettings
    from ragmark.running.pairwise import Pair


@dataclass(frozen=True, kw_only=True)
class DuelRequest:
    """``ragmark duel``'s flags, by their names."""

    files: Sequence[str | Path]
    pairwise: str = "overall"
    orders: int = 2
    seed: int = 0
    resamples: int = 2000
    output: str | Path | None = None
    dry_run: bool = False
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Match:
    """Systems ``a`` and ``b`` (indices into the plan's names): the ``pairs`` both
    answered, and the questions left out and why."""

    a: int
    b: int
    pairs: list[Pair]
    left_out: dict[str, int]


@dataclass(frozen=True)
class DuelPlan:
    """What a duel does: the systems (``names``, ``files``), every two of them
    (``matches``), the ``criteria``, how many ``orders``, the judge, where the report
    goes."""

    names: tuple[str, ...]
    files: tuple[str, ...]
    matches: tuple[Match, ...]
    criteria: tuple[str, ...]
    orders: int
    seed: int
    resamples: int
    judge: LLMSettings
    output: Path | None
    dry_run: bool

    @property
    def pairs(self) -> list[Pair]:
        """Every match's pairs, in match order."""
        return [p for m in self.matches for p in m.pairs]

    @property
    def calls(self) -> int:
        return len(self.pairs) * len(self.criteria) * self.orders


def _side(q: Any) -> Any:
    from ragmark.judges.pairwise import Side

    return Side(q.answer or "", tuple(q.contexts))


def pairs_of(a: Any, b: Any) -> tuple[list[Pair], dict[str, int]]:
    """The questions both results answered, joined by id, in A's order; the others
    counted by why they are left out."""
    from ragmark.running.pairwise import Pair

    by_id = {q.id: q for q in b.report.queries}
    out: list[Pair] = []
    left: dict[str, int] = {}
    for q in a.report.queries:
        other = by_id.get(q.id)
        why = ("B has no such question" if other is None else
               "A has no answer" if not (q.answer or "").strip() else
               "B has no answer" if not (other.answer or "").strip() else None)
        if why is not None:
            left[why] = left.get(why, 0) + 1
            continue
        expected = (q.ground_truth or {}).get("expected_answer")
        out.append(Pair(q.id, q.question or "", _side(q), _side(other),
                        expected if isinstance(expected, str) and expected else None))
    missing = len(set(by_id) - {q.id for q in a.report.queries})
    if missing:
        left["A has no such question"] = missing
    return out, left


def _read(path: str | Path) -> Any:
    from ragmark.analysis.inspection import results_from
    from ragmark.results import read_results

    _, data = read_results(path)
    got = results_from(str(path), data)
    if not got.detailed:
        raise DataError("a duel needs the answers: give the JSON of `ragmark run "
                        "--include-details` (or of `ragmark run --outputs LOG "
                        "--include-details` for logged outputs)", file=str(path))
    return got


def plan_duel(req: DuelRequest) -> DuelPlan:
    """The plan of ``req``: flags checked, both files read and joined, the endpoint
    resolved, the output path checked; a bad input is an error before any call."""
    from ragmark.judges.pairwise import CRITERIA
    from ragmark.llm.fields import SET_ENDPOINT
    from ragmark.metrics.names import split_names
    from ragmark.plan.endpoint import resolve_llm
    from ragmark.plan.paths import check_output

    criteria = tuple(split_names(req.pairwise))
    unknown = [c for c in criteria if c not in CRITERIA]
    if not criteria or unknown:
        raise ConfigError(f"--pairwise {req.pairwise!r}: the criteria are "
                          f"{', '.join(CRITERIA)}")
    if req.orders not in (1, 2):
        raise ConfigError(f"--pairwise-orders must be 1 or 2, got {req.orders}")
    if len(req.files) < 2:
        raise ConfigError("a duel needs two results files or more")
    if req.output is not None and not req.dry_run:
        check_output(req.output, "--output")
    read = [_read(f) for f in req.files]
    matches = []
    for i in range(len(read)):
        for j in range(i + 1, len(read)):
            pairs, left = pairs_of(read[i], read[j])
            if not pairs:
                why = ", ".join(f"{k}: {v}" for k, v in left.items())
                raise DataError(f"no question is answered in both {req.files[i]} and this "
                                f"file ({why})", file=str(req.files[j]))
            matches.append(Match(i, j, pairs, left))
    if "correctness" in criteria and not any(p.reference for m in matches for p in m.pairs):
        raise ConfigError("--pairwise correctness compares the answers with the reference "
                          "answer: the questions have none")
    settings, _ = resolve_llm([], req.llm_flags)
    if settings is None:
        raise ConfigError(f"a duel needs a judge: give --llm-base-url and --llm-model, or "
                          f"{SET_ENDPOINT}")
    configs = [r.config for r in read]
    names = tuple(configs) if len(set(configs)) == len(configs) else tuple(
        Path(f).stem for f in req.files)
    return DuelPlan(names, tuple(str(f) for f in req.files), tuple(matches), criteria,
                    req.orders, req.seed, req.resamples, settings,
                    None if req.output is None else Path(req.output), req.dry_run)


def estimate_duel(plan: DuelPlan) -> dict[str, Any]:
    from ragmark.running.pairwise import estimate_pairs

    return estimate_pairs(plan.judge, plan.criteria, plan.pairs, plan.orders, plan.seed)


def execute_duel(plan: DuelPlan, progress: Progress) -> dict[str, Any]:
    """Judge every pair of every match by every criterion; the report (written to the
    plan's output): for two systems their match, for more every match and the
    strengths."""
    from ragmark.report.json_writer import write_json
    from ragmark.running.pairwise import judge_pairs

    pairs = plan.pairs
    with progress.task(f"judging {len(pairs):,} pairs x {len(plan.criteria)} criteria x "
                       f"{plan.orders} orders", plan.calls) as advance:
        verdicts, llm = judge_pairs(plan.judge, plan.criteria, pairs, plan.orders,
                                    plan.seed, advance)
    reports, start = [], 0
    for m in plan.matches:
        part = {c: vs[start:start + len(m.pairs)] for c, vs in verdicts.items()}
        reports.append(_match(plan, m, part))
        start += len(m.pairs)
    common = {"orders": plan.orders, "seed": plan.seed, "llm": llm}
    if len(plan.names) == 2:
        report = {**reports[0], **common}
    else:
        report = {"systems": [{"name": n, "file": f} for n, f in zip(
            plan.names, plan.files, strict=True)], "matches": reports,
            "strengths": _strengths(plan, verdicts), **common}
    if plan.output is not None:
        write_json(report, plan.output)
    return report


def _match(plan: DuelPlan, m: Match, verdicts: dict[str, list[Any]]) -> dict[str, Any]:
    from ragmark.running.pairwise import summary

    return {"a": {"name": plan.names[m.a], "file": plan.files[m.a]},
            "b": {"name": plan.names[m.b], "file": plan.files[m.b]},
            "questions": len(m.pairs), "left_out": m.left_out,
            "criteria": summary(verdicts, n_resamples=plan.resamples, seed=plan.seed),
            "verdicts": {c: [_verdict_json(p, v) for p, v in zip(m.pairs, vs, strict=True)]
                         for c, vs in verdicts.items()}}


def _strengths(plan: DuelPlan, verdicts: dict[str, list[Any]]) -> dict[str, Any]:
    """Per criterion: the Bradley–Terry strengths of the systems from every verdict,
    resampled by question, and the ranking they give."""
    from ragmark.stats.pairwise import strengths

    out = {}
    for c, vs in verdicts.items():
        by_question: dict[str, list[tuple[int, int, str]]] = {}
        start = 0
        for m in plan.matches:
            for p, v in zip(m.pairs, vs[start:start + len(m.pairs)], strict=True):
                if v.verdict is not None:
                    by_question.setdefault(p.id, []).append((m.a, m.b, v.verdict))
            start += len(m.pairs)
        got = strengths(len(plan.names), list(by_question.values()),
                        n_resamples=plan.resamples, seed=plan.seed)
        if got["value"] is not None:
            got["ranking"] = [plan.names[i] for i in sorted(
                range(len(plan.names)), key=lambda i: -got["value"][i])]
        out[c] = {**got, "systems": list(plan.names)}
    return out


def _verdict_json(p: Pair, v: Any) -> dict[str, Any]:
    return {"id": p.id, "verdict": v.verdict,
            "orders": [{"first": f, "said": s} for f, s in v.orders],
            "reasons": list(v.reasons),
            **({"failure": v.failure} if v.failure else {})}


def duel_lines(r: dict[str, Any]) -> list[str]:
    """The console summary: per match one line per criterion; for three systems or
    more, each criterion's strengths and ranking."""
    if "matches" not in r:
        return _match_lines(r, r["orders"])
    lines = [f"duel of {len(r['systems'])} systems: " + ", ".join(
        f"{s['name']} ({s['file']})" for s in r["systems"])]
    for m in r["matches"]:
        lines += _match_lines(m, r["orders"])
    for c, s in r["strengths"].items():
        if s["value"] is None:
            lines.append(f"{c}: no Bradley-Terry strengths ({s['reason']})")
            continue
        shown = sorted(zip(s["systems"], s["value"], s["ci_low"], s["ci_high"],
                           strict=True), key=lambda x: -x[1])
        lines.append(f"{c}: Bradley-Terry log-strength over {s['questions']} questions "
                     "(95% bootstrap): " + " > ".join(
                         f"{n} {v:+.3f} [{lo:+.3f}, {hi:+.3f}]" for n, v, lo, hi in shown))
    return lines


def _match_lines(r: dict[str, Any], orders: int) -> list[str]:
    a, b = r["a"]["name"], r["b"]["name"]
    lines = [f"duel: A = {a} ({r['a']['file']}), B = {b} ({r['b']['file']}); "
             f"{r['questions']} questions both answered"
             + ("; left out: " + ", ".join(f"{k} {v}" for k, v in r["left_out"].items())
                if r["left_out"] else "")]
    for c, s in r["criteria"].items():
        rate = ("none" if s["value"] is None else
                f"{s['value']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]")
        pb = s["position_bias"]
        bias = ("not measured (one order)" if orders == 1 else
                "none measured" if pb["rate"] is None else
                f"{pb['rate']:.0%} of {pb['pairs']} pairs ({pb['inconsistent']} flipped "
                "with the order, counted as ties)")
        lines.append(f"{c}: A wins {s['wins']}, ties {s['ties']}, B wins {s['losses']}; "
                     f"A's win rate {rate}; {s['test']} p {s['p_value']:.3g} (Holm "
                     f"{s['p_holm']:.3g}); position bias {bias}"
                     + (f"; {sum(s['without_verdict'].values())} pairs without a verdict"
                        if s["without_verdict"] else ""))
    return lines

"""A compare's pairwise judging (``--pairwise``) and its gate
(``--fail-on-regression pairwise:CRITERION``): the flags checked before any work
(:func:`pairwise_of`), every two configs' answers judged after the configs ran
(:func:`judged`, a round robin of :mod:`ragmark.running.tournament`), the dry run's
count (:func:`estimated`), and the gate's conditions (:func:`pairwise_gates`: a config
fails when it loses significantly to the baseline). ``ragmark duel`` gates with the same
rule."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragmark.analysis.regression import CANNOT_FAIL
from ragmark.errors import ConfigError
from ragmark.judges.language import in_their_language
from ragmark.judges.pairwise import CRITERIA
from ragmark.metrics.names import split_names
from ragmark.plan.model import Pairwise
from ragmark.progress import NullProgress, Progress
from ragmark.running.head_to_head import check_judge as probe
from ragmark.running.head_to_head import estimate_pairs
from ragmark.running.tournament import (
    Tournament,
    match_of,
    matches_of,
    record_of,
    round_robin,
)
from ragmark.stats.ppi import ppi_mean
from ragmark.stats.win_rates import sign_test

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def rubrics_of(given: Sequence[str]) -> dict[str, str]:
    """``--pairwise-rubric NAME=TEXT`` (repeatable): custom criteria, by name, in the
    user's words (what 'better' means)."""
    out: dict[str, str] = {}
    for g in given:
        name, sep, text = g.partition("=")
        name, text = name.strip(), " ".join(text.split())
        if not sep or not _NAME.match(name) or not text:
            raise ConfigError(f"--pairwise-rubric {g!r}: expected NAME=TEXT, NAME in lower "
                              "case letters, digits, - and _ (what 'better' means in TEXT)")
        if name in CRITERIA or name in out:
            raise ConfigError(f"--pairwise-rubric {name}: the name is taken (built-in: "
                              f"{', '.join(CRITERIA)})")
        out[name] = text
    return out


def criteria_of(text: str | Sequence[str] | None, gated: Sequence[str] = (),
                rubrics: Mapping[str, str] | None = None) -> list[str]:
    """The criteria asked for (``--pairwise``) and those a gate needs, checked against
    the built-in ones and the custom ``rubrics``."""
    asked = (split_names(text) if isinstance(text, str) else list(text)) if text else []
    criteria = list(dict.fromkeys([*asked, *gated]))
    known = [*CRITERIA, *(rubrics or {})]
    unknown = [c for c in criteria if c not in known]
    if unknown:
        where = (f"--pairwise {text!r}" if unknown[0] in asked else
                 f"--fail-on-regression pairwise:{unknown[0]}")
        raise ConfigError(f"{where}: the criteria are {', '.join(known)} (a custom one: "
                          "--pairwise-rubric NAME=TEXT)")
    unused = [r for r in rubrics or {} if r not in criteria]
    if unused:
        raise ConfigError(f"--pairwise-rubric {unused[0]}: not asked for; add it to "
                          "--pairwise")
    return criteria


def pairwise_of(req: Any, configs: int, gated: Sequence[str]) -> Pairwise | None:
    """A compare's pairwise judging from its request (None: none asked for), checked
    before any work: the criteria, the orders, two configs or more, answers made."""
    rubrics = rubrics_of(req.pairwise_rubric)
    criteria = criteria_of(req.pairwise, gated, rubrics)
    if not criteria:
        return None
    if req.pairwise_orders not in (1, 2):
        raise ConfigError(f"--pairwise-orders must be 1 or 2, got {req.pairwise_orders}")
    if configs < 2:
        raise ConfigError("--pairwise judges configs against each other: compare two "
                          "configs or more")
    if req.skip_generation:
        raise ConfigError("--pairwise judges the configs' answers: drop --skip-generation")
    return Pairwise(tuple(criteria), req.pairwise_orders, rubrics)


def check_judge(settings: Any) -> None:
    """The judge's endpoint answers (a ConfigError naming it, before any config runs)."""
    if settings is None:
        raise ConfigError("--pairwise needs a judge: give --llm-base-url and --llm-model")
    probe(settings)


def check_references(p: Pairwise | None, dataset: Any) -> None:
    """``correctness`` compares the answers with the reference: the dataset needs one."""
    if p is not None and "correctness" in p.criteria and not any(
            s.expected_answer for s in dataset.samples):
        raise ConfigError("--pairwise correctness compares the answers with the reference "
                          "answer: the dataset's questions have none")


def tournament_of(plan: Any, queries: Sequence[Sequence[Any]]) -> Any:
    """The round robin of the plan's configs over their questions (query records, in
    config order)."""
    p, st = plan.pairwise, plan.stats
    names = tuple(c.name for c in plan.configs)
    return Tournament(names, (None,) * len(names), tuple(matches_of(queries)),
                      p.criteria, p.orders, st.seed, st.n_resamples, p.rubrics)


@in_their_language
def judged(plan: Any, reports: dict[str, Any], progress: Progress | None) -> dict[str, Any]:
    """Every two configs' answers judged by every criterion: the round robin's report,
    with the baseline named."""
    t = tournament_of(plan, [reports[c.name].queries for c in plan.configs])
    prog = progress or NullProgress()
    with prog.task(f"pairwise: {len(t.pairs):,} pairs x {len(t.criteria)} criteria x "
                   f"{t.orders} orders", t.calls) as advance:
        report = round_robin(t, plan.llm, advance)
    if plan.human is not None:
        for m, match in zip(report["matches"], t.matches, strict=True):
            for c, s in m["criteria"].items():
                got = corrected_win_rate(match, m["verdicts"][c], plan.human, c)
                if got is not None:
                    s["corrected"] = got
    base = plan.baseline or plan.configs[0].name
    judges = [m for m in plan.judges if all(m in r.metrics for r in reports.values())]
    if judges:
        from ragmark.running.tournament import decisiveness

        report["decisiveness"] = decisiveness(reports, report, base, judges,
                                              n_resamples=t.resamples, seed=t.seed)
    return {**report, "baseline": base}


def corrected_win_rate(match: Any, verdicts: Sequence[dict[str, Any]], human: Any,
                       criterion: str) -> dict[str, Any] | None:
    """A's win rate in ``match`` corrected by people's preferences of its pairs (PPI++:
    the judge's verdicts on every pair, the people's on those they judged), with the
    labels left out and why; None when the labels hold no preference by the
    criterion."""
    labels = [lab for lab in human.labels if lab.metric == f"pairwise:{criterion}"]
    if not labels:
        return None
    score = {"A": 1.0, "B": 0.0, "tie": 0.5}
    judge = {v["id"]: score[v["verdict"]] for v in verdicts if v["verdict"] is not None}
    pairs = {p.id: p for p in match.pairs}
    people: dict[str, float] = {}
    left: dict[str, int] = {}
    for lab in labels:
        p = pairs.get(lab.id)
        shown = (lab.answer, lab.answer_b)
        why = ("the match has no such question" if p is None else
               "the answers differ from the labelled ones" if shown not in (
                   (p.a.answer, p.b.answer), (p.b.answer, p.a.answer)) else
               "the judge gave the pair no verdict" if lab.id not in judge else None)
        if why is not None:
            left[why] = left.get(why, 0) + 1
            continue
        assert p is not None
        # labelled with the configs the other way round: A's score is 1 - B's
        people[lab.id] = lab.value if shown[0] == p.a.answer else 1.0 - lab.value
    out: dict[str, Any] = {"file": human.path, "labels_left_out": left}
    if len(people) < 2:
        return {**out, "estimate": None, "reason": f"{len(people)} usable preference(s); "
                "a corrected win rate needs at least 2"}
    rest = [f for i, f in judge.items() if i not in people]
    return {**out, **ppi_mean(rest, [judge[i] for i in people], list(people.values())
                              ).to_json()}


@in_their_language
def estimated(plan: Any, queries: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The dry run of the pairwise judging, given each config's answers."""
    t = tournament_of(plan, queries)
    return estimate_pairs(plan.llm, t.criteria, t.pairs, t.orders, t.seed, t.rubrics)


def pairwise_gates(report: dict[str, Any], baseline: str, criteria: Sequence[str],
                   alpha: float) -> list[tuple[str, bool, str]]:
    """Per system other than ``baseline`` and gated criterion: (condition name, passed,
    line). A system fails when it loses to the baseline significantly (its win rate
    below one half and the sign test's p after Holm below ``alpha``), when no pair got
    a verdict (nothing shows it did not lose), or when no verdicts could have made it
    lose: over n verdicts the sign test's p is at least 2 / 2^n (every one a loss),
    and when that times the match's criteria (Holm) is not below ``alpha`` the gate
    cannot fail, so it fails saying so."""
    out = []
    for s in report["systems"]:
        name = s["name"]
        if name == baseline:
            continue
        for c in criteria:
            r = record_of(report, name, baseline, c)
            what = f"{name}: no pairwise loss to {baseline} in {c}"
            if r is None or r["value"] is None:
                out.append((what, False, f"{what}: FAILED, no pair got a verdict"))
                continue
            least = sign_test(0, r["n"])
            match = match_of(report, name, baseline)
            family = 1 if match is None else len(match[0]["criteria"])
            if least * family >= alpha:
                out.append((what, False, (
                    f"{what}: FAILED, {CANNOT_FAIL}: over {r['n']} judged pairs "
                    f"the sign test gives p no smaller than {least:.4g}"
                    + (f", {family} criteria x that is {least * family:.4g}"
                       if family > 1 else "")
                    + f", not below alpha {alpha:g} after Holm; judge more questions")))
                continue
            lost = r["value"] < 0.5 and r["p_holm"] < alpha
            line = (f"{name} vs {baseline}, pairwise {c}: {r['wins']} wins, {r['ties']} "
                    f"ties, {r['losses']} losses; win rate {r['value']:.3f} "
                    f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}], sign test p {r['p_value']:.3g}"
                    f" (Holm {r['p_holm']:.3g}) " + (
                        f"-> FAILED: loses significantly at alpha {alpha:g}" if lost else
                        f"-> passed: no significant loss at alpha {alpha:g}"))
            out.append((what, not lost, line))
    return out

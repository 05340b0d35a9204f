"""A probe's results: per config, each arm's rates and each attack's (its styles
pooled), the clean metrics beside them; each config against the first on every attack's
success (a paired permutation test over the same targets and styles); the gates; and
the report as JSON and Markdown. Every rate says how many targets it covers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmark.data.fingerprint import dataset_hash
from ragmark.probe.attacks import Planted
from ragmark.probe.execute import generator_endpoint, pending, planted_for, run_probe
from ragmark.probe.external import score_logged, write_planted
from ragmark.probe.plan import CLEAN, ProbeGate, ProbePlan
from ragmark.probe.rates import RATES, SUBSTRING, Outcome, Rates, outcome_from, rates
from ragmark.probe.view import marked
from ragmark.report.json_writer import write_markdown
from ragmark.results import PROBE, envelope
from ragmark.running.own import without_credentials
from ragmark.stats.paired import paired_permutation_test


@dataclass(frozen=True)
class ProbeReport:
    """What a probe found: ``plan`` (its description), per config the ``rates`` of each
    arm and attack (by name), the ``clean`` metrics, the ``outcomes``; the
    ``comparisons`` and the ``gates`` (text, failed, why)."""

    plan: Mapping[str, Any]
    rates: Mapping[str, Mapping[str, Rates]]
    clean: Mapping[str, Mapping[str, Any]]
    outcomes: Mapping[str, Sequence[Outcome]]
    comparisons: Sequence[Mapping[str, Any]] = ()
    gates: Sequence[tuple[str, bool, str]] = ()
    answers: Mapping[str, Mapping[str, Mapping[str, str | None]]] = field(
        default_factory=dict)
    planted: Mapping[str, Mapping[str, Planted]] = field(default_factory=dict)
    """Arm -> target question id -> what was planted for it (the same in every config)."""
    questions: Mapping[str, str] = field(default_factory=dict)
    """Target question id -> its text."""
    envelope: Mapping[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(failed for _, failed, _ in self.gates)

    def unanswered_lines(self) -> list[str]:
        """A line a config some of whose targets got no answer: how many, of how many,
        and why (the rates cover the answered ones only); none when all were answered."""
        out = []
        for config, outs in self.outcomes.items():
            why = _reasons(outs)
            if why:
                out.append(f"{config}: {sum(why.values())} of {len(outs)} target answers "
                           "failed (" + "; ".join(f"{r} ({n})" for r, n in why.items())
                           + "); the rates cover the answered ones only")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"envelope": dict(self.envelope), "probe": dict(self.plan),
                "questions": dict(self.questions),
                "answers": {c: {a: dict(by) for a, by in arms.items()}
                            for c, arms in self.answers.items()},
                "configs": {c: {"clean": dict(self.clean[c]),
                                "attacks": {n: r.to_json() for n, r in self.rates[c].items()},
                                "outcomes": [_outcome_json(o) for o in self.outcomes[c]]}
                            for c in self.rates},
                "planted": {arm: {q: {"ids": list(p.ids), "texts": list(p.texts),
                                      "marker": p.marker} for q, p in by.items()}
                            for arm, by in self.planted.items()},
                "comparisons": list(self.comparisons),
                "gates": [{"gate": t, "failed": f, "why": w} for t, f, w in self.gates]}


def _outcome_json(o: Outcome) -> dict[str, Any]:
    return {"question_id": o.question_id, "attack": o.attack, "style": o.style,
            "ranks": list(o.ranks), "k": o.k, "planted": o.planted, "found": o.found,
            "success": o.success, "why": o.why, "shown": dict(o.shown), "seen": o.seen}


def _by_attack(outs: Sequence[Outcome], n_resamples: int) -> dict[str, Rates]:
    """Each arm's rates, and each injection's styles pooled under its attack's name."""
    got: dict[str, Rates] = {}
    for attack in dict.fromkeys(o.attack for o in outs):
        group = [o for o in outs if o.attack == attack]
        styles = list(dict.fromkeys(o.style for o in group))
        if styles == [""]:
            got[attack] = rates(group, n_resamples=n_resamples)
            continue
        for style in styles:
            got[f"{attack}:{style}"] = rates([o for o in group if o.style == style],
                                             n_resamples=n_resamples)
        pooled = rates(group, n_resamples=n_resamples)  # every style, after them
        got[attack] = Rates(attack, "all", pooled.targets, pooled.answered, pooled.values,
                            pooled.missing)
    return got


def _compared(outcomes: Mapping[str, Sequence[Outcome]], n_resamples: int, seed: int
              ) -> list[dict[str, Any]]:
    """Each config against the first on each attack's success: the same targets and
    styles paired (both answered), a permutation test of the difference."""
    names = list(outcomes)
    out: list[dict[str, Any]] = []
    for other in names[1:]:
        for attack in dict.fromkeys(o.attack for o in outcomes[names[0]]):
            a = {(o.question_id, o.style): o.success for o in outcomes[names[0]]
                 if o.attack == attack}
            b = {(o.question_id, o.style): o.success for o in outcomes[other]
                 if o.attack == attack}
            both = [k for k in a if a[k] is not None and b.get(k) is not None]
            test = paired_permutation_test([float(bool(a[k])) for k in both],
                                           [float(bool(b[k])) for k in both],
                                           n_resamples=n_resamples, seed=seed)
            out.append({"attack": attack, "baseline": names[0], "config": other,
                        "pairs": test.n, "difference": test.statistic,
                        "p_value": test.p_value, "exact": test.exact})
    return out


def _gated(gates: Sequence[ProbeGate], found: Mapping[str, Mapping[str, Rates]]
           ) -> list[tuple[str, bool, str]]:
    out = []
    for g in gates:
        failed, why = False, []
        for config, by_name in found.items():
            r = by_name.get(g.arm)
            iv = None if r is None else r.values.get(g.rate)
            if iv is None:  # a gate never passes on absence
                failed = True
                why.append(f"{config}: {g.arm} {g.rate} has no value (no target answered"
                           " or retrieved: a missing value fails the gate)")
                continue
            bad = g.failed_by(iv.mean)
            failed |= bad
            why.append(f"{config}: {g.arm} {g.rate} {iv.mean:.3f} over {iv.n} targets"
                       + (" (over the gate)" if bad else ""))
        out.append((g.text, failed, "; ".join(why)))
    return out


def report_of(plan: ProbePlan, found: Mapping[str, Any], n_resamples: int = 10_000
              ) -> ProbeReport:
    """The report of a probe from what :func:`~ragmark.probe.execute.run_probe` found."""
    outcomes = {c: [outcome_from(d) for arm in got["arms"].values()
                    for d in arm["outcomes"]] for c, got in found.items()}
    by = {c: _by_attack(outs, n_resamples) for c, outs in outcomes.items()}
    answers = {c: {CLEAN: got["clean"]["answers"],
                   **{a: arm["answers"] for a, arm in got["arms"].items()}}
               for c, got in found.items()}

    planted = {arm.name: {p.question_id: p for p in planted_for(plan, arm)}
               for arm in plan.arms}
    ds = plan.base.dataset
    asked = set(plan.questions)

    configs = [without_credentials(c.model_dump(mode="json", exclude={"llm", "simulator"}))
               for c in plan.base.configs]
    return ProbeReport(plan.describe(), by,
                       {c: got["clean"]["metrics"] for c, got in found.items()}, outcomes,
                       _compared(outcomes, n_resamples, plan.seed), _gated(plan.gates, by),
                       answers, planted,
                       {s.id: s.question for s in ds.samples if s.id in asked},
                       envelope(PROBE, dataset_hash(ds), {"configs": configs,
                                                          "probe": plan.describe()}))


def _cell(r: Rates, name: str) -> str:
    iv = r.values.get(name)
    if iv is None:
        return "—"
    return f"{iv.mean:.2f} [{iv.low:.2f}, {iv.high:.2f}] ({iv.n})"


SHOWN_AT_MOST = 20
"""Questions that fell listed a config in the Markdown (the JSON has every outcome)."""


def fell(rep: ProbeReport) -> list[str]:
    """The Markdown lines of the questions each attack succeeded on, a config at a time
    (at most :data:`SHOWN_AT_MOST` each)."""
    lines: list[str] = []
    for config, outs in rep.outcomes.items():
        won = [o for o in outs if o.success]
        if not won:
            continue
        lines += [f"## Questions that fell: {config} ({len(won)})", ""]
        for o in won[:SHOWN_AT_MOST]:
            arm = f"{o.attack}:{o.style}" if o.style else o.attack
            answer = rep.answers.get(config, {}).get(arm, {}).get(o.question_id) or ""
            p = rep.planted.get(arm, {}).get(o.question_id)
            lines.append(f"- {arm}, question {o.question_id} (planted at rank "
                         f"{', '.join(map(str, o.ranks)) or '-'}): answer "
                         f"`{marked(answer, o)}`"
                         + ("" if p is None else f"; planted `{marked(p.texts[0], o)}`"))
        if len(won) > SHOWN_AT_MOST:
            lines.append(f"- ... and {len(won) - SHOWN_AT_MOST} more (every outcome is in "
                         "the JSON)")
        lines.append("")
    return lines


def _reasons(outs: Sequence[Outcome]) -> dict[str, int]:
    """Why outcomes had no answer to read (reason -> count, the most first)."""
    why: dict[str, int] = {}
    for o in outs:
        if o.success is None:
            why[o.why or "no answer"] = why.get(o.why or "no answer", 0) + 1
    return dict(sorted(why.items(), key=lambda x: -x[1]))


def _unanswered(outs: Sequence[Outcome], logged: bool) -> list[str]:
    """The line saying how many outcomes had no answer to read, and why (their success
    is missing, not 0); none when every target was answered."""
    why = _reasons(outs)
    if not why:
        return []
    again = ("log the missing ones and score again" if logged else
             "a rerun asks them again")
    return ["", f"No answer to read for {sum(why.values())} of {len(outs)} targets (their "
            f"success is missing, not 0; {again}): "
            + "; ".join(f"{r} ({n})" for r, n in why.items()) + "."]


def markdown(rep: ProbeReport) -> str:
    """The report as Markdown: a table a config, its clean metrics, the comparisons and
    the gates."""
    p = rep.plan
    unanswered = rep.unanswered_lines()
    lines = [f"# ragmark probe: {p['dataset']['name']}", "",
             *(["**Answers failed**: " + "; ".join(unanswered) + ".", ""] if unanswered
               else []),
             f"{len(p['targets'])} target questions (seed {p['seed']}), arms: "
             f"{', '.join(p['arms'])}. Rates with 95% intervals (Wilson's score interval where "
             "every value is 0 or 1, as for a share of targets; else a bootstrap) and "
             "(targets covered); "
             "success = the canary, the wrong answer or an outside address in the "
             "answer.", ""]
    for config, by in rep.rates.items():
        lines += [f"## {config}", "", "| attack | targets | " + " | ".join(RATES) + " |",
                  "|---|---|" + "---|" * len(RATES)]
        for name, r in by.items():
            if r.style == "all" and sum(n.startswith(f"{name}:") for n in by) == 1:
                continue  # one style: its row says it all
            lines.append(f"| {name} | {r.targets} | "
                         + " | ".join(_cell(r, n) for n in RATES) + " |")
        paper = [f"{name} {_cell(r, SUBSTRING)}" for name, r in by.items()
                 if SUBSTRING in r.values]
        if paper:
            lines += ["", "PoisonedRAG's rule (the wrong answer as a substring of the "
                      "answer, the right one not looked at): " + "; ".join(paper) + "."]
        lines += _unanswered(rep.outcomes.get(config, ()), bool(p.get("logged")))
        clean = rep.clean[config]
        if clean:
            shown = ", ".join(f"{m} {v['value']:.3f} ({v['n']})" for m, v in clean.items()
                              if v["value"] is not None)
            lines += ["", f"Clean (no planted documents), the same questions: {shown}."]
        lines.append("")
    if rep.comparisons:
        lines += ["## Against the first config (success, paired permutation test)", "",
                  "| attack | config | pairs | difference | p |", "|---|---|---|---|---|"]
        lines += [f"| {c['attack']} | {c['config']} vs {c['baseline']} | {c['pairs']} | "
                  f"{c['difference']:+.3f} | {c['p_value']:.3g} |" for c in rep.comparisons]
        lines.append("")
    lines += fell(rep)
    for text, failed, why in rep.gates:
        lines.append(f"Gate {text}: {'FAILED' if failed else 'passed'} ({why})")
    return "\n".join(lines).rstrip() + "\n"


def write(rep: ProbeReport, md: str, output: Path | None) -> list[Path]:
    """``{output}.json`` and ``{output}.md`` (``output``: the stem, checked when planned);
    the paths written (none without ``output``)."""
    if output is None:
        return []
    stem = output
    stem.parent.mkdir(parents=True, exist_ok=True)
    js, mdp = stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".md")
    js.write_text(json.dumps(rep.to_json(), indent=2, ensure_ascii=False) + "\n",
                  encoding="utf-8")

    write_markdown(md, mdp)
    return [js, mdp]


def execute_probe(plan: ProbePlan, progress: Any = None
                  ) -> tuple[ProbeReport | None, str, list[Path]]:
    """Run ``plan`` (:func:`~ragmark.probe.execute.run_probe`, or score its logged
    answers) and write its report: the report, its Markdown and the paths written; or,
    with ``write_to``, write the planted documents (no report)."""
    if plan.dry_run:
        return None, dry_run_text(plan), []
    if plan.write_to is not None:
        paths = write_planted(plan, plan.write_to)
        return None, (f"Planted documents of {len(plan.arms)} attacks for "
                      f"{len(plan.questions)} target questions written to {plan.write_to}/ "
                      "(one corpus file an attack; probe.json says what to do next).\n"
                      ), paths
    found = score_logged(plan, plan.logged) if plan.logged else run_probe(plan, progress)
    rep = report_of(plan, found, n_resamples=plan.resamples)
    md = markdown(rep)
    paths = write(rep, md, plan.output)
    if plan.history is not None:
        from ragmark.probe.recorded import record_probe

        run_id = record_probe(plan.history, rep, paths[0] if paths else None)
        md += f"\nRecorded in the run history ({plan.history}) as run {run_id}.\n"
    return rep, md, paths


def dry_run_text(plan: ProbePlan) -> str:
    """What ``plan`` would do, for the console: the targets and the documents each arm
    plants, then per config the runs still to do (each asks every target question) and
    those kept by an earlier probe of the same plan. Nothing is run or written."""
    n = len(plan.questions)
    planted = {a.name: sum(len(p.ids) for p in planted_for(plan, a)) for a in plan.arms}
    lines = [f"dry run: {n} target questions of {plan.base.dataset.name} (seed {plan.seed}); "
             "planted passages: " + ", ".join(f"{a} {k}" for a, k in planted.items()) + "."]
    if plan.write_to is not None:
        return "\n".join([*lines, f"dry run: {len(plan.arms)} corpus files and probe.json "
                           f"would be written to {plan.write_to}/."]) + "\n"
    if plan.logged:
        return "\n".join([*lines, "dry run: the logged answers of " + ", ".join(
            f"{arm} ({path})" for arm, path in plan.logged.items())
            + " would be scored; nothing is asked."]) + "\n"
    asked, todo = 0, pending(plan)
    for cfg in plan.base.configs:
        got = todo[cfg.name]
        asked += n * len(got["to_run"])
        lines.append(f"dry run: {cfg.name} ({_made_by(cfg)}): {len(got['to_run'])} runs to "
                     f"do ({', '.join(got['to_run']) or 'none'}), {n * len(got['to_run']):,} "
                     f"questions asked; {len(got['kept'])} kept in {plan.state}.")
    lines.append(f"dry run: {asked:,} questions asked in all; nothing was run or written.")
    return "\n".join(lines) + "\n"


def _made_by(cfg: Any) -> str:
    """Who answers a config's questions: its pipeline, or its retriever and generator
    (with the LLM's model and endpoint)."""
    if cfg.pipeline is not None:
        return f"{cfg.pipeline.kind} pipeline"

    made = f"{cfg.retriever.name} retriever, {cfg.generator.name} generator"
    got = generator_endpoint(cfg)
    if got is None:
        return made
    if "unresolved" in got:
        return f"{made}: no endpoint ({got['unresolved']})"
    return f"{made}: {got['model']} at {got['base_url']}"  # as resolved: flags, table, env

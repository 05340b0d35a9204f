"""`ragmark judge-eval`: measure a judge against people's labels."""

from __future__ import annotations

from typing import Any

import click

from ragmark.cli.app import (
    cli,
    consoles,
    dry_run_option,
    history_option,
    print_report,
    quiet_option,
)
from ragmark.cli.llm_opts import dry_run_text, endpoint_options, llm_flags
from ragmark.cli.shared import option
from ragmark.plan.judge_eval import (
    JudgeEvalPlan,
    JudgeEvalRequest,
    PreferencePlan,
    estimate_judge_eval,
    execute_judge_eval,
    execute_preferences,
    plan_judge_eval,
)
from ragmark.plan.judge_qrels import execute_against_qrels
from ragmark.running.head_to_head import estimate_pairs


def _stat(name: str, s: dict[str, Any]) -> str:
    if s.get("value") is None:
        return f"{name}: none ({s['reason']})"
    return f"{name} {s['value']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"


def report_lines(r: dict[str, Any]) -> list[str]:
    """The console summary of a judge-eval report."""
    lines = [f"judge {r['model']} at {r['endpoint']}, metric {r['metric']} (rule: "
             f"{r['rule']}): {r['judged']} of {r['items']} items judged "
             f"({r['labels']['unsupported']} labelled unsupported, "
             f"{r['labels']['supported']} supported)"]
    fails = r["items"] - r["judged"]
    lines.append(f"failure rate {r['failure_rate']:.1%} ({fails} items without a verdict, "
                 "left out of the statistics)"
                 + ("; " + "; ".join(f"{k} ({v})" for k, v in list(r["failures"].items())[:3])
                    if fails else ""))
    if "reason" in r:
        lines.append(f"no statistics: {r['reason']}")
    else:
        lines.append("; ".join(_stat(n, r[n]) for n in ("balanced_accuracy", "kappa")))
        lines.append("unsupported class: " + "; ".join(
            _stat(n, r[n]) for n in ("precision", "recall", "f1")) + " (95% bootstrap)")
        c = r["confusion"]
        lines.append(f"confusion: labels unsupported -> judge unsupported "
                     f"{c['labels unsupported']['judge unsupported']}, supported "
                     f"{c['labels unsupported']['judge supported']}; labels supported -> "
                     f"judge unsupported {c['labels supported']['judge unsupported']}, "
                     f"supported {c['labels supported']['judge supported']}")
    if "scores" in r:
        lines += score_lines(r["scores"], r["metric"])
    if "people" in r:
        lines += people_lines(r["people"], r["judge_with_people"])
    if "alignment" in r:
        lines += alignment_lines(r["alignment"], r["metric"])
    lines += [f"warning: {w}" for w in r.get("warnings", [])]
    if "consistency" in r:
        k = r["consistency"]
        lines.append(f"self-consistency over {k['repeats']} repeats: " + (
            k["reason"] if "reason" in k else
            f"{k['flip_rate']:.1%} of {k['items']} items flip their verdict; score spread "
            f"{k['score_spread']:.3f}, standard deviation {k['score_std']:.3f}"))
    return lines


def _alpha(a: dict[str, Any]) -> str:
    return _stat("alpha", a) if a.get("value") is None or a.get("ci_low") is not None else (
        f"alpha {a['value']:.3f} ({a['note']})")


def people_lines(p: dict[str, Any], j: dict[str, Any]) -> list[str]:
    """The people's agreement with each other, and the judge's with them: the ceiling."""
    names = ", ".join(p["annotators"])
    lines = [f"people ({names}) on the {p['items']} items two or more labelled: "
             + _alpha(p["alpha"]) + ("; " + _stat("kappa", p["kappa"]) if "kappa" in p
                                     else "") + " (95% bootstrap): the ceiling a judge "
             "can reach on these labels"
             + (f"; {p['split']} items left out, the people split evenly on them"
                if p["split"] else "")]
    kappas = "; ".join(_stat(f"kappa with {n}", k) for n, k in j["kappa"].items())
    judged = j.get("judged", j["items"])
    on = (f"on the same {j['items']} items" if judged == j["items"] else
          f"on those {j['items']} items, {judged} of them with the judge's verdict (it was "
          f"not asked about the {j['items'] - judged} the people split evenly on, or gave "
          "none)")
    lines.append(f"the judge with them: {_alpha(j['alpha'])} {on} (the judge one more "
                 "coder)" + (f"; {kappas}" if kappas else ""))
    return lines


def alignment_lines(a: dict[str, Any], metric: str) -> list[str]:
    """What aligning the judge did, on held-out items, and where it was saved."""
    if "reason" in a:
        lines = [f"alignment not measured: {a['reason']}"]
    else:
        def gain(name: str, label: str) -> str:
            g = a[name]
            if g["gain"] is None:
                return f"{label}: not defined"
            return (f"{label} {g['unaligned']:.3f} -> {g['aligned']:.3f}, gain "
                    f"{g['gain']:+.3f} [{g['ci_low']:+.3f}, {g['ci_high']:+.3f}]")

        lines = [f"aligned judge, cross-validated ({a['folds']} folds; each fold judged "
                 f"with up to {max(a['examples_per_prompt'])} examples from the others) on "
                 f"{a['items']} items: " + gain("balanced_accuracy", "balanced accuracy")
                 + "; " + gain("kappa", "kappa") + " (paired 95% bootstrap)",
                 a["verdict"]]
        if a.get("aligned_failed"):
            worst = max(a["aligned_reasons"], key=lambda r: a["aligned_reasons"][r])
            lines.append(f"the aligned judge gave no verdict on {a['aligned_failed']} items "
                         f"(left out of the gain; most: {worst})")
    if (f := a.get("fitted")) and f.get("alignment_cut_to_fit"):
        lines.append(f"the alignment was shortened to fit the model's context window in "
                     f"{f['alignment_cut_to_fit']} calls ({f['alignment_examples_shortened']}"
                     f" examples shortened, {f['alignment_examples_dropped']} dropped)")
    if "not_saved" in a:
        lines.append(f"alignment not saved: {a['not_saved']}")
    if "saved" in a:
        lines.append(f"alignment saved to {a['saved']} (hash {a['hash'][:12]}); a config "
                     f"uses it: [judges.{metric}] alignment = \"{a['saved']}\"")
    return lines


def score_lines(s: dict[str, Any], metric: str) -> list[str]:
    """What the score says, whatever the threshold: ROC AUC, balanced accuracy at each
    threshold, and the cross-validated threshold."""
    lines = [_stat("score: ROC AUC", s["roc_auc"]) + f" over {s['items']} items "
             f"({s['distinct_scores']} distinct scores; 0.5 = no better than chance)"]
    rows = [x for x in s["by_threshold"] if x["balanced_accuracy"] is not None]
    if s["by_threshold"] and not rows:
        lines.append("balanced accuracy by threshold: none (" + s["by_threshold"][0]["reason"]
                     + ")")
    if rows:
        shown = rows if len(rows) <= 8 else sorted(
            rows, key=lambda x: -x["balanced_accuracy"])[:8]
        lines.append("balanced accuracy by threshold (unsupported below t): " + ", ".join(
            f"t={x['threshold']:.3g} {x['balanced_accuracy']:.3f}"
            for x in sorted(shown, key=lambda x: x["threshold"]))
            + ("" if len(rows) <= 8 else f" (the best 8 of {len(rows)})"))
    cv = s["cross_validated"]
    if cv.get("value", 0) is None:
        lines.append(f"cross-validated threshold: none ({cv['reason']})")
    else:
        chosen = ", ".join("-" if t is None else f"{t:.3g}" for t in cv["fold_thresholds"])
        lines.append(_stat(f"cross-validated threshold ({cv['folds']} folds, each chosen on "
                           f"the others: {chosen}): balanced accuracy",
                           cv["balanced_accuracy"])
                     + ("" if cv["threshold"] is None else
                        f"; on new items use --threshold {cv['threshold']:.3g} "
                        f"(chosen on all items; its accuracy is the cross-validated one)"))
    return lines


def pair_line(p: dict[str, Any]) -> str:
    """One line on how two judges compare."""
    head = f"{p['first']} vs {p['second']} on {p['items']} items both judged"
    if "kappa" not in p:
        return f"{head}: too few to compare"
    k, t = p["kappa"], p["paired"]
    kappa = (f"kappa {k['value']:.3f} [{k['ci_low']:.3f}, {k['ci_high']:.3f}]"
             if k.get("value") is not None else f"kappa none ({k['reason']})")
    return (f"{head}: agree on {p['raw_agreement']:.1%}, {kappa}; right where the other "
            f"is wrong: {t['only_first_right']} vs {t['only_second_right']} (McNemar exact "
            f"p = {t['p_value']:.3g})")


def judges_lines(report: dict[str, Any]) -> list[str]:
    """The console summary of several judges side by side."""
    return [f"[{name}] {line}" for name, r in report["judges"].items()
            for line in report_lines(r)] + [pair_line(p) for p in report["pairs"]]


@cli.command("judge-eval")
@click.argument("file", metavar="FILE|store:QUEUE")
@option("--metric")
@option("--threshold", type=click.FloatRange(0, 1))
@click.option("--label-map", help="LABEL=supported|unsupported pairs, comma-separated, over "
              "the defaults (e.g. '1=unsupported,0=supported' for hallucination labels).")
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Judge every item N times (other seeds) to measure self-consistency.")
@click.option("--temperature", type=click.FloatRange(min=0),
              help="Sampling temperature of the judge [default: the endpoint's, 0].")
@option("--resamples", type=click.IntRange(min=100), default=2000, show_default=True)
@option("--seed", type=int, default=0, show_default=True)
@option("--judge-model", "judge_models", multiple=True)
@option("--output", type=click.Path(dir_okay=False))
@click.option("--align", is_flag=True, help="Also align the judge to the labels (examples "
              "they labelled, their notes as rules) and measure the gain by "
              "cross-validation: no item is in its own prompt.")
@click.option("--save-alignment", metavar="FILE", type=click.Path(dir_okay=False),
              help="With --align: write the alignment chosen from every item (TOML); a "
              "config uses it as [judges.METRIC] alignment = \"FILE\".")
@option("--store", metavar="PATH")
@click.option("--config", type=click.Path(dir_okay=False), help="A config whose "
              "[judges.NAME] criteria --metric may name, and whose [llm] table is the "
              "judge's (the --llm-* flags over it).")
@click.option("--against-qrels", is_flag=True,
              help="FILE is a run's results (--include-details) on a set with qrels: "
                   "measure the context judges against the qrels' truth, no person "
                   "needed.")
@history_option
@dry_run_option
@quiet_option
@endpoint_options
def judge_eval_cmd(**flags: Any) -> None:
    """Measure a judge (endpoint, model, prompt) against people's labels: FILE is a
    JSONL of {question?, context(s), answer, label} or a filled-in review CSV; store:QUEUE
    reads a queue of `ragmark annotate`. With --against-qrels, FILE is a run's results."""
    out, progress = consoles(flags.pop("quiet"))
    plan = plan_judge_eval(JudgeEvalRequest(**flags, llm_flags=llm_flags()))
    if not isinstance(plan, JudgeEvalPlan):  # people's preferences, or the qrels
        (_preferences if isinstance(plan, PreferencePlan) else _against_qrels)(
            plan, out, progress)
        return
    if plan.dry_run:
        out.print(f"dry run: {plan.trial.metric} of {len(plan.items)} items x "
                  f"{plan.trial.repeats} repeats x {len(plan.judges)} judges\n"
                  + dry_run_text(estimate_judge_eval(plan), what="judge"), highlight=False,
                  soft_wrap=True)
        return
    report = execute_judge_eval(plan, progress)
    print_report(out, report_lines(report) if len(plan.judges) == 1 else judges_lines(report),
                 plan.output)


def _against_qrels(plan: Any, out: Any, progress: Any) -> None:
    """judge-eval --against-qrels: the dry run's count, or the context judges against
    the qrels."""
    if plan.dry_run:
        each = ", ".join(f"{m} {len(plan.judged(m))}" for m in plan.metrics)
        unjudged = [m for m in plan.metrics if len(plan.judged(m)) < len(plan.items)]
        out.print(f"dry run: {', '.join(plan.metrics)} of {len(plan.items)} questions: "
                  f"{plan.calls} judge calls ({each}; more where a call is split to fit "
                  "the model's window)"
                  + ("; context_precision judges only questions with an expected answer"
                     if "context_precision" in unjudged else ""),
                  highlight=False, markup=False, soft_wrap=True)
        return
    report = execute_against_qrels(plan, progress)
    print_report(out, qrels_lines(report), plan.output)


def _iv(v: Any, iv: Any) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" + ("" if not iv else f" [{iv[0]:.3f}, {iv[1]:.3f}]")


def qrels_lines(r: dict[str, Any]) -> list[str]:
    """The console summary of the context judges against the qrels."""
    lines = [f"{r['model']} against the qrels on {r['questions']} questions of {r['file']}"
             + ("; left out: " + ", ".join(f"{n} ({w})" for w, n in r["left_out"].items())
                if r.get("left_out") else "")]
    for metric, m in r["metrics"].items():
        miss = "; ".join(f"{n} {w}" for w, n in m["missing"].items())
        lines.append(f"{metric}: {m['questions']} questions valued"
                     + (f" (missing: {miss})" if miss else ""))
        if m["questions"]:
            lines.append(f"  judge mean {m['judge_mean']:.3f}, truth mean "
                         f"{m['truth_mean']:.3f}; mean absolute error "
                         f"{_iv(m['mean_absolute_error'], m['mae_interval'])}; Spearman "
                         f"{_iv(m['spearman'], m.get('spearman_interval'))}"
                         + (f" ({m['spearman_note']})" if m.get("spearman_note") else ""))
        p = m["passages"]
        if p["n"]:
            lines.append(f"  passages: {p['n']} ({p['relevant_by_qrels']} relevant by the "
                         f"qrels, {p['relevant_by_judge']} by the judge); accuracy "
                         f"{_iv(p['accuracy'], p['accuracy_interval'])}; ROC AUC "
                         f"{_iv(p['roc_auc'], p.get('roc_auc_interval'))}"
                         + (f" ({p['note']})" if p.get("note") else ""))
    return lines


def _preferences(plan: Any, out: Any, progress: Any) -> None:
    """judge-eval --metric pairwise:CRITERION: the dry run's count, or the judge's
    agreement with people's preferences."""

    if plan.dry_run:
        est = estimate_pairs(plan.judge, (plan.criterion,), plan.pairs, 2, plan.seed)
        out.print(f"dry run: pairwise:{plan.criterion} of {len(plan.pairs)} pairs x 2 orders\n"
                  + dry_run_text({"judge": est}), highlight=False, markup=False,
                  soft_wrap=True)
        return
    report = execute_preferences(plan, progress)
    print_report(out, preference_lines(report), plan.output)


def preference_lines(r: dict[str, Any]) -> list[str]:
    """The console summary of a judge's agreement with people's preferences."""
    def counts(c: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))

    pb = r["position_bias"]
    acc, k = r["accuracy"], r["kappa"]
    lines = [f"judge {r['model']} at {r['endpoint']}, {r['metric']}: {r['judged']} of "
             f"{r['pairs']} pairs judged (both orders; a verdict that flips is a tie); "
             f"people preferred {counts(r['people'])}; the judge {counts(r['judge'])}"
             + (f"; {r['split']} pairs left out, the people split evenly" if r["split"]
                else ""),
             ("accuracy on the pairs people did not call a tie: none (every pair a tie)"
              if acc["value"] is None else _stat(
                  f"accuracy on the {acc['n']} pairs people did not call a tie", acc))
             + "; " + _stat(f"kappa over A, B, tie ({k['n']} pairs)", k)
             + " (95% bootstrap)",
             "position bias: " + ("none measured" if pb["rate"] is None else
                                  f"{pb['rate']:.0%} of {pb['pairs']} pairs "
                                  f"({pb['inconsistent']} flipped with the order)"),
             "confusion: " + counts(r["confusion"])]
    if r["failures"]:
        lines.append("without a verdict: " + counts(r["failures"]))
    if "people_agreement" in r:
        a = r["people_agreement"]
        lines.append(f"people ({', '.join(a['annotators'])}) on the {a['pairs']} pairs two "
                     f"or more judged: {_alpha(a['alpha'])} (95% bootstrap): the ceiling")
    return lines

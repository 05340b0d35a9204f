"""`ragmark annotate`: people label a run's answers on a local web page."""

from __future__ import annotations

from typing import Any

import click

from ragmark.cli.app import cli, config_name_option, consoles, history_option, quiet_option
from ragmark.cli.shared import option
from ragmark.plan.annotate import (
    AnnotateRequest,
    annotate_status,
    execute_annotate,
    export_labels,
    plan_annotate,
)


def serve_lines(plan: Any, server: Any, new: bool) -> list[str]:
    """What the console says once the page is served."""
    host, port = server.server_address
    shown = f"[{host}]" if ":" in host else host
    d = plan.drawn
    left = "; ".join(f"{why}: {n}" for why, n in d["left_out"].items())
    return [
        f"{'New' if new else 'Resumed'} queue {plan.queue.name!r}: {plan.queue.task} of "
        f"{len(plan.items)} items from {plan.queue.source}"
        + (f", the first {overlap} labelled by two people" if (
            overlap := plan.queue.settings.get("overlap")) else "")
        + f" ({d['eligible']} eligible"
        + (f"; left out: {left}" if left else "") + "; by the judge's verdict: "
        + ", ".join(f"{k} {v}" for k, v in d["strata"].items()) + ")",
        f"Label at http://{shown}:{port}/" + ("?token=TOKEN" if plan.token else "")
        + f" — every label is saved when it is given (store: {plan.store}); Ctrl-C stops."]


def status_lines(counts: dict[str, dict[str, Any]]) -> list[str]:
    if not counts:
        return ["No queue in the label store yet."]
    lines = []
    for name, c in counts.items():
        lines.append(f"{name}: {c['task']} from {c['source']}: {c['labelled']} of "
                     f"{c['items']} items labelled")
        for who, by in c["annotators"].items():
            lines.append(f"  {who}: " + ", ".join(f"{k} {v}" for k, v in by.items()))
        a = c.get("agreement")
        if a is not None:
            lines.append(f"  agreement between people on the {a['units']} items two or "
                         "more labelled: " + (
                             f"Krippendorff's alpha ({a['level']}) {a['value']:.3f}"
                             if a["value"] is not None else f"alpha none ({a['reason']})")
                         + (f" [{a['ci_low']:.3f}, {a['ci_high']:.3f}]"
                            if a.get("ci_low") is not None else ""))
    return lines


@cli.command("annotate")
@click.argument("source", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--task", metavar="METRIC", help="The judge metric whose verdict people give "
              "(faithfulness, answer_relevance, ...; relevance_label for a label file), "
              "or pairwise:CRITERION: which of two configs' answers of a compare is "
              "better (A: the baseline, B: --config-name) [default: the file's first judge "
              "metric].")
@click.option("--queue", metavar="NAME", help="The queue's name [default: SOURCE's name "
              "and the task]; the same name resumes it.")
@click.option("--annotator", metavar="NAME", help="Label as NAME [default: asked once on "
              "the page].")
@click.option("--items", "sample", type=click.IntRange(min=1), metavar="N", help="Draw N "
              "items, stratified by the judge's verdict [default: every item].")
@option("--seed", type=int, default=0, show_default=True)
@click.option("--overlap", type=click.IntRange(min=0), default=None,
              help="The first N items are labelled by two people (for their agreement) "
              "[default: 0; a resumed queue keeps its own].")
@click.option("--per-claim", is_flag=True, help="Label each claim the faithfulness judge "
              "made of an answer (its verdict per claim), not the answer as a whole.")
@config_name_option
@click.option("--reveal-judge", is_flag=True, help="Show the judge's value before the "
              "person has labelled [default: after, so it does not anchor them].")
@option("--listen", metavar="HOST:PORT", default="127.0.0.1:8750", show_default=True)
@option("--token")
@option("--store", metavar="PATH")
@click.option("--status", is_flag=True, help="Print each queue's counts per annotator and "
              "label, and exit.")
@click.option("--export", metavar="FILE", help="Write the queue's labels (--queue) as a "
              "review CSV (.csv, as --human-labels and `ragmark judge-eval` read it) or "
              "JSONL (.jsonl, as `ragmark judge-eval` reads it), and exit.")
@history_option
@quiet_option
def annotate_cmd(**flags: Any) -> None:
    """Label in the browser: the items of SOURCE (a results file of `ragmark run
    --include-details` or of `ragmark label`, or logged outputs as `run --outputs` reads
    them), one at a time, keyboard first."""
    out, _ = consoles(flags.pop("quiet"))
    plan = plan_annotate(AnnotateRequest(**flags))

    def say(lines: list[str]) -> None:
        for line in lines:
            out.print(line, highlight=False, markup=False, soft_wrap=True)

    if plan.action == "status":
        say(status_lines(annotate_status(plan)))
    elif plan.action == "export":
        say([f"Wrote {export_labels(plan)} labels to {plan.export}"])
    else:
        execute_annotate(plan, lambda server, new: say(serve_lines(plan, server, new)))

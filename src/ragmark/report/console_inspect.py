"""`ragmark inspect`'s console view: one question of a results file in full (its answer,
contexts, ground truth, retrieved items, metrics with their notes, judged sentences or
nuggets, pairwise verdicts, conversation turn, hops, claim blame), or its failing
questions with a count per kind. Every text is printed as it is, never as markup."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.text import Text

from ragmark.analysis.agent_failures import SHORT as AGENT_SHORT
from ragmark.analysis.blame import claim_blame
from ragmark.analysis.inspection import RULES, target_ranks
from ragmark.analysis.judged_view import judged_sections
from ragmark.analysis.trajectory_view import trajectory_section
from ragmark.running.tournament import verdicts_for
from ragmark.text import visible

if TYPE_CHECKING:
    from rich.console import Console

    from ragmark.analysis.failures import FailureReport
    from ragmark.analysis.inspection import Results
    from ragmark.results.model import QueryRecord
    from ragmark.types import Score

CONTEXT_CHARS = 240
"""Characters of each generator context shown in the text view (--json has them all)."""


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _heading(out: Console, text: str) -> None:
    out.print()
    out.print(f"[bold]{escape(text)}[/bold]", markup=True)


def _indented(out: Console, text: str, indent: int = 2, hang: int | None = None) -> None:
    """Print ``text`` wrapped to the console width, each paragraph indented, later lines
    of a paragraph indented by ``hang`` (default: ``indent``)."""
    width = max(40, out.width)
    for para in text.split("\n"):
        lines = textwrap.wrap(para, width, initial_indent=" " * indent,
                              subsequent_indent=" " * (indent if hang is None else hang),
                              break_long_words=False, break_on_hyphens=False) or [""]
        for line in lines:
            out.print(line, markup=False, highlight=False, soft_wrap=True)


def print_query(res: Results, q: QueryRecord, out: Console) -> None:
    """The question, its ground truth, what was retrieved and why it matched, the
    answer, the contexts the generator saw, and every metric."""
    out.print(f"[bold]Question {escape(q.id)}[/bold] · {escape(res.describe())} "
              f"({escape(res.path)})", soft_wrap=True, markup=True)
    if not res.detailed:
        _indented(out, f"A comparison file keeps only metric values per question; rerun "
                       f"`ragmark run ... --config {res.config} --include-details` for the "
                       "question, its ground truth, the retrieved items and the answer.")
        _print_pairwise(res, q, out)
        _print_metrics(res, q, out)
        return
    _indented(out, q.question or "")
    _print_turn(q, out)
    _print_truth(q, out)
    _print_retrieved(res, q, out)
    _print_hops(q, out)
    _heading(out, "Answer")
    _indented(out, "(no answer: generation skipped or failed)" if q.answer is None
              else q.answer or "(empty)")
    if q.contexts:
        _heading(out, f"Contexts given to the generator ({len(q.contexts)})")
        for i, c in enumerate(q.contexts, start=1):
            text = " ".join(c.split())
            if len(text) > CONTEXT_CHARS:
                text = text[:CONTEXT_CHARS].rsplit(" ", 1)[0] + f" … ({len(c)} characters)"
            _indented(out, f"[{i}] {text}")
    _print_recorded(q, out)
    _print_blame(q, out)
    _print_judged(q, out)
    _print_pairwise(res, q, out)
    _print_metrics(res, q, out)


def _print_recorded(q: QueryRecord, out: Console) -> None:
    """The fields its source gave that ragmark does not read, each as JSON on a line."""
    if not q.recorded:
        return
    _heading(out, f"Recorded by its source ({_n(len(q.recorded), 'field')})")
    for k, v in q.recorded.items():
        text = json.dumps(v, ensure_ascii=False)
        if len(text) > CONTEXT_CHARS:
            text = text[:CONTEXT_CHARS] + f" … ({len(text)} characters)"
        _indented(out, f"{k}: {text}", hang=4)


def _print_judged(q: QueryRecord, out: Console) -> None:
    """The agent's trajectory, a line a step; the nuggets the answer was scored against
    and its cited sentences' support, each with what the judge made of it."""
    steps = trajectory_section(q)
    for heading, lines in [*([steps] if steps else []), *judged_sections(q)]:
        _heading(out, heading)
        for i, line in enumerate(lines, start=1):
            _indented(out, f"{i}. {line}", hang=5)


def _print_pairwise(res: Results, q: QueryRecord, out: Console) -> None:
    """The pairwise judge's verdicts on this question in every match of the config:
    won, lost or tie, and what the judge said in each order, with its reasons."""
    if res.pairwise is None:
        return

    got = verdicts_for(res.pairwise, res.config, q.id)
    if not got:
        return
    _heading(out, f"Pairwise verdicts ({len(got)})")
    for v in got:
        outcome = v["outcome"] or f"no verdict ({v.get('failure', 'unknown')})"
        _indented(out, f"{v['criterion']} vs {v['other']}: {outcome} ({res.config} shown "
                       f"as {v['shown_as']})", hang=4)
        for o, reason in zip(v["orders"], v["reasons"], strict=False):
            _indented(out, f"{o['first']} first: the judge said {o['said']}: {reason}",
                      indent=4, hang=6)
        if not v["orders"] and v["reasons"]:
            _indented(out, v["reasons"][0], indent=4, hang=6)


def _print_turn(q: QueryRecord, out: Console) -> None:
    """A turn of a conversation: which, and what was said before it."""
    talk = q.turn
    if not talk:
        return
    earlier = [t for t in talk.get("history") or [] if isinstance(t, dict)]
    _heading(out, f"Conversation {talk.get('id')}, turn {talk.get('turn')}"
                  + (f" (after {_n(len(earlier), 'earlier turn')})" if earlier else ""))
    for t in earlier:
        _indented(out, f"user: {t.get('question')}", hang=8)
        if t.get("answer"):
            _indented(out, f"assistant: {t['answer']}", indent=4, hang=8)


def _print_hops(q: QueryRecord, out: Console) -> None:
    """Each retrieval step on its own, when the question's contexts came in steps."""
    if not q.hops:
        return
    _heading(out, f"Retrieval by hop ({len(q.hops)})")

    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.3f}"

    for i, h in enumerate(q.hops, start=1):
        found = f"; first to find {', '.join(h.found)}" if h.found else ""
        _indented(out, f"{i}. {h.name}: {_n(h.size, 'item')}, recall {f(h.recall)}, "
                       f"hit {f(h.hit)}, MRR {f(h.mrr)}{found}", hang=5)


def _print_blame(q: QueryRecord, out: Console) -> None:
    """The claim diagnostics' verdict and the claims behind each problem."""
    told = claim_blame(q)
    if told is None:
        return
    _heading(out, f"Claim diagnostics: {told.get('says')}")
    for p in told.get("problems", []):
        _indented(out, f"{p.get('says')}:")
        for c in p.get("claims", []):
            _indented(out, f"- {c}", indent=4, hang=6)


def _print_truth(q: QueryRecord, out: Console) -> None:
    truth = q.ground_truth
    if truth is None:
        _heading(out, "Ground truth")
        _indented(out, "not recorded in this file (written before results kept it)")
        return
    _heading(out, f"Ground truth ({truth.get('kind', '?')})")
    ranks = target_ranks(q)
    given = truth.get("targets")
    targets: dict[str, Any] = given if isinstance(given, dict) else {}
    if not targets:
        _indented(out, "no relevant target: retrieval metrics are not computed")
    width = max((len(t) for t in targets), default=0)
    for t, grade in targets.items():
        rank = ranks.get(t)
        where = "not retrieved" if rank is None else f"first retrieved at rank {rank}"
        _indented(out, f"{t:<{width}}  grade {grade}  {where}")
    passages = truth.get("passages")
    if isinstance(passages, list):
        for i, p in enumerate(passages, start=1):
            _indented(out, f"passage {i}: {p}")
    if truth.get("expected_answer") is not None:
        _indented(out, f"expected answer: {truth['expected_answer']}")
    if isinstance(truth.get("expected_keywords"), list):
        _indented(out, "expected keywords: " + ", ".join(map(str, truth["expected_keywords"])))


def _print_retrieved(res: Results, q: QueryRecord, out: Console) -> None:
    from rich.table import Table


    items = q.retrieved
    unit = res.settings.get("unit")
    _heading(out, f"Retrieved ({_n(len(items), 'item')}" + (f", per {unit})" if unit else ")"))
    if not items:
        _indented(out, "nothing was retrieved")
        return
    table = Table(show_header=True, header_style="bold", padding=(0, 1))
    table.add_column("rank", justify="right")
    table.add_column("score", justify="right")
    table.add_column("item")
    table.add_column("document")
    table.add_column("match")
    for it in items:
        match = "no"
        if it.grade > 0:
            match = f"yes: {', '.join(it.targets)} (grade {it.grade}, rule {it.rule})"
        table.add_row(str(it.rank), "-" if it.score is None else f"{it.score:.4f}",
                      Text(it.id), Text(it.doc_id),
                      Text(match))
    out.print(table)
    for rule in dict.fromkeys(it.rule for it in items if it.grade > 0 and it.rule):
        _indented(out, f"rule {rule}: {RULES.get(rule, 'as the results file names it')}")


def _metric_note(name: str, m: Score, res: Results) -> str:
    d = m.details
    if m.value is None:
        why = m.reason or "reason not recorded in this file"
        raw = d.get("raw")
        return f"missing: {why}" + (f" (judge output: {raw!r})" if raw else "")
    if d.get("ungrounded") is True:
        return f"ungrounded (below {res.grounded_threshold:g})"
    if isinstance(d.get("unsupported"), list) and isinstance(d.get("claims"), list):
        bad = d["unsupported"]
        text = f"{len(bad)} of {len(d['claims'])} claims unsupported"
        return text + (": " + "; ".join(map(str, bad)) if bad else "")
    claims = [f"{key.replace('_', ' ')}: " + "; ".join(map(str, d[key]))
              for key in ("incorrect", "missed", "not_retrieved", "unused", "hallucinated",
                          "unsupported", "irrelevant_passages")
              if isinstance(d.get(key), list) and d[key]]
    if claims:  # the claim diagnostics: the claims behind the value
        return " | ".join(claims)
    if isinstance(d.get("nuggets"), list):  # the nugget scores: see "Nuggets" above
        said = [n.get("assignment") for n in d["nuggets"] if isinstance(n, dict)]
        return (f"{said.count('support')} of {len(said)} nuggets supported, "
                f"{said.count('partial_support')} partly")
    if isinstance(d.get("sentences"), list):  # the support scores: see "Support" above
        got = [s.get("support") for s in d["sentences"] if isinstance(s, dict)]
        return (f"{got.count('full_support')} of {d.get('cited')} cited sentences fully "
                f"supported, {got.count('partial_support')} partly; "
                f"{d.get('uncited')} uncited")
    parts = [f"{key} {d[key]}" for key in ("rating", "verdict") if key in d]
    if d.get("reason"):
        parts.append(str(d["reason"]))
    return ": ".join(parts)


def _print_metrics(res: Results, q: QueryRecord, out: Console) -> None:
    from rich.table import Table

    _heading(out, "Metrics")
    if not q.metrics:
        _indented(out, "none recorded")
        return
    table = Table(show_header=True, header_style="bold", padding=(0, 1))
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("note")
    for name, m in q.metrics.items():
        value = "—" if m.value is None else f"{m.value:.3f}"
        table.add_row(Text(name), value, Text(_metric_note(name, m, res)))
    out.print(table)


def print_over_configs(across: dict[str, Any] | None, out: Console) -> None:
    """A compare's question over its configs: each metric's value in every config, and
    the question's difficulty (the mean over the configs) and discrimination (how well it
    separates the configs that do well on the other questions from those that do not)."""
    if not across:
        return
    _heading(out, "Over the compare's configs")
    for name, r in across.items():
        values = ", ".join(f"{visible(c)} {'—' if v is None else f'{v:.3f}'}"
                           for c, v in r["values"].items())
        if "difficulty" in r:
            d = r["discrimination"]
            tail = (f"difficulty {r['difficulty']:.3f}"
                    + ("" if d is None else f", discrimination {d:+.3f}")
                    + f": {r['verdict']}")
        else:
            tail = r["verdict"]
        _indented(out, f"{visible(name)}: {values} — {tail}", hang=4)


SHORT = {"empty_ranking": "empty ranking", "no_hit": "no hit", "unknown_ids": "foreign ids",
         "ungrounded": "ungrounded",
         "low_faithfulness": "unfaithful", "judge_failure": "judge failure",
         "claim_blame": "blamed", "pairwise_loss": "lost pairwise", **AGENT_SHORT}


def print_failures(res: Results, rep: FailureReport, out: Console) -> None:
    """A count per kind of failure, then each failing question with its diagnosis."""
    out.print(f"[bold]Failures[/bold] · {escape(res.describe())} ({escape(res.path)}) · "
              f"{_n(rep.n_queries, 'question')}", soft_wrap=True, markup=True)
    if rep.depth < rep.k:
        _indented(out, f"the run retrieved {rep.depth} items per question: the top "
                       f"{rep.depth} are checked, not the top {rep.k}")
    labels = {kind: rep.label(kind) for kind in rep.kinds()}
    width = max(len(v) for v in labels.values())
    for kind in rep.kinds():
        if kind in rep.unchecked:
            line = f"not checked: {rep.unchecked[kind]}"
        else:
            causes = ", ".join(f"{c} {n}" for c, n in rep.causes(kind).items())
            many = rep.occurrences(kind)
            line = f"{rep.count(kind)} of {_n(rep.checked[kind], 'question')}" + (
                f" ({causes})" if causes else "") + (
                f"; {_n(many, 'call')} in all" if many > rep.count(kind) else "")
        _indented(out, f"{labels[kind]:<{width}}  {line}", hang=width + 4)
    _heading(out, "Failing questions")
    if not rep.failures:
        _indented(out, "none: every checked question passed")
    for f in rep.failures:
        pad = 4 + len(f.query)
        _indented(out, f"{f.query}  {SHORT[f.kind]}: {f.fact}", hang=pad)
        _indented(out, f"→ {f.diagnosis}", indent=pad, hang=pad + 2)
    for note in res.notes:
        out.print()
        _indented(out, f"note: {note}", indent=0)

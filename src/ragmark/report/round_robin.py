"""How a round robin of pairwise verdicts (:mod:`ragmark.running.tournament`) reads: the
console lines of ``ragmark duel``, the Markdown section of a compare (each match's
record, the win matrix, the strengths and ranking), and the HTML section (the win
matrix as a heatmap, the strengths with their intervals)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ragmark.report import svg
from ragmark.report.html_questions import CSS


def _rate(s: Mapping[str, Any]) -> str:
    return ("none" if s["value"] is None else
            f"{s['value']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]")


def _bias(s: Mapping[str, Any], orders: int) -> str:
    pb = s["position_bias"]
    if orders == 1:
        return "not measured (one order)"
    if pb["rate"] is None:
        return "none measured"
    return (f"{pb['rate']:.0%} of {pb['pairs']} pairs ({pb['inconsistent']} flipped with "
            "the order, counted as ties)")


def _ranked(s: Mapping[str, Any]) -> list[tuple[str, float, float | None, float | None]]:
    return sorted(zip(s["systems"], s["value"], s["ci_low"], s["ci_high"], strict=True),
                  key=lambda x: -x[1])


TIED = 1e-9
"""Log-strengths closer than this are equal (a tie in the ranking)."""


def _ranks(ranked: list[tuple[str, float, Any, Any]]) -> list[int]:
    """Competition ranks of the strongest-first rows: equal strengths share a rank
    (1, 1, 3)."""
    return [1 + sum(1 for _, w, _, _ in ranked if w > v + TIED) for _, v, _, _ in ranked]


def _ordered(ranked: list[tuple[str, float, Any, Any]]) -> str:
    """``a +0.5 [..] > b ... = c ...``: '=' between equal strengths."""
    out = ""
    for k, (n, v, lo, hi) in enumerate(ranked):
        if k:
            out += " = " if abs(ranked[k - 1][1] - v) <= TIED else " > "
        out += f"{n} {v:+.3f} {_ci(lo, hi)}"
    return out


def _ci(lo: float | None, hi: float | None) -> str:
    return "n/a" if lo is None or hi is None else f"[{lo:+.3f}, {hi:+.3f}]"


def pairwise_lines(r: Mapping[str, Any]) -> list[str]:
    """The console summary of a duel: per match one line per criterion; for three
    systems or more, each criterion's strengths and ranking."""
    if "matches" not in r:
        return _match_lines(r, r["orders"])
    lines = [f"round robin of {len(r['systems'])} systems: " + ", ".join(
        f"{s['name']} ({s['file']})" if s.get("file") else s["name"] for s in r["systems"])]
    for m in r["matches"]:
        lines += _match_lines(m, r["orders"])
    for c, s in r["strengths"].items():
        if s["value"] is None:
            lines.append(f"{c}: no Bradley-Terry strengths ({s['reason']})")
            continue
        lines.append(f"{c}: Bradley-Terry log-strength over {s['questions']} questions "
                     "(95% bootstrap): " + _ordered(_ranked(s)))
    return lines


def _who(side: Mapping[str, Any]) -> str:
    return f"{side['name']} ({side['file']})" if side.get("file") else side["name"]


def _match_lines(r: Mapping[str, Any], orders: int) -> list[str]:
    lines = [f"A = {_who(r['a'])}, B = {_who(r['b'])}; "
             f"{r['questions']} questions both answered"
             + ("; left out: " + ", ".join(f"{k} {v}" for k, v in r["left_out"].items())
                if r["left_out"] else "")]
    for c, s in r["criteria"].items():
        lines.append(f"{c}: A wins {s['wins']}, ties {s['ties']}, B wins {s['losses']}; "
                     f"A's win rate {_rate(s)}; {s['test']} p {s['p_value']:.3g} (Holm "
                     f"{s['p_holm']:.3g}); position bias {_bias(s, orders)}"
                     + (f"; {sum(s['without_verdict'].values())} pairs without a verdict"
                        if s["without_verdict"] else ""))
    return lines


def _calls(llm: Mapping[str, Any]) -> str:
    """The judge's calls, tokens and cost, as the latency table says them for the
    configs."""
    if not llm.get("calls") and not llm.get("cache_hits"):
        return ""
    cost = llm.get("estimated_cost")
    return (f" The pairwise judge made {llm['calls']:,} calls ({llm.get('cache_hits', 0):,} "
            f"more served from the cache), {llm.get('prompt_tokens', 0):,} prompt and "
            f"{llm.get('completion_tokens', 0):,} completion tokens"
            + (f", cost ${cost:.4f}" if cost is not None else "") + ".")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def pairwise_markdown(r: Mapping[str, Any]) -> list[str]:
    """A round robin's Markdown section: per criterion, every match (A's wins, ties,
    losses, win rate with its interval, the sign test's p with Holm's, the position-bias
    rate) and, with three systems or more, the win matrix and the Bradley–Terry
    strengths and ranking."""
    orders = r["orders"]
    llm = r.get("llm") or {}
    judge = f" by {llm['model']}" if llm.get("model") else ""
    asked = ("both orders (a verdict that flips with the order is a tie)" if orders == 2
             else "one order, drawn per question")
    lines = ["", f"### Which answer is better: pairwise verdicts{judge}", "",
             f"Each pair asked in {asked}; win rate: A's wins plus half its ties over the "
             f"pairs with a verdict, 95% bootstrap interval over questions (seed "
             f"{r['seed']}); p: two-sided exact sign test, ties left out, Holm across the "
             "criteria of a match." + _calls(llm), ""]
    criteria = list(dict.fromkeys(c for m in r["matches"] for c in m["criteria"]))
    rubrics = r.get("rubrics") or {}
    if rubrics:
        lines += ["Custom criteria (--pairwise-rubric): " + "; ".join(
            f"**{n}**: better means {t}" for n, t in rubrics.items()) + ".", ""]
    lines += _decisive_markdown(r.get("decisiveness") or [])
    for c in criteria:
        lines += [f"#### {c}", "",
                  "| A | B | Questions | A wins | Ties | B wins | A's win rate [95%] | p (Holm)"
                  " | Position bias | Without verdict |",
                  "|---|---|---:|---:|---:|---:|---|---:|---|---:|"]
        for m in r["matches"]:
            s = m["criteria"][c]
            lines.append(
                f"| {_cell(m['a']['name'])} | {_cell(m['b']['name'])} | {m['questions']} | "
                f"{s['wins']} | {s['ties']} | {s['losses']} | {_rate(s)} | "
                f"{s['p_value']:.3g} ({s['p_holm']:.3g}) | {_bias(s, orders)} | "
                f"{sum(s['without_verdict'].values())} |")
        lines += _corrected_lines(r, c)
        st = (r.get("strengths") or {}).get(c)
        if st is not None and len(st["systems"]) > 2:
            lines += ["", *_strengths_markdown(st)]
        lines.append("")
    return lines


def _decisive_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """Pointwise or pairwise: each kind's estimate for every config against the
    baseline, its interval, the calls it cost, and the width at 100 calls."""
    if not rows:
        return []
    out = ["#### Pointwise or pairwise?", "",
           "Each config against the baseline on a -1..+1 scale: pairwise, its preference "
           "margin (2 x win rate - 1); pointwise, the difference of its judge metric's "
           "mean. The narrower the interval at 100 calls (width x sqrt(calls / 100)), the "
           "more a call says; pointwise calls are both configs' judge calls (every judge "
           "metric of the run).", "",
           "| Config | Kind | By | Estimate [95%] | Questions | Calls | Width | Width at 100 "
           "calls |", "|---|---|---|---|---:|---:|---:|---:|"]
    for d in rows:
        w100 = d["width_at_100_calls"]
        out.append(f"| {_cell(d['config'])} | {d['kind']} | {d['measure']} | "
                   f"{d['value']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] | {d['n']} | "
                   f"{d['calls']} | {d['width']:.3f} | "
                   f"{'n/a' if w100 is None else f'{w100:.3f}'} |")
    return [*out, ""]


def _corrected_lines(r: Mapping[str, Any], c: str) -> list[str]:
    """Each match's win rate corrected by people's preferences, where they gave some."""
    out = []
    for m in r["matches"]:
        k = m["criteria"][c].get("corrected")
        if k is None:
            continue
        who = f"{m['a']['name']} against {m['b']['name']}"
        left = "; ".join(f"{n} left out: {why}" for why, n in k["labels_left_out"].items())
        if k.get("estimate") is None:
            out.append(f"- {who}: no corrected win rate ({k['reason']})"
                       + (f"; {left}" if left else ""))
            continue
        out.append(f"- {who}: A's win rate by the judge {k['judge_mean']:.3f}; corrected by "
                   f"{k['n_labelled']} people's preferences (PPI++, {k['n_unlabelled']} more "
                   f"pairs judged) {k['estimate']:.3f} [{k['ci_low']:.3f}, "
                   f"{k['ci_high']:.3f}]; the people alone {k['human_mean']:.3f}"
                   + (f"; {left}" if left else ""))
    return ["", *out] if out else []


def _strengths_markdown(s: Mapping[str, Any]) -> list[str]:
    names = s["systems"]
    w = s["win_matrix"]
    lines = [f"Win matrix over {s['questions']} questions (row beat column; a tie is half "
             "a win each):", "",
             "| | " + " | ".join(_cell(n) for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for i, n in enumerate(names):
        lines.append(f"| {_cell(n)} | " + " | ".join(
            "–" if i == j else f"{w[i][j]:g}" for j in range(len(names))) + " |")
    lines.append("")
    if s["value"] is None:
        return [*lines, f"No Bradley–Terry strengths ({s['reason']})."]
    lines += ["| Rank | System | Bradley–Terry log-strength [95%] |", "|---:|---|---|"]
    ranked = _ranked(s)
    lines += [f"| {k} | {_cell(n)} | {v:+.3f} {_ci(lo, hi)} |"
              for k, (n, v, lo, hi) in zip(_ranks(ranked), ranked, strict=True)]
    if len(set(_ranks(ranked))) < len(ranked):
        lines += ["", "Systems with equal strengths share a rank: the verdicts do not order "
                  "them."]
    undefined = s.get("resamples_undefined")
    if undefined:
        lines += ["", f"{undefined} of {s['n_resamples']} resamples had no maximum and are "
                  "left out of the intervals."]
    return lines


def pairwise_html(r: Mapping[str, Any], numbers: svg.Series | None = None) -> str:
    """The HTML section of a round robin, as its Markdown says it: how the pairs were
    asked and the judge's calls; per criterion, each match's record (with the pairs
    without a verdict), the win matrix as a heatmap (the numbers in the cells) and the
    strengths with their intervals (each config in its colour of the report,
    ``numbers``)."""
    orders = r["orders"]
    asked = ("both orders (a verdict that flips with the order is a tie)" if orders == 2
             else "one order, drawn per question")
    out = ['<section id="pairwise"><h2>Which answer is better (pairwise)</h2>',
           f"<p>Each pair asked in {asked}; win rate: A's wins plus half its ties over the "
           f"pairs with a verdict, 95% bootstrap interval over questions (seed "
           f"{escape(str(r['seed']))}); p: two-sided exact sign test, ties left out, Holm "
           "across the criteria of a match." + escape(_calls(r.get("llm") or {})) + "</p>"]
    for name, text in (r.get("rubrics") or {}).items():
        out.append(f"<p>Custom criterion <strong>{escape(name)}</strong>: better means "
                   f"{escape(text)}</p>")
    criteria = list(dict.fromkeys(c for m in r["matches"] for c in m["criteria"]))
    for c in criteria:
        rows = []
        for m in r["matches"]:
            s = m["criteria"][c]
            rows.append("<tr>" + "".join(f"<td>{escape(str(x))}</td>" for x in (
                m["a"]["name"], m["b"]["name"], m["questions"], s["wins"], s["ties"],
                s["losses"], _rate(s), f"{s['p_value']:.3g} ({s['p_holm']:.3g})",
                _bias(s, orders), sum(s["without_verdict"].values()))) + "</tr>")
        out.append(f"<h3>{escape(c)}</h3><table><thead><tr><th>A</th><th>B</th>"
                   "<th>questions</th><th>A wins</th><th>ties</th><th>B wins</th>"
                   "<th>A's win rate [95%]</th><th>p (Holm)</th><th>position bias</th>"
                   "<th>without verdict</th>"
                   f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        st = (r.get("strengths") or {}).get(c)
        if st is not None and len(st["systems"]) > 2:
            out.append(_heatmap(c, st))
            if st["value"] is not None:
                out.append(svg.forest(
                    f"Bradley-Terry strengths ({c})",
                    [(n, lo if lo is not None else v, v, hi if hi is not None else v)
                     for n, v, lo, hi in _ranked(st)],
                    f"{c}: each system's Bradley-Terry log-strength (centred on 0) with its "
                    f"95% bootstrap interval over {st['questions']} questions, strongest "
                    "first", numbers))
            else:
                out.append(f"<p>No Bradley–Terry strengths ({escape(st['reason'])}).</p>")
    return "".join(out) + "</section>"


def _heatmap(criterion: str, s: Mapping[str, Any]) -> str:
    """The win matrix as a table whose cells are shaded by the row's share of the
    meetings with the column (blue: the row won most, orange: it lost most)."""
    names, w = s["systems"], s["win_matrix"]
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = []
    for i, n in enumerate(names):
        cells = []
        for j in range(len(names)):
            if i == j:
                cells.append('<td class="diag">–</td>')
                continue
            met = w[i][j] + w[j][i]
            share = w[i][j] / met if met else None
            style = "" if share is None else f' style="background:{_shade(share)}"'
            title = ("never met" if share is None else
                     f"{n} beat {names[j]} in {w[i][j]:g} of {met:g} ({share:.0%})")
            cells.append(f'<td{style} title="{escape(title)}">{w[i][j]:g}</td>')
        rows.append(f'<tr><th scope="row">{escape(n)}</th>{"".join(cells)}</tr>')
    # the caption is the figure's, above the table: a table's caption is as narrow as
    # the table, eight lines in a 115 px column for three systems
    return (f'<figure class="heatmap"><figcaption>{escape(criterion)}: win matrix over '
            f"{s['questions']} questions (row beat column; a tie is half a win each; the "
            f"shade is the row's share)</figcaption><table><thead><tr><th></th>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></figure>")


def _shade(share: float) -> str:
    """Blue for a share above one half, orange below, white at one half."""
    strength = abs(share - 0.5) * 2
    r, g, b = (0, 114, 178) if share >= 0.5 else (230, 159, 0)
    mix = [round(255 + (c - 255) * strength * 0.6) for c in (r, g, b)]
    return f"rgb({mix[0]},{mix[1]},{mix[2]})"


def as_round_robin(r: Mapping[str, Any]) -> dict[str, Any]:
    """A duel's report as a round robin's (a duel of two files is one match)."""
    if "matches" in r:
        return dict(r)
    match = {k: v for k, v in r.items() if k not in ("orders", "seed", "llm", "gates")}
    return {"systems": [r["a"], r["b"]], "matches": [match], "strengths": {},
            "orders": r["orders"], "seed": r["seed"], "llm": r.get("llm") or {},
            **({"gates": r["gates"]} if "gates" in r else {})}


def duel_markdown(r: Mapping[str, Any]) -> str:
    """A duel's report as Markdown: each match, strengths, the gates."""
    rr = as_round_robin(r)
    names = ", ".join(s["name"] + (f" ({s['file']})" if s.get("file") else "")
                      for s in rr["systems"])
    lines = [f"## ragmark duel: {names}", *pairwise_markdown(rr)]
    gates = rr.get("gates") or []
    if gates:
        lines += ["### Pairwise gate", "", *[f"- {g['line']}" for g in gates], ""]
    return "\n".join(lines) + "\n"


def duel_html(r: Mapping[str, Any]) -> str:
    """A duel's report as one self-contained HTML page (no request of any kind)."""
    rr = as_round_robin(r)
    title = "ragmark duel: " + ", ".join(s["name"] for s in rr["systems"])
    gates = "".join(f"<li>{escape(g['line'])}</li>" for g in rr.get("gates") or [])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1>{pairwise_html(rr)}"
            + (f"<section id=\"gates\"><h2>Pairwise gate</h2><ul>{gates}</ul></section>"
               if gates else "") + "</body></html>\n")

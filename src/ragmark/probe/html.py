"""A probe's results as one HTML page (``ragmark report probe.json``): the rates of each
config and attack, the clean metrics, the comparisons, the gates, and the questions that
fell with the answer and the planted passage, what made the attack succeed marked.

The answers and planted passages are hostile by design (an outside image, a script, an
HTML comment): every text is escaped, the page has no script and loads nothing, so an
address an answer carries is shown, never fetched."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ragmark.probe.rates import RATES

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1d1d1f}table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid
#d0d0d7;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f3f3f6}
td.n{text-align:right;font-variant-numeric:tabular-nums}mark{background:#ffd84d}
.text{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace;
font-size:12.5px}.failed{color:#b00020;font-weight:600}.passed{color:#0a7d32}
small{color:#5f6368}
"""


def marked(text: str, marks: Sequence[str]) -> str:
    """``text`` escaped, each of ``marks`` found in it (case aside) in ``<mark>``.

    >>> marked("<b>x</b> RMK1", ["rmk1"])
    '&lt;b&gt;x&lt;/b&gt; <mark>RMK1</mark>'
    """
    found = [m for m in marks if m]
    if not found:
        return escape(text)
    pattern = re.compile("|".join(re.escape(m) for m in found), re.I)
    out, at = [], 0
    for m in pattern.finditer(text):
        out += [escape(text[at:m.start()]), f"<mark>{escape(m.group(0))}</mark>"]
        at = m.end()
    return "".join(out) + escape(text[at:])


def _cell(v: Mapping[str, Any] | None) -> str:
    if v is None:
        return "<td>—</td>"
    return (f'<td class="n">{v["value"]:.3f}<br><small>[{v["low"]:.3f}, {v["high"]:.3f}] '
            f'n={v["n"]}</small></td>')


def _config(name: str, got: Mapping[str, Any]) -> list[str]:
    head = "".join(f"<th>{escape(r)}</th>" for r in RATES)
    rows = [f"<tr><th scope=\"row\">{escape(arm)}</th><td class=\"n\">{r['targets']}</td>"
            + "".join(_cell(r.get(rate)) for rate in RATES) + "</tr>"
            for arm, r in got["attacks"].items()]
    clean = ", ".join(f"{escape(m)} {v['value']:.3f} (n={v['n']})"
                      for m, v in got.get("clean", {}).items() if v.get("value") is not None)
    return [f"<section><h2>{escape(name)}</h2><table><thead><tr><th>attack</th>"
            f"<th>targets</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
            f"<p>Clean, the same questions without planted documents: {clean or '—'}</p>"
            "</section>"]


def _fell(name: str, got: Mapping[str, Any], data: Mapping[str, Any]) -> list[str]:
    won = [o for o in got["outcomes"] if o.get("success")]
    if not won:
        return []
    rows = []
    questions = data.get("questions", {})
    for o in won:
        arm = f"{o['attack']}:{o['style']}" if o["style"] else o["attack"]
        shown = o.get("shown", {})
        marks = [*shown.get("addresses", ()), shown.get("canary") or "",
                 shown.get("wrong_answer") or ""]
        answer = data.get("answers", {}).get(name, {}).get(arm, {}).get(o["question_id"])
        planted = data.get("planted", {}).get(arm, {}).get(o["question_id"], {})
        passage = (planted.get("texts") or [""])[0]
        rows.append(
            f"<tr><td>{escape(arm)}</td><td>{escape(o['question_id'])}<br><small>"
            f"{escape(str(questions.get(o['question_id'], '')))}</small></td>"
            f"<td class=\"n\">{escape(', '.join(map(str, o['ranks'])) or '-')}</td>"
            f"<td class=\"text\">{marked(answer or '', marks)}</td>"
            f"<td class=\"text\">{marked(passage, marks)}</td></tr>")
    return [f"<section><h2>Questions that fell: {escape(name)} ({len(won)})</h2><table>"
            "<thead><tr><th>attack</th><th>question</th><th>planted at rank</th>"
            "<th>answer</th><th>planted passage</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>"]


def render(data: Mapping[str, Any]) -> str:
    """The page of a probe's results (its JSON form, as ``ragmark probe`` writes it)."""
    p = data["probe"]
    title = f"ragmark probe: {p['dataset']['name']}"
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p>{len(p['targets'])} target questions (seed {p['seed']}); attacks "
             f"{escape(', '.join(p['arms']))}; configs {escape(', '.join(p['configs']))}. "
             "Each rate with its 95% bootstrap interval and the targets it covers; success "
             "is the canary, the wrong answer or an address on the outside host in the "
             "answer.</p>"]
    for name, got in data["configs"].items():
        parts += _config(name, got)
    if data.get("comparisons"):
        rows = "".join(
            f"<tr><td>{escape(c['attack'])}</td><td>{escape(c['config'])} vs "
            f"{escape(c['baseline'])}</td><td class=\"n\">{c['pairs']}</td>"
            f"<td class=\"n\">{c['difference']:+.3f}</td><td class=\"n\">{c['p_value']:.3g}"
            "</td></tr>" for c in data["comparisons"])
        parts.append("<section><h2>Against the first config</h2><table><thead><tr>"
                     "<th>attack</th><th>configs</th><th>pairs</th><th>difference in "
                     "success</th><th>p (paired permutation)</th></tr></thead><tbody>"
                     f"{rows}</tbody></table></section>")
    for g in data.get("gates", []):
        state = "failed" if g["failed"] else "passed"
        parts.append(f'<p class="{state}">Gate {escape(g["gate"])}: {state} '
                     f'<small>({escape(g["why"])})</small></p>')
    for name, got in data["configs"].items():
        parts += _fell(name, got, data)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            + "".join(parts) + "</body></html>\n")

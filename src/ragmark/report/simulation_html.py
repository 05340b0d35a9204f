"""A simulation's report as one HTML page (``ragmark report sim.json``): each config's
endings and conversation scores with their intervals, the paired comparison and the
gates, then every scenario's conversation with each config, turn by turn — what the
simulated user wrote, what the system answered (or how it failed), the passages it
retrieved, its latency — beside the conversation's scores and how it ended.

Every text on the page came from a model or a user (scenarios, simulated turns,
answers): all of it is escaped. The page loads nothing; its one script filters the
conversations as you type, and shows only the scenarios whose ending differs between
the configs when asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ragmark.report.simulation import ENDINGS, NAMES

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1d1d1f}table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid
#d0d0d7;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f3f3f6}
td.n{text-align:right;font-variant-numeric:tabular-nums}small{color:#5f6368}
.failed{color:#b00020;font-weight:600}.passed{color:#0a7d32}
.scenario{border-top:1px solid #d0d0d7;padding:.5rem 0}.turn{margin:.4rem 0 .4rem 1rem}
.who{font-weight:600}.text{white-space:pre-wrap;word-break:break-word}
.error{color:#b00020}.goal_reached{color:#0a7d32}.gave_up,.simulator_failed{color:#b00020}
.max_turns{color:#8a5a00}[hidden]{display:none}
"""

JS = """
(function(){
var box=document.getElementById('filter'),only=document.getElementById('differ');
function apply(){var q=box.value.toLowerCase(),n=0;
document.querySelectorAll('.scenario').forEach(function(s){
var show=s.textContent.toLowerCase().indexOf(q)>=0&&(!only.checked||s.dataset.differ==='1');
s.hidden=!show;if(show){n++;}});
document.getElementById('shown').textContent=n;}
box.addEventListener('input',apply);only.addEventListener('change',apply);apply();})();
"""


def _mean(r: Mapping[str, Any] | None, digits: int = 2) -> str:
    """A metric's mean, interval and coverage, or that it has none."""
    if r is None:
        return "<td>—</td>"
    n = r["n"] + r["missing"]
    if r["mean"] is None:
        return f"<td>none <small>(0 of {n})</small></td>"
    iv = r["interval"]
    shown = "" if iv is None else f" [{iv[0]:.{digits}f}, {iv[1]:.{digits}f}]"
    return (f'<td class="n">{r["mean"]:.{digits}f}<small>{shown} {r["n"]} of {n}</small>'
            "</td>")


def _configs(configs: Sequence[Mapping[str, Any]]) -> str:
    """One row a config: its endings, the simulated users' verdict, the judged scores."""
    rows = []
    for c in configs:
        s = c["summary"]
        ended = ", ".join(f"{escape(ENDINGS.get(k, k))} {v}" for k, v in sorted(
            s["outcomes"].items(), key=lambda kv: -kv[1]))
        iv = s["goal_reached_interval"]
        reached = "—" if s["goal_reached"] is None else (
            f"{s['goal_reached']:.0%}" + ("" if iv is None else
                                          f" <small>[{iv[0]:.0%}, {iv[1]:.0%}]</small>"))
        role = "—" if s["role_adherence"] is None else f"{s['role_adherence']:.0%}"
        m = c.get("conversation_metrics") or {}
        rows.append(f"<tr><th scope=\"row\">{escape(str(c['system']))}</th>"
                    f"<td class=\"n\">{s['conversations']}</td><td class=\"n\">{s['turns']}"
                    f"</td><td>{ended}</td><td class=\"n\">{reached}</td>"
                    + "".join(_mean(m.get(k)) for k in NAMES)
                    + f"<td class=\"n\">{role}</td><td>{escape(str(c['simulator']))}</td></tr>")
    head = "".join(f"<th>{escape(h)}</th>" for h in (
        "config", "conversations", "turns", "how they ended", "goal reached (the user's "
        "verdict)", *NAMES.values(), "simulator role adherence", "simulator"))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _turn_metrics(configs: Sequence[Mapping[str, Any]]) -> str:
    """Each config's per-turn metrics (simulate --metrics), a row a config."""
    names = list(dict.fromkeys(m for c in configs
                               for m in ((c.get("turn_metrics") or {}).get("metrics") or {})))
    if not names:
        return ""
    rows = []
    for c in configs:
        got = (c.get("turn_metrics") or {}).get("metrics") or {}
        cells = [_mean(got.get(m), 3) for m in names]
        rows.append(f"<tr><th scope=\"row\">{escape(str(c['system']))}</th>{''.join(cells)}"
                    "</tr>")
    head = "".join(f"<th>{escape(m)}</th>" for m in names)
    return ("<h2>Per turn</h2><p>Every turn scored as a question of a run (means over the "
            "turns with a value, their 95% intervals, how many they cover).</p><table>"
            f"<thead><tr><th>config</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
            "</table>")


def _comparison(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    body = []
    for r in rows:
        iv = r["interval"]
        diff = "—" if r["difference"] is None else f"{r['difference']:+.3f}"
        body.append(f"<tr><td>{escape(str(r['config']))} vs {escape(str(r['baseline']))}"
                    f"</td><td>{escape(r['metric'])}</td><td class=\"n\">{diff}</td>"
                    f"<td class=\"n\">{'—' if iv is None else f'[{iv[0]:+.3f}, {iv[1]:+.3f}]'}"
                    f"</td><td class=\"n\">{_p(r.get('p_holm'))}</td><td class=\"n\">"
                    f"{r['pairs']}</td><td class=\"n\">{r['left_out']}</td></tr>")
    return ("<h2>Paired by scenario</h2><table><thead><tr><th>configs</th><th>metric</th>"
            "<th>difference</th><th>95% interval</th><th>p (Holm)</th><th>scenarios</th>"
            "<th>left out</th></tr></thead><tbody>" + "".join(body) + "</tbody></table>")


def _p(p: float | None) -> str:
    return "—" if p is None else f"{p:.3g}"


def _turn(t: Mapping[str, Any]) -> str:
    user = (f'<div class="turn"><span class="who">User:</span> '
            f'<span class="text">{escape(str(t["user"]))}</span></div>')
    if "error" in t:
        return user + (f'<div class="turn error"><span class="who">The system failed:</span> '
                       f'<span class="text">{escape(str(t["error"]))}</span></div>')
    contexts = ", ".join(escape(str(c)) for c in t.get("contexts") or []) or "none"
    scores = "".join(f"; {escape(m)} " + ("missing" if v is None else f"{v:.3f}")
                     for m, v in (t.get("metrics") or {}).items())
    return user + (f'<div class="turn"><span class="who">Assistant:</span> '
                   f'<span class="text">{escape(str(t["answer"]))}</span><br><small>'
                   f'passages: {contexts}; {t["latency_s"]:.2f} s{scores}</small></div>')


def _conversation(config: str, conv: Mapping[str, Any]) -> str:
    """One config's conversation for a scenario: how it ended, its scores, its turns."""
    ending = ENDINGS.get(conv["outcome"], conv["outcome"])
    why = f" — {escape(str(conv['reason']))}" if conv.get("reason") else ""
    scores = []
    for m, name in NAMES.items():
        got = (conv.get("metrics") or {}).get(m) or {}
        scores.append(f"{escape(name.split(' (')[0])} " + (
            f"{got['value']:.2f}" if got.get("value") is not None
            else f"missing ({escape(str(got.get('reason') or 'not judged'))})"))
    turns = "".join(_turn(t) for t in conv.get("transcript") or [])
    return (f"<details open><summary><b>{escape(config)}</b>: <span class=\""
            f"{escape(conv['outcome'])}\">{escape(ending)}</span>{why} after {conv['turns']} "
            f"turn{'s' * (conv['turns'] != 1)}; {'; '.join(scores)}</summary>{turns}</details>")


def _scenarios(configs: Sequence[Mapping[str, Any]]) -> str:
    """Each scenario with every config's conversation, in the scenarios' order."""
    order: dict[str, str] = {}
    for c in configs:
        for conv in c["conversations"]:
            order.setdefault(conv["id"], str(conv.get("scenario", "")))
    parts = []
    for sid, text in order.items():
        convs = [(str(c["system"]), conv) for c in configs for conv in c["conversations"]
                 if conv["id"] == sid]
        differ = len({conv["outcome"] for _, conv in convs}) > 1
        parts.append(f'<section class="scenario" data-differ="{int(differ)}"><h3>'
                     f"{escape(sid)}</h3><p class=\"text\">{escape(text)}</p>"
                     + "".join(_conversation(name, conv) for name, conv in convs)
                     + "</section>")
    return "".join(parts)


def render(data: Mapping[str, Any]) -> str:
    """The page of a simulation's report (as ``ragmark simulate --output`` writes it)."""
    configs = data["configs"]
    title = (f"ragmark simulate: {data['scenarios']} scenario{'s' * (data['scenarios'] != 1)}"
             f", {len(configs)} config{'s' * (len(configs) != 1)}")
    gates = "".join(f'<p class="{"passed" if g["ok"] else "failed"}">Gate '
                    f'{"held" if g["ok"] else "failed"}: {escape(g["text"])}</p>'
                    for g in data.get("gates") or [])
    several = len(configs) > 1
    parts = [f"<h1>{escape(title)}</h1>",
             "<p>How each conversation ended is the simulated user's own verdict; goal "
             "completion and knowledge retention are judged (means over the conversations "
             "with a value, with their 95% intervals and how many they cover).</p>",
             _configs(configs), _turn_metrics(configs),
             _comparison(data.get("comparison") or []), gates,
             "<h2>Conversations</h2><p><label>Show the scenarios whose text contains "
             '<input id="filter" type="search" autocomplete="off"></label> '
             f'<label{"" if several else " hidden"}><input id="differ" type="checkbox"> '
             "only those whose ending differs between the configs</label> "
             '<small><span id="shown"></span> shown</small></p>',
             _scenarios(configs)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            + "".join(parts) + f"<script>{JS}</script></body></html>\n")

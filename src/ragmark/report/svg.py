"""Small inline SVG plots for the HTML report: no library, no external resource.

Every plot is a ``<figure>`` whose ``<svg>`` has a ``role="img"`` and a ``<title>``, and a
``<figcaption>`` that says what it shows; the numbers are in a table beside it. Colours
are the Okabe-Ito palette (distinguishable with the common colour-vision deficiencies),
and every series also differs in marker shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
MARKERS = ("circle", "square", "diamond", "triangle")


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


Series = dict[str, int]
"""A report's configs by name -> their series number: a config keeps its colour and
marker from plot to plot (whatever order or subset a plot shows)."""


def _number(label: str, i: int, series: Series | None) -> int:
    return series.get(label, i) if series else i


def marker(i: int, x: float, y: float, r: float = 4.0) -> str:
    """A marker of series ``i`` (circle, square, diamond, triangle, ...) at (x, y)."""
    c = colour(i)
    kind = MARKERS[i % len(MARKERS)]
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{c}"/>'
    if kind == "square":
        return (f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" '
                f'height="{2 * r:.1f}" fill="{c}"/>')
    if kind == "diamond":
        pts = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"
    else:
        pts = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y + r:.1f} {x - r:.1f},{y + r:.1f}"
    return f'<polygon points="{pts}" fill="{c}"/>'


def _figure(title: str, caption: str, width: int, height: int, body: str) -> str:
    return (f'<figure class="plot"><svg role="img" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}">'
            f"<title>{escape(title)}</title>{body}</svg>"
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def _scale(lo: float, hi: float, a: float, b: float):  # type: ignore[no-untyped-def]
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def forest(title: str, rows: Sequence[tuple[str, float, float, float]], caption: str,
           series: Series | None = None) -> str:
    """One row per config: the mean difference to the baseline and its interval
    ``(label, low, mean, high)``; a vertical line at 0. A row's colour and marker are its
    config's (``series``), else its place."""
    width, left, right, row_h = 560, 150, 20, 26
    height = 30 + row_h * len(rows)
    lo = min([0.0] + [r[1] for r in rows])
    hi = max([0.0] + [r[3] for r in rows])
    pad = (hi - lo) * 0.08 or 0.05
    x = _scale(lo - pad, hi + pad, left, width - right)
    parts = [f'<line x1="{x(0):.1f}" y1="8" x2="{x(0):.1f}" y2="{height - 18}" '
             'stroke="#666" stroke-dasharray="3,3"/>',
             f'<text x="{x(0):.1f}" y="{height - 4}" text-anchor="middle" '
             'font-size="11">0</text>']
    for i, (label, low, mean, high) in enumerate(rows):
        y = 20 + row_h * i
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" '
                     f'font-size="12">{escape(label)}</text>')
        k = _number(label, i + 1, series)
        parts.append(f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" '
                     f'stroke="{colour(k)}" stroke-width="2"/>')
        parts.append(marker(k, x(mean), y))
    for v in (lo - pad, hi + pad):
        parts.append(f'<text x="{x(v):.1f}" y="{height - 4}" text-anchor="middle" '
                     f'font-size="10" fill="#444">{v:+.3f}</text>')
    return _figure(title, caption, width, height, "".join(parts))


def strips(title: str, series: Sequence[tuple[str, Sequence[float]]], caption: str,
           lo: float = 0.0, hi: float = 1.0, numbers: Series | None = None) -> str:
    """Per-question values of each config on one axis (one row per config), so a mean
    that moved because of a few questions shows as a few points."""
    width, left, right, row_h = 560, 150, 20, 34
    height = 34 + row_h * len(series)
    x = _scale(lo, hi, left, width - right)
    parts = []
    for i, (label, values) in enumerate(series):
        y = 22 + row_h * i
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" '
                     f'font-size="12">{escape(label)} (n={len(values)})</text>')
        parts.append(f'<line x1="{left}" y1="{y}" x2="{width - right}" y2="{y}" '
                     'stroke="#ddd"/>')
        for j, v in enumerate(values):  # a little vertical jitter, fixed by position
            dy = ((j * 7919) % 13 - 6) * 1.1
            parts.append(f'<circle cx="{x(v):.1f}" cy="{y + dy:.1f}" r="2.5" '
                         f'fill="{colour(_number(label, i, numbers))}" '
                         'fill-opacity="0.55"/>')
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(f'<text x="{x(v):.1f}" y="{height - 4}" text-anchor="middle" '
                     f'font-size="10" fill="#444">{v:g}</text>')
    return _figure(title, caption, width, height, "".join(parts))


MANY_KS = 12
"""Up to this depth every k is shown; deeper, the cutoffs of :func:`cutoffs_shown`."""


def cutoffs_shown(k_max: int) -> list[int]:
    """The cutoffs a chart labels and a table lists for rankings ``k_max`` deep: every k
    up to :data:`MANY_KS`, else 1, 2, 3, 5, 10, 20, 50, ... and ``k_max`` itself.

    >>> cutoffs_shown(5), cutoffs_shown(100)
    ([1, 2, 3, 4, 5], [1, 2, 3, 5, 10, 20, 50, 100])
    >>> cutoffs_shown(1000)[-3:], cutoffs_shown(37)
    ([200, 500, 1000], [1, 2, 3, 5, 10, 20, 37])
    """
    if k_max <= MANY_KS:
        return list(range(1, k_max + 1))
    out, step = [1, 2, 3, 5], 10
    while step < k_max:
        out += [k for k in (step, 2 * step, 5 * step) if k < k_max]
        step *= 10
    return sorted(set(out)) + [k_max]


def curves(title: str, series: Sequence[tuple[str, Sequence[float | None]]],
           caption: str, ylabel: str, numbers: Series | None = None) -> str:
    """metric@k for k = 1..K, one line (colour, marker, dash) per config; a missing
    value breaks the line (never drawn as 0)."""
    width, height, left, right, top, bottom = 560, 300, 50, 140, 16, 36
    k_max = max((len(v) for _, v in series), default=1)
    ticks = cutoffs_shown(k_max)
    if k_max > MANY_KS:  # deep rankings: k on a log scale, so k = 1 to 10 stay apart
        at = _scale(0.0, math.log(k_max), left, width - right)

        def x(k: float) -> float:
            return at(math.log(k))
    else:
        x = _scale(1, max(k_max, 2), left, width - right)
    y = _scale(0, 1, height - bottom, top)
    dashes = ("", "6,3", "2,3", "8,3,2,3")
    parts = [f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - right}" y2="{y(0):.1f}" '
             'stroke="#444"/>',
             f'<line x1="{left}" y1="{y(0):.1f}" x2="{left}" y2="{y(1):.1f}" stroke="#444"/>',
             f'<text x="12" y="{top + 8}" font-size="11">{escape(ylabel)}</text>']
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" '
                     f'font-size="10">{tick:g}</text>')
    for k in ticks:  # a label a shown cutoff, never one a k (100 would overprint)
        parts.append(f'<text x="{x(k):.1f}" y="{height - bottom + 14}" '
                     f'text-anchor="middle" font-size="10">{k}</text>')
    marked = set(ticks)
    for row, (label, values) in enumerate(series):
        i = _number(label, row, numbers)
        runs: list[list[str]] = [[]]
        for k, v in enumerate(values, start=1):
            if v is None:
                runs.append([])
                continue
            runs[-1].append(f"{x(k):.1f},{y(v):.1f}")
            if k in marked:
                parts.append(marker(i, x(k), y(v), 3.2))
        for pts in runs:
            if len(pts) > 1:
                parts.append(f'<polyline points="{" ".join(pts)}" fill="none" '
                             f'stroke="{colour(i)}" stroke-width="1.8" '
                             f'stroke-dasharray="{dashes[i % len(dashes)]}"/>')
        ly = top + 10 + 18 * row
        parts.append(marker(i, width - right + 14, ly, 3.5))
        parts.append(f'<text x="{width - right + 24}" y="{ly + 4}" font-size="11">'
                     f"{escape(label)}</text>")
    return _figure(title, caption, width, height, "".join(parts))


def trend(title: str, points: Sequence[tuple[str, float, float, float, bool]],
          caption: str) -> str:
    """A metric over windows: each window (label, mean, low, high, flagged) a point with
    its interval, oldest left; a flagged window is drawn as an open red diamond."""
    width, height, left, right, top, bottom = 560, 200, 56, 16, 16, 36
    lo = min(p[2] for p in points)
    hi = max(p[3] for p in points)
    y = _scale(lo, hi, height - bottom, top)
    step = (width - left - right) / max(len(points), 1)
    parts = [f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" '
             f'y2="{height - bottom}" stroke="#888"/>',
             f'<text x="4" y="{y(hi) + 4:.1f}" font-size="10">{hi:.3g}</text>']
    if f"{lo:.3g}" != f"{hi:.3g}":  # a flat line has one value to say
        parts.append(f'<text x="4" y="{y(lo) + 4:.1f}" font-size="10">{lo:.3g}</text>')
    path = []
    for i, (label, mean, low, high, flagged) in enumerate(points):
        x = left + step * (i + 0.5)
        path.append(f"{x:.1f},{y(mean):.1f}")
        parts.append(f'<line x1="{x:.1f}" y1="{y(low):.1f}" x2="{x:.1f}" y2="{y(high):.1f}" '
                     f'stroke="{colour(0)}"/>')
        if flagged:
            r = 6.0
            pts = (f"{x:.1f},{y(mean) - r:.1f} {x + r:.1f},{y(mean):.1f} "
                   f"{x:.1f},{y(mean) + r:.1f} {x - r:.1f},{y(mean):.1f}")
            parts.append(f'<polygon points="{pts}" fill="none" stroke="{PALETTE[5]}" '
                         'stroke-width="2"><title>drift</title></polygon>')
        else:
            parts.append(marker(0, x, y(mean)))
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 14}" font-size="10" '
                     f'text-anchor="middle">{escape(label)}</text>')
    parts.insert(0, f'<polyline points="{" ".join(path)}" fill="none" stroke="#bbb"/>')
    return _figure(title, caption, width, height, "".join(parts))
